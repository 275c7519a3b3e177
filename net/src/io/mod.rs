//! asyncio's streams: [`StreamReader`] and [`StreamWriter`], the lesson's
//! `inbuf` and `outbuf` behind `await`, over any `futures_io` `AsyncRead`
//! or `AsyncWrite` (a TCP stream, a half of one, anything that reads or
//! writes bytes); [`read_buf`], a read appended to a `Vec`; and the
//! buffers themselves, [`InBuf`] and [`OutBuf`], for a layer of one's own
//! over a socket (ioloop-callbacks is one).

mod reader;
mod writer;

pub use reader::{DEFAULT_MAX_LINE_LENGTH, InBuf, StreamReader, read_buf};
pub use writer::{OutBuf, StreamWriter};
