//! `recv` and `send` on a stream socket, the two calls of every echoed
//! message, and their forms for uninitialized and vectored buffers, as
//! plain system calls.
//!
//! std (and mio through it) calls libc's `recv` and `send`. Those are
//! thread cancellation points: in a process with more than one thread
//! (the stall detector's watchdog, a blocking-pool worker, `--loops 2`)
//! glibc brackets each one with its asynchronous-cancellation switch,
//! about 45 instructions a call on top of the wrapper's own. On Linux these
//! go through rustix instead, which makes the syscall itself: the same
//! kernel call, the same errors, none of the wrapper. Elsewhere they are
//! std's.

use std::io::{self, IoSlice};
use std::mem::MaybeUninit;

/// `recv(2)` with no flags: bytes read, 0 at end of stream.
#[cfg(any(target_os = "linux", target_os = "android"))]
pub(crate) fn recv(socket: &impl std::os::fd::AsFd, buf: &mut [u8]) -> io::Result<usize> {
    // The second count is the datagram's full length (for `MSG_TRUNC`);
    // on a stream it is the first.
    let (read, _) = rustix::net::recv(socket, buf, rustix::net::RecvFlags::empty())?;
    Ok(read)
}

/// `send(2)` with `MSG_NOSIGNAL`: a peer that has gone is an error for the
/// writer (`BrokenPipe`), never a `SIGPIPE` for the process.
#[cfg(any(target_os = "linux", target_os = "android"))]
pub(crate) fn send(socket: &impl std::os::fd::AsFd, buf: &[u8]) -> io::Result<usize> {
    Ok(rustix::net::send(
        socket,
        buf,
        rustix::net::SendFlags::NOSIGNAL,
    )?)
}

/// `recv(2)` into bytes not yet initialized (hyper's read buffers): the
/// kernel only writes into them. Returns how many it wrote, from the start.
#[cfg(any(target_os = "linux", target_os = "android"))]
pub(crate) fn recv_uninit(
    socket: &impl std::os::fd::AsFd,
    buf: &mut [MaybeUninit<u8>],
) -> io::Result<usize> {
    let ((filled, _), _) = rustix::net::recv(socket, buf, rustix::net::RecvFlags::empty())?;
    Ok(filled.len())
}

/// `sendmsg(2)` from several buffers, with `MSG_NOSIGNAL` (`writev(2)`
/// cannot take the flag).
#[cfg(any(target_os = "linux", target_os = "android"))]
pub(crate) fn send_vectored(
    socket: &impl std::os::fd::AsFd,
    bufs: &[IoSlice<'_>],
) -> io::Result<usize> {
    let mut no_control = rustix::net::SendAncillaryBuffer::default();
    Ok(rustix::net::sendmsg(
        socket,
        bufs,
        &mut no_control,
        rustix::net::SendFlags::NOSIGNAL,
    )?)
}

/// `recv` through std where there is no rustix.
#[cfg(not(any(target_os = "linux", target_os = "android")))]
pub(crate) fn recv<S>(socket: &S, buf: &mut [u8]) -> io::Result<usize>
where
    for<'a> &'a S: io::Read,
{
    io::Read::read(&mut &*socket, buf)
}

/// `send` through std, where there is no rustix. std's sockets raise no
/// `SIGPIPE` there either (`SO_NOSIGPIPE` on Apple's, none on Windows);
/// Unix sockets send through `unix::sys::send`.
#[cfg(not(any(target_os = "linux", target_os = "android")))]
pub(crate) fn send<S>(socket: &S, buf: &[u8]) -> io::Result<usize>
where
    for<'a> &'a S: io::Write,
{
    io::Write::write(&mut &*socket, buf)
}

/// `recv_uninit` through socket2 where there is no rustix.
#[cfg(not(any(target_os = "linux", target_os = "android")))]
pub(crate) fn recv_uninit(
    socket: &mio::net::TcpStream,
    buf: &mut [MaybeUninit<u8>],
) -> io::Result<usize> {
    socket2::SockRef::from(socket).recv(buf)
}

/// `send_vectored` through socket2 where there is no rustix (std's sockets
/// raise no `SIGPIPE` there).
#[cfg(not(any(target_os = "linux", target_os = "android")))]
pub(crate) fn send_vectored(
    socket: &mio::net::TcpStream,
    bufs: &[IoSlice<'_>],
) -> io::Result<usize> {
    socket2::SockRef::from(socket).send_vectored(bufs)
}
