//! asyncio's streams: [`StreamReader`] and [`StreamWriter`], the lesson's
//! `inbuf` and `outbuf` behind `await`, over any `futures_io` `AsyncRead`
//! or `AsyncWrite`: a TCP stream, a half of one, or anything else that
//! reads or writes bytes.

pub(crate) mod reader;
pub(crate) mod writer;

pub use reader::{DEFAULT_MAX_LINE_LENGTH, StreamReader};
pub use writer::StreamWriter;
