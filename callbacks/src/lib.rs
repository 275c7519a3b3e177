//! The lesson's callback `Reactor` on ioloop: a [`Handler`] called as
//! things happen, a [`Connection`] with its inbuf and outbuf, and
//! [`serve`], one handler per connection, each on its own task (where
//! [`StreamReader`](ioloop_net::io::StreamReader) code calls and waits).
//! The facade re-exports it as `ioloop::callbacks`.
//!
//! A crate of its own, one layer over ioloop-net: it uses only what net
//! makes public (its sockets, and the buffers `StreamReader` and
//! `StreamWriter` keep, [`InBuf`](ioloop_net::io::InBuf) and
//! [`OutBuf`](ioloop_net::io::OutBuf)), as a layer of your own would.

#![forbid(unsafe_code)]

mod connection;
mod handler;
mod server;

pub use connection::Connection;
pub use handler::{Disconnect, Handler};
pub use server::{Config, serve, serve_connection, serve_with};
