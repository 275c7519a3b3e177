//! asyncio's streams: [`StreamReader`] and [`StreamWriter`], the lesson's
//! `inbuf` and `outbuf` behind `await`, over any `futures_io` `AsyncRead`
//! or `AsyncWrite` (a TCP stream, a half of one, anything that reads or
//! writes bytes); and [`read_buf`], a read appended to a `Vec`.

pub(crate) mod reader;
pub(crate) mod writer;

pub use reader::{DEFAULT_MAX_LINE_LENGTH, StreamReader, read_buf};
pub use writer::StreamWriter;
