//! TCP: [`TcpListener`] and its [`Incoming`] connections, [`TcpStream`],
//! a stream's halves, and [`TcpSocket`], for the options that must be set
//! before binding or connecting.

// The accept loop's back-off is shared with `UnixListener`.
pub(crate) mod accept;
mod listener;
mod socket;
mod stream;

pub use listener::{Incoming, TcpListener};
pub use socket::TcpSocket;
pub use stream::{OwnedReadHalf, OwnedWriteHalf, ReadHalf, TcpStream, WriteHalf};
