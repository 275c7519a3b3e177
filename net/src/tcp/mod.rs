//! TCP: [`TcpListener`] and its [`Incoming`] connections, [`TcpStream`],
//! and a stream's halves.

mod accept;
mod incoming;
mod listener;
mod owned_split;
mod split;
mod stream;

pub use incoming::Incoming;
pub use listener::TcpListener;
pub use owned_split::{OwnedReadHalf, OwnedWriteHalf};
pub use split::{ReadHalf, WriteHalf};
pub use stream::TcpStream;
