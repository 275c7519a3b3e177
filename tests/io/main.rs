//! Streams: the buffers alone (`InBuf`, `OutBuf`), `StreamReader` (lines,
//! frames, limits, cancellation, `fill_more`), `read_buf` and
//! `StreamWriter` (buffering, drain), over in-memory doubles, Unix socket
//! pairs and TCP.
//!
//! `line_memory` installs this binary's global allocator, which records
//! the largest allocation per thread: the other tests run through it
//! undisturbed, and their allocations never reach its record.

mod buffers;
mod line_limit;
mod line_memory;
mod read_cancel;
mod read_frames;
mod read_line;
mod read_more;
mod reader_combinators;
mod stream_writer;
mod tcp;
mod unix_streams;
mod writer_drain;
