//! TCP: [`TcpListener`] and its [`Incoming`] connections, [`TcpStream`],
//! and a stream's halves.

mod accept;
mod listener;
mod split;
mod stream;

pub use listener::{Incoming, TcpListener};
pub use split::{OwnedReadHalf, OwnedWriteHalf, ReadHalf, WriteHalf};
pub use stream::TcpStream;
