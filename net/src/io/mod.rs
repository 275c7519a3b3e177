//! asyncio's streams: [`StreamReader`] and [`StreamWriter`], the lesson's
//! `inbuf` and `outbuf` behind `await`.
//!
//! | the lesson's reactor | asyncio | here |
//! |---|---|---|
//! | `Connection.inbuf`, cut at `\n` in `on_data` | `await reader.readline()` | [`StreamReader::read_line`] |
//! | `Connection.outbuf` + `queue_send` | `writer.write(data)` | [`StreamWriter::write`] |
//! | WRITE interest until `outbuf` is empty (`on_writable`) | `await writer.drain()` | [`StreamWriter::drain`] |
//!
//! Both are generic over `futures_io`'s [`AsyncRead`](futures_io::AsyncRead)
//! and [`AsyncWrite`](futures_io::AsyncWrite), so they wrap a TCP stream, a
//! half of one, or anything else that reads or writes bytes.
//!
//! - `reader`: [`StreamReader`] and its reads; `reader_access`: its line
//!   limit and accessors; `framing`: how it finds lines and frames;
//!   `reader_io`: `AsyncRead` / `AsyncBufRead`; `read_buf`: its buffer.
//! - `writer`: [`StreamWriter`], `write`, `drain`, `flush`, `close`;
//!   `writer_access`: its water marks and accessors; `writer_io`: how bytes
//!   move, and `AsyncWrite`; `write_buf`: its buffer.

mod framing;
mod read_buf;
mod reader;
mod reader_access;
mod reader_io;
pub(crate) mod write_buf;
mod writer;
mod writer_access;
mod writer_io;

pub use reader::{DEFAULT_MAX_LINE_LENGTH, StreamReader};
pub use writer::StreamWriter;
