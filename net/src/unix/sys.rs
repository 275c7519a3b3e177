//! What the Unix sockets share: addresses named by paths (abstract names
//! included), sends that never raise `SIGPIPE`, and the peeks std keeps
//! unstable; and the streams and listeners, the OS's or, inside a
//! simulation, the simulated network's (`sys.rs`'s `Either`).

#[cfg(any(target_os = "linux", target_os = "android"))]
use std::ffi::OsStr;
use std::io;
use std::net::Shutdown;
#[cfg(target_os = "android")]
use std::os::android::net::SocketAddrExt;
use std::os::fd::{AsFd, AsRawFd};
#[cfg(target_os = "linux")]
use std::os::linux::net::SocketAddrExt;
#[cfg(any(target_os = "linux", target_os = "android"))]
use std::os::unix::ffi::OsStrExt;
use std::os::unix::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use nix::sys::socket::{MsgFlags, recv};
use socket2::{SockAddr, SockRef};

use crate::sys::Either;
use crate::syscall::{Simulated, Target};

/// The first pause before trying again what no readiness event will
/// announce (a connect to a full backlog, a send to a full datagram queue),
/// and the longest: the delay doubles in between.
pub(crate) const FIRST_RETRY: Duration = Duration::from_millis(1);
pub(crate) const MAX_RETRY: Duration = Duration::from_millis(100);

/// The flags of every send. std and mio write to a Unix stream with
/// `write(2)`, which raises `SIGPIPE` once the peer has gone, killing a
/// process that did not ignore it (a C program embedding us); `send(2)`
/// with `MSG_NOSIGNAL` reports `EPIPE` instead.
#[cfg(not(target_vendor = "apple"))]
const SEND_FLAGS: libc::c_int = libc::MSG_NOSIGNAL;
/// Apple's systems have no `MSG_NOSIGNAL`: [`no_sigpipe`] sets the socket
/// option that does its work.
#[cfg(target_vendor = "apple")]
const SEND_FLAGS: libc::c_int = 0;

/// Prepares a new socket for [`send`] and [`send_to`]: on Apple's systems,
/// `SO_NOSIGPIPE`; elsewhere the flag on each send is enough.
pub(crate) fn no_sigpipe(socket: &impl AsFd) -> io::Result<()> {
    #[cfg(target_vendor = "apple")]
    SockRef::from(socket).set_nosigpipe(true)?;
    #[cfg(not(target_vendor = "apple"))]
    let _ = socket;
    Ok(())
}

/// On Linux, the stream sends of syscall.rs, which pass `MSG_NOSIGNAL`
/// already.
#[cfg(any(target_os = "linux", target_os = "android"))]
pub(crate) use crate::syscall::{send, send_vectored};

/// One `send(2)` to the connected peer, never raising `SIGPIPE`.
#[cfg(not(any(target_os = "linux", target_os = "android")))]
pub(crate) fn send(socket: &impl Simulated, buf: &[u8]) -> io::Result<usize> {
    match socket.os() {
        Some(os) => os.send_with_flags(buf, SEND_FLAGS),
        None => crate::syscall::send(socket, buf),
    }
}

/// One `sendto(2)`, never raising `SIGPIPE`.
pub(crate) fn send_to(socket: &impl AsFd, buf: &[u8], to: &SockAddr) -> io::Result<usize> {
    SockRef::from(socket).send_to_with_flags(buf, to, SEND_FLAGS)
}

/// One `sendmsg(2)` from several buffers to the connected peer, never
/// raising `SIGPIPE` (`writev(2)` cannot take the flag).
#[cfg(not(any(target_os = "linux", target_os = "android")))]
pub(crate) fn send_vectored(
    socket: &impl Simulated,
    bufs: &[io::IoSlice<'_>],
) -> io::Result<usize> {
    match socket.os() {
        Some(os) => {
            os.send_vectored_with_flags(crate::syscall::at_most_max_slices(bufs), SEND_FLAGS)
        }
        None => crate::syscall::send_vectored(socket, bufs),
    }
}

/// One `recv(2)` with `MSG_PEEK`: the bytes stay queued. Through nix,
/// which takes an initialized buffer where socket2's `peek` wants
/// uninitialized memory.
pub(crate) fn peek(socket: &impl Simulated, buf: &mut [u8]) -> io::Result<usize> {
    match socket.target() {
        Target::Os(fd) => Ok(recv(fd.as_raw_fd(), buf, MsgFlags::MSG_PEEK)?),
        Target::Sim(sim) => sim.call(|net, id| net.recv(id, buf, true)),
    }
}

/// A Unix stream.
pub(crate) type Stream = Either<mio::net::UnixStream>;
/// A Unix stream listener.
pub(crate) type Listener = Either<mio::net::UnixListener>;

impl Stream {
    pub(crate) fn local_addr(&self) -> io::Result<SocketAddr> {
        self.on(|os| os.local_addr(), |net, id| net.unix_addr(id, false))
    }

    pub(crate) fn peer_addr(&self) -> io::Result<SocketAddr> {
        self.on(|os| os.peer_addr(), |net, id| net.unix_addr(id, true))
    }

    pub(crate) fn shutdown(&self, how: Shutdown) -> io::Result<()> {
        self.on(|os| os.shutdown(how), |net, id| net.shutdown(id, how))
    }
}

impl Listener {
    pub(crate) fn from_std(listener: std::os::unix::net::UnixListener) -> Listener {
        Either::Os(mio::net::UnixListener::from_std(listener))
    }

    pub(crate) fn local_addr(&self) -> io::Result<SocketAddr> {
        self.on(|os| os.local_addr(), |net, id| net.unix_addr(id, false))
    }

    pub(crate) fn accept(&self) -> io::Result<(Stream, SocketAddr)> {
        match self {
            Either::Os(os) => os.accept().map(|(s, addr)| (Either::Os(s), addr)),
            Either::Sim(sim) => {
                let (s, _) = sim.accept()?;
                let peer = s.call(|net, id| net.unix_addr(id, true))?;
                Ok((Either::Sim(s), peer))
            }
        }
    }
}

/// The next datagram's bytes and sender, left queued: `recv(2)` with
/// `MSG_PEEK` for the bytes, then socket2's `peek_sender` for the address.
///
/// Two calls, since no safe one does both: socket2's `recvmsg` wants
/// uninitialized buffers, and nix's reads an address the kernel did not
/// write when the sender is unnamed. Both peek at the head of the queue,
/// so they see the same datagram unless another process sharing the
/// socket takes it in between.
pub(crate) fn peek_from(socket: &impl AsFd, buf: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
    let n = recv(socket.as_fd().as_raw_fd(), buf, MsgFlags::MSG_PEEK)?;
    let from = SockRef::from(socket).peek_sender()?;
    Ok((n, std_addr(&from)?))
}

/// A Unix address socket2 returned, as std's type.
fn std_addr(addr: &SockAddr) -> io::Result<SocketAddr> {
    if let Some(path) = addr.as_pathname() {
        return SocketAddr::from_pathname(path);
    }
    #[cfg(any(target_os = "linux", target_os = "android"))]
    if let Some(name) = addr.as_abstract_namespace() {
        return SocketAddr::from_abstract_name(name);
    }
    // An unbound sender: the empty path is std's unnamed address.
    SocketAddr::from_pathname("")
}

/// The address `path` names: a file, or on Linux and Android, when it
/// starts with a NUL byte, the abstract name after that byte (Python's
/// `sock.bind("\0name")`).
pub(crate) fn addr_from_path(path: &Path) -> io::Result<SocketAddr> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    if let Some(name) = path.as_os_str().as_bytes().strip_prefix(b"\0") {
        return SocketAddr::from_abstract_name(name);
    }
    SocketAddr::from_pathname(path)
}

/// Removes the file a bind just made at `addr`, when the socket bound to
/// it could not be set up after all (no runtime to register with).
pub(crate) fn remove_socket_file(addr: &SocketAddr) {
    if let Some(path) = addr.as_pathname()
        && let Err(err) = std::fs::remove_file(path)
    {
        log::debug!("removing the socket file {}: {err}", path.display());
    }
}

/// `addr` as socket2 takes it, for the calls mio does not make with a
/// `SocketAddr` (`sendto(2)`, and `connect(2)` on a datagram socket).
pub(crate) fn sock_addr(addr: &SocketAddr) -> io::Result<SockAddr> {
    if let Some(path) = addr.as_pathname() {
        return SockAddr::unix(path);
    }
    // socket2 reads a leading NUL byte as the abstract namespace.
    #[cfg(any(target_os = "linux", target_os = "android"))]
    if let Some(name) = addr.as_abstract_name() {
        let bytes = [&[0], name].concat();
        return SockAddr::unix(OsStr::from_bytes(&bytes));
    }
    let msg = "an unnamed Unix socket address names no one";
    Err(io::Error::new(io::ErrorKind::InvalidInput, msg))
}
