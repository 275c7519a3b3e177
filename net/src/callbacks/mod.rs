//! The lesson's callback `Reactor`, on ioloop: a [`Handler`] whose
//! `on_connect`, `on_data` and `on_disconnect` are called as things happen,
//! a [`Connection`] with its inbuf, outbuf and
//! [`queue_send`](Connection::queue_send), and [`serve`], which runs one
//! handler per connection, each on a task of its own.
//!
//! It is the other way of writing what [`StreamReader`](crate::io::StreamReader)
//! and [`StreamWriter`](crate::io::StreamWriter) write as `async fn` code,
//! on the same runtime and the same buffers: here the library calls the
//! handler when bytes arrive, there the code calls the library and waits.

mod connection;
mod handler;
mod server;

pub use connection::Connection;
pub use handler::{Disconnect, Handler};
pub use server::{Config, serve, serve_connection, serve_with};
