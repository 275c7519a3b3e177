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
//! - [`UnixStream::peer_cred`] says who the peer process is (Linux).

mod addr;
mod datagram;
mod listener;
mod split;
mod stream;
mod sys;
#[cfg(any(target_os = "linux", target_os = "android"))]
mod ucred;

pub use std::os::unix::net::SocketAddr;

pub use addr::ToUnixAddr;
pub use datagram::UnixDatagram;
pub use listener::{Incoming, UnixListener};
pub use split::{OwnedReadHalf, OwnedWriteHalf, ReadHalf, WriteHalf};
pub use stream::UnixStream;
#[cfg(any(target_os = "linux", target_os = "android"))]
pub use ucred::UCred;
