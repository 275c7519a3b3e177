//! TCP: [`TcpListener`] and its [`Incoming`] connections, [`TcpStream`],
//! and a stream's halves.

mod accept;
mod incoming;
mod listener;
mod split;
mod stream;

pub use incoming::Incoming;
pub use listener::TcpListener;
pub use split::{OwnedReadHalf, OwnedWriteHalf, ReadHalf, WriteHalf};
pub use stream::TcpStream;
