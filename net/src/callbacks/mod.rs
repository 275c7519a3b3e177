//! The lesson's callback `Reactor` on ioloop: a [`Handler`] called as
//! things happen, a [`Connection`] with its inbuf and outbuf, and
//! [`serve`], one handler per connection, each on its own task (where
//! [`StreamReader`](crate::io::StreamReader) code calls and waits).

mod connection;
mod handler;
mod server;

pub use connection::Connection;
pub use handler::{Disconnect, Handler};
pub use server::{Config, serve, serve_connection, serve_with};
