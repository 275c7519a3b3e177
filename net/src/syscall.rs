//! `recv` and `send` on a stream socket, the two calls of every echoed
//! message, their forms for uninitialized and vectored buffers, and a UDP
//! socket's datagram calls, as plain system calls.
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
use std::net::SocketAddr;
use std::os::fd::{AsFd, BorrowedFd};

use mio::net::UdpSocket;
use socket2::SockRef;

use crate::seam::Socket;

/// Where a call goes: the kernel, through the descriptor of an OS socket,
/// or the simulated network.
pub(crate) enum Target<'a> {
    Os(BorrowedFd<'a>),
    Sim(&'a Socket),
}

/// A socket the calls below take: the OS's, or one of `sys.rs`'s, which
/// may stand for a simulated socket. One `match` a call decides where it
/// goes and yields the descriptor; for an OS socket type it folds away.
pub(crate) trait Simulated {
    /// Where this socket's calls go.
    fn target(&self) -> Target<'_>;

    /// The OS socket, for its options; `None` if simulated.
    fn os(&self) -> Option<SockRef<'_>>;
}

/// Unix datagram sockets, and the UDP calls' own socket, are always the
/// OS's.
macro_rules! os_only {
    ($($T:ty),+) => {$(
        impl Simulated for $T {
            #[inline(always)]
            fn target(&self) -> Target<'_> {
                Target::Os(self.as_fd())
            }

            fn os(&self) -> Option<SockRef<'_>> {
                Some(SockRef::from(self))
            }
        }
    )+};
}
os_only!(mio::net::UnixDatagram, mio::net::UdpSocket);

/// The most slices one `sendmsg(2)` takes: `IOV_MAX`, 1,024 on Linux
/// (`UIO_MAXIOV`) and on the BSDs and macOS. More is `EMSGSIZE`.
#[cfg(any(target_os = "linux", target_os = "android"))]
pub(crate) const MAX_SLICES: usize = libc::UIO_MAXIOV as usize;
#[cfg(not(any(target_os = "linux", target_os = "android")))]
pub(crate) const MAX_SLICES: usize = 1024;

/// The first `IOV_MAX` of `bufs`: what one vectored call can take. A
/// write of more slices writes these and returns their count, as std's and
/// tokio's do, rather than failing with `EMSGSIZE`; the caller writes the
/// rest next. Every vectored send goes through here.
pub(crate) fn at_most_max_slices<'a, 'b>(bufs: &'a [IoSlice<'b>]) -> &'a [IoSlice<'b>] {
    &bufs[..bufs.len().min(MAX_SLICES)]
}

/// `recv(2)` with no flags: bytes read, 0 at end of stream (on a connected
/// UDP socket, one datagram from its peer).
#[inline]
pub(crate) fn recv(socket: &impl Simulated, buf: &mut [u8]) -> io::Result<usize> {
    match socket.target() {
        Target::Os(fd) => Ok(os::recv(fd, buf)?),
        Target::Sim(sim) => sim.call(|net, id| net.recv(id, buf, false)),
    }
}

/// `send(2)` with `MSG_NOSIGNAL`: a peer that has gone is an error for the
/// writer (`BrokenPipe`), never a `SIGPIPE` for the process (on a
/// connected UDP socket, one datagram to its peer).
#[inline]
pub(crate) fn send(socket: &impl Simulated, buf: &[u8]) -> io::Result<usize> {
    match socket.target() {
        Target::Os(fd) => Ok(os::send(fd, buf)?),
        Target::Sim(sim) => sim.call(|net, id| net.send(id, buf)),
    }
}

/// `recv(2)` into bytes not yet initialized (hyper's read buffers): the
/// kernel only writes into them. Returns how many it wrote, from the start.
/// A simulated read goes through a zeroed buffer of the same size (a
/// simulation need not be fast).
pub(crate) fn recv_uninit(
    socket: &impl Simulated,
    buf: &mut [MaybeUninit<u8>],
) -> io::Result<usize> {
    let sim = match socket.target() {
        Target::Os(fd) => return Ok(os::recv_uninit(fd, buf)?),
        Target::Sim(sim) => sim,
    };
    let mut bytes = vec![0; buf.len()];
    let n = sim.call(|net, id| net.recv(id, &mut bytes, false))?;
    for (to, from) in buf.iter_mut().zip(&bytes[..n]) {
        to.write(*from);
    }
    Ok(n)
}

/// `sendmsg(2)` from several buffers (the first `IOV_MAX` of them), with
/// `MSG_NOSIGNAL` (`writev(2)` cannot take the flag).
pub(crate) fn send_vectored(socket: &impl Simulated, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
    let bufs = at_most_max_slices(bufs);
    match socket.target() {
        Target::Os(fd) => Ok(os::send_vectored(fd, bufs)?),
        Target::Sim(sim) => sim.call(|net, id| net.send_vectored(id, bufs)),
    }
}

pub(crate) use os::{recv_from, send_to};

/// Linux and Android: rustix, the syscall itself.
#[cfg(any(target_os = "linux", target_os = "android"))]
mod os {
    use rustix::net::{RecvFlags, SendFlags};

    use super::*;

    // These return rustix's errno, which their callers convert with `?`:
    // the shape the calls had when written in them (converted here, `send`
    // cost line_echo about 15 instructions per message more).

    #[inline(always)]
    pub(super) fn recv(fd: BorrowedFd<'_>, buf: &mut [u8]) -> rustix::io::Result<usize> {
        // The second count is the datagram's full length (for `MSG_TRUNC`);
        // on a stream it is the first.
        let (read, _) = rustix::net::recv(fd, buf, RecvFlags::empty())?;
        Ok(read)
    }

    #[inline(always)]
    pub(super) fn send(fd: BorrowedFd<'_>, buf: &[u8]) -> rustix::io::Result<usize> {
        rustix::net::send(fd, buf, SendFlags::NOSIGNAL)
    }

    pub(super) fn recv_uninit(
        fd: BorrowedFd<'_>,
        buf: &mut [MaybeUninit<u8>],
    ) -> rustix::io::Result<usize> {
        let ((filled, _), _) = rustix::net::recv(fd, buf, RecvFlags::empty())?;
        Ok(filled.len())
    }

    pub(super) fn send_vectored(
        fd: BorrowedFd<'_>,
        bufs: &[IoSlice<'_>],
    ) -> rustix::io::Result<usize> {
        let mut no_control = rustix::net::SendAncillaryBuffer::default();
        rustix::net::sendmsg(fd, bufs, &mut no_control, SendFlags::NOSIGNAL)
    }

    /// `recvfrom(2)`: one datagram into `buf` (the rest of a longer one is
    /// dropped), and its sender.
    pub(crate) fn recv_from(socket: &UdpSocket, buf: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        let (read, _, from) = rustix::net::recvfrom(socket, buf, RecvFlags::empty())?;
        // An IPv4 or IPv6 socket always reports its sender, in its own family.
        let from = from.ok_or_else(|| io::Error::other("recvfrom reported no sender"))?;
        Ok((read, SocketAddr::try_from(from)?))
    }

    /// `sendto(2)`: one datagram to `target`.
    pub(crate) fn send_to(socket: &UdpSocket, buf: &[u8], target: SocketAddr) -> io::Result<usize> {
        Ok(rustix::net::sendto(
            socket,
            buf,
            SendFlags::NOSIGNAL,
            &target,
        )?)
    }
}

/// Elsewhere: socket2 and mio (std). No `SIGPIPE` there either: mio sets
/// `SO_NOSIGPIPE` on Apple's sockets, and Windows has no such signal. Unix
/// sockets send through `unix::sys::send`.
#[cfg(not(any(target_os = "linux", target_os = "android")))]
mod os {
    use std::io::{Read, Write};

    use super::*;

    pub(super) fn recv(fd: BorrowedFd<'_>, buf: &mut [u8]) -> io::Result<usize> {
        (&*SockRef::from(&fd)).read(buf)
    }

    pub(super) fn send(fd: BorrowedFd<'_>, buf: &[u8]) -> io::Result<usize> {
        (&*SockRef::from(&fd)).write(buf)
    }

    pub(super) fn recv_uninit(
        fd: BorrowedFd<'_>,
        buf: &mut [MaybeUninit<u8>],
    ) -> io::Result<usize> {
        SockRef::from(&fd).recv(buf)
    }

    pub(super) fn send_vectored(fd: BorrowedFd<'_>, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        SockRef::from(&fd).send_vectored(bufs)
    }

    pub(crate) fn recv_from(socket: &UdpSocket, buf: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        socket.recv_from(buf)
    }

    pub(crate) fn send_to(socket: &UdpSocket, buf: &[u8], target: SocketAddr) -> io::Result<usize> {
        socket.send_to(buf, target)
    }
}
