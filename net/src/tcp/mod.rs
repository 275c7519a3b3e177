//! TCP: listeners, streams, and a stream's read and write halves.
//!
//! The lesson's server, piece by piece:
//!
//! | lesson (`selectors`) | here |
//! |---|---|
//! | `sock.bind(...); sock.listen(); sel.register(sock, READ)` | [`TcpListener::bind`] |
//! | `conn, addr = sock.accept()` when the listener is readable | [`TcpListener::accept`], [`TcpListener::incoming`] |
//! | `conn.recv(n)` / `conn.send(data)` when readable / writable | [`TcpStream`]'s `AsyncRead` / `AsyncWrite` |
//! | `conn.shutdown(SHUT_WR)` | [`TcpStream::shutdown`] |
//!
//! - `listener`: [`TcpListener`], binding and accepting.
//! - `accept`: how accept errors are sorted, and the back-off when the
//!   process runs out of file descriptors.
//! - `incoming`: [`Incoming`], the listener as a `Stream`.
//! - `stream`: [`TcpStream`], its addresses and socket options.
//! - `connect`: [`TcpStream::connect`].
//! - `stream_io`: `AsyncRead` and `AsyncWrite` for [`TcpStream`].
//! - `split`: [`ReadHalf`] and [`WriteHalf`], borrowed halves.
//! - `owned_split`: [`OwnedReadHalf`] and [`OwnedWriteHalf`], halves that
//!   move into different tasks.

mod accept;
mod connect;
mod incoming;
mod listener;
mod owned_split;
mod split;
mod stream;
mod stream_io;

pub use incoming::Incoming;
pub use listener::TcpListener;
pub use owned_split::{OwnedReadHalf, OwnedWriteHalf};
pub use split::{ReadHalf, WriteHalf};
pub use stream::TcpStream;
