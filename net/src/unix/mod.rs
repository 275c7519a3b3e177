//! Unix domain sockets: [`UnixListener`] and its [`Incoming`] connections,
//! [`UnixStream`] and its halves, [`UnixDatagram`], and [`UCred`]. The TCP
//! and UDP API with a [`ToUnixAddr`] for addresses (a path, `"\0name"` in
//! Linux's abstract namespace, or std's [`SocketAddr`]). Unlike TCP: a
//! bound socket's file outlives it; sends never raise `SIGPIPE`; a full
//! backlog or datagram queue, which raises no event, is tried again on a
//! timer; reads clear readiness only on `WouldBlock`, since a read may stop
//! short at a message that carried descriptors.

mod addr;
mod datagram;
mod listener;
mod stream;
pub(crate) mod sys;
#[cfg(any(target_os = "linux", target_os = "android"))]
mod ucred;

pub use std::os::unix::net::SocketAddr;

pub use addr::ToUnixAddr;
pub use datagram::UnixDatagram;
pub use listener::{Incoming, UnixListener};
pub use stream::{OwnedReadHalf, OwnedWriteHalf, ReadHalf, UnixStream, WriteHalf};
#[cfg(any(target_os = "linux", target_os = "android"))]
pub use ucred::UCred;
