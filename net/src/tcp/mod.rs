//! TCP: [`TcpListener`] and its [`Incoming`] connections, [`TcpStream`],
//! and a stream's halves.

// The accept loop's back-off is shared with `UnixListener`.
pub(crate) mod accept;
mod listener;
mod split;
mod stream;

pub use listener::{Incoming, TcpListener};
pub use split::{OwnedReadHalf, OwnedWriteHalf, ReadHalf, WriteHalf};
pub use stream::TcpStream;
