//! The lesson's callback `Reactor`, on ioloop: a [`Handler`] whose
//! `on_connect`, `on_data` and `on_disconnect` are called as things happen,
//! a [`Connection`] with its inbuf and outbuf and
//! [`queue_send`](Connection::queue_send), and [`serve`], which runs one
//! handler per connection.
//!
//! It is the other way of writing what [`StreamReader`](crate::io::StreamReader)
//! and [`StreamWriter`](crate::io::StreamWriter) write as `async fn` code:
//! here the library calls the handler when bytes arrive, there the code
//! calls the library and waits. Both run on the same runtime; a
//! connection here is one task whose loop is the lesson's `_read` and
//! `_write` (see `driver` for how its `sel.modify` maps onto the reactor).
//!
//! | the lesson (and asyncio) | here |
//! |---|---|
//! | `class LineEchoServer(Reactor)` overriding `on_connect` / `on_data` / `on_disconnect` (asyncio: a `Protocol`) | `impl` [`Handler`] |
//! | `Connection`: `addr`, `inbuf`, `outbuf`, `last_seen` | [`Connection`]: [`peer_addr`](Connection::peer_addr), [`inbuf`](Connection::inbuf), [`outbuf`](Connection::outbuf), [`last_seen`](Connection::last_seen) |
//! | `del conn.inbuf[: i + 1]` | [`Connection::consume`] |
//! | `Reactor.queue_send(conn, data)` | [`Connection::queue_send`] |
//! | `Reactor.close(conn)` (asyncio: `transport.close()`) | [`Connection::close`]: the outbuf is sent first |
//! | `sel.modify(..., READ \| WRITE)` while `outbuf` has bytes | nothing to write: the driver's `poll_write` leaves the WRITE waker only then |
//! | `idle_pass`, `IDLE_DEADLINE`, `select(timeout=1.0)` | [`Config::idle_timeout`], one timer per connection |
//! | `Reactor.run()` and `_accept` | [`serve`], [`serve_with`] |
//! | asyncio's `eof_received` | [`Handler::on_eof`] |
//! | (no limit in the lesson) | [`Config::max_inbuf`], [`Handler::on_inbuf_full`] |
//!
//! Files: `handler` ([`Handler`], [`Disconnect`]), `connection`
//! ([`Connection`] and its buffers' I/O), `server` ([`Config`], [`serve`],
//! [`serve_with`], [`serve_connection`]), `driver` (a connection's task).
//!
//! # Examples
//!
//! The lesson's `LineEchoServer`, without its limits (see
//! `examples/line_echo_callbacks/` for the whole of it):
//!
//! ```
//! use futures_util::io::AsyncWriteExt;
//! use ioloop::callbacks::{Connection, Handler, serve};
//! use ioloop::io::StreamReader;
//! use ioloop::net::{TcpListener, TcpStream};
//!
//! struct LineEcho;
//!
//! impl Handler for LineEcho {
//!     fn on_connect(&mut self, conn: &mut Connection) {
//!         conn.queue_send(b"Hello!\n");
//!     }
//!     fn on_data(&mut self, conn: &mut Connection) {
//!         while let Some(end) = conn.inbuf().iter().position(|&b| b == b'\n') {
//!             let reply = [b"[echo] ", &conn.inbuf()[..=end]].concat();
//!             conn.consume(end + 1);
//!             conn.queue_send(&reply);
//!         }
//!     }
//! }
//!
//! ioloop::block_on(async {
//!     let listener = TcpListener::bind("127.0.0.1:0").await?;
//!     let addr = listener.local_addr()?;
//!     ioloop::spawn(serve(listener, || LineEcho));
//!     let mut client = TcpStream::connect(addr).await?;
//!     client.write_all(b"hi\n").await?;
//!     let mut reader = StreamReader::new(&client);
//!     assert_eq!(reader.read_line().await?, Some(&b"Hello!"[..]));
//!     assert_eq!(reader.read_line().await?, Some(&b"[echo] hi"[..]));
//!     Ok::<_, std::io::Error>(())
//! })
//! .unwrap();
//! ```

mod connection;
mod driver;
mod handler;
mod server;

pub use connection::Connection;
pub use handler::{Disconnect, Handler};
pub use server::{Config, serve, serve_connection, serve_with};
