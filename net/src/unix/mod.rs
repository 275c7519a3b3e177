//! Unix domain sockets: [`UnixListener`] and its [`Incoming`] connections,
//! [`UnixStream`] and its halves, [`UnixDatagram`]; [`UCred`], a stream
//! peer's credentials.
//!
//! The same API as TCP and UDP, with paths for addresses: a
//! [`ToUnixAddr`] is a path, or std's [`SocketAddr`]. On Linux a path
//! whose first byte is NUL (`"\0name"`) is a name in the abstract
//! namespace, with no file behind it.
//!
//! What differs from TCP:
//!
//! - Binding creates a socket file, which outlives the socket: remove it
//!   when the server stops, or a later bind fails with `AddrInUse`.
//! - Writes are `send(2)` / `sendmsg(2)` with `MSG_NOSIGNAL` where std
//!   and mio would call `write(2)`, which on a Unix socket raises
//!   `SIGPIPE` once the peer is gone: here that is an error
//!   (`BrokenPipe`), never a signal.
//! - A connect to a listener whose backlog is full fails at once with
//!   `EAGAIN` and no event follows; [`UnixStream::connect`] tries again
//!   on a short back-off instead of failing.
//! - A full datagram queue raises no event for an unconnected sender
//!   when it drains, and its failed sends raise write events all the
//!   same: [`UnixDatagram::send_to`] tries again on a timer (1 ms,
//!   doubling to 100 ms) where a connected [`UnixDatagram::send`] waits
//!   for the kernel's event.
//! - A read may stop short with bytes still queued (where a message
//!   carried descriptors), so reads wait for an event only after
//!   `WouldBlock`, never after a short read as TCP's do.
//! - [`UnixStream::peer_cred`] says who the peer process is (Linux).

mod addr;
mod datagram;
mod listener;
mod stream;
mod sys;
#[cfg(any(target_os = "linux", target_os = "android"))]
mod ucred;

pub use std::os::unix::net::SocketAddr;

pub use addr::ToUnixAddr;
pub use datagram::UnixDatagram;
pub use listener::{Incoming, UnixListener};
pub use stream::{OwnedReadHalf, OwnedWriteHalf, ReadHalf, UnixStream, WriteHalf};
#[cfg(any(target_os = "linux", target_os = "android"))]
pub use ucred::UCred;
