//! How a `StreamReader` cuts records out of its buffer: the poll functions
//! behind `read_line`, `read_until` and `read_exact`, and the skipping of an
//! overlong line's tail.
//!
//! Every piece of progress (bytes read, how far the search got, whether a
//! tail is being skipped) is stored in the reader, never in a future: that
//! is the whole of the cancel-safety argument.

use std::io;
use std::ops::Range;
use std::task::{Context, Poll, ready};

use futures_io::AsyncRead;

use super::reader::StreamReader;

/// What [`StreamReader::poll_record`] makes of bytes the stream ends with
/// before a delimiter.
#[derive(Clone, Copy)]
pub(super) enum Unterminated {
    /// A last record, as it is: `read_line`, as asyncio's `readline`.
    Record,
    /// `UnexpectedEof`, the bytes left buffered: `read_until`, as asyncio's
    /// `readuntil`.
    Error,
}

impl<R: AsyncRead + Unpin> StreamReader<R> {
    /// Finds the next record ending in `delimiter`, consumes it, and returns
    /// where it sits in the buffer (delimiter included, if it came).
    /// `Ok(None)` is a clean end of stream.
    pub(super) fn poll_record(
        &mut self,
        cx: &mut Context<'_>,
        delimiter: u8,
        unterminated: Unterminated,
    ) -> Poll<io::Result<Option<Range<usize>>>> {
        // One unit of the task's budget per record: a reader that is always
        // ready (in memory, or a socket with a backlog) must not let a task
        // that loops over it hold the loop.
        ready!(ioloop_runtime::task::poll_budget(cx));
        ready!(self.poll_skip_overlong(cx))?;
        if self.scan_for != delimiter {
            // What was searched for another byte says nothing about this one.
            self.scan_for = delimiter;
            self.scanned = 0;
        }
        loop {
            let unread = self.buf.unread();
            if let Some(at) = memchr(delimiter, &unread[self.scanned..]) {
                let len = self.scanned + at;
                let record = self.consume(len + 1);
                if len > self.max_line {
                    // The delimiter came in the read that passed the limit:
                    // the whole line is here, so it goes in one step.
                    return Poll::Ready(Err(too_long(self.max_line)));
                }
                return Poll::Ready(Ok(Some(record)));
            }
            self.scanned = unread.len();
            if self.scanned > self.max_line {
                // Report now rather than buffer a line we will refuse, and
                // skip the rest of it later, as it arrives.
                self.consume(usize::MAX);
                self.skip_until = Some(delimiter);
                return Poll::Ready(Err(too_long(self.max_line)));
            }
            // `scanned <= max_line` here, so the fill stays within
            // `max_line + READ_CHUNK`: the memory bound.
            if ready!(self.buf.poll_fill(cx, &mut self.inner, self.max_line))? == 0 {
                let len = self.buf.len();
                if len == 0 {
                    return Poll::Ready(Ok(None));
                }
                return Poll::Ready(match unterminated {
                    // The stream ended mid-record: hand out what there is.
                    Unterminated::Record => Ok(Some(self.consume(usize::MAX))),
                    // As in `poll_exact`, the partial bytes stay buffered.
                    Unterminated::Error => {
                        let msg = format!(
                            "stream ended after {len} bytes without the delimiter {delimiter:#04x}"
                        );
                        Err(io::Error::new(io::ErrorKind::UnexpectedEof, msg))
                    }
                });
            }
        }
    }

    /// Gathers `n` unread bytes, consumes them, and returns where they sit.
    pub(super) fn poll_exact(
        &mut self,
        cx: &mut Context<'_>,
        n: usize,
    ) -> Poll<io::Result<Range<usize>>> {
        ready!(ioloop_runtime::task::poll_budget(cx));
        ready!(self.poll_skip_overlong(cx))?;
        while self.buf.len() < n {
            let hold = n.max(self.max_line);
            if ready!(self.buf.poll_fill(cx, &mut self.inner, hold))? == 0 {
                // The partial bytes stay buffered: the caller may still want
                // them (`buffer()`), and nothing is ever thrown away.
                let msg = format!("stream ended after {} of {n} bytes", self.buf.len());
                return Poll::Ready(Err(io::Error::new(io::ErrorKind::UnexpectedEof, msg)));
            }
        }
        Poll::Ready(Ok(self.consume(n)))
    }

    /// After an overlong line was reported mid-way, reads and drops the
    /// rest of it, up to and including its delimiter. Only the current
    /// chunk is ever held, so a peer sending an endless line costs one
    /// buffer, not memory without end.
    pub(super) fn poll_skip_overlong(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while let Some(delimiter) = self.skip_until {
            if let Some(at) = memchr(delimiter, self.buf.unread()) {
                self.consume(at + 1);
                self.skip_until = None;
                break;
            }
            self.consume(usize::MAX);
            if ready!(self.buf.poll_fill(cx, &mut self.inner, self.max_line))? == 0 {
                // The stream ended inside the overlong line: nothing left to skip.
                self.skip_until = None;
            }
        }
        Poll::Ready(Ok(()))
    }

    /// Consumes `n` unread bytes (all of them if fewer), keeping the search
    /// position in step.
    pub(super) fn consume(&mut self, n: usize) -> Range<usize> {
        let taken = self.buf.consume(n);
        self.scanned = self.scanned.saturating_sub(taken.len());
        taken
    }
}

/// The error for a line over the limit; its message names the limit, so a
/// server can pass it on as is.
fn too_long(max_line: usize) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("line longer than the maximum line length of {max_line} bytes"),
    )
}

/// The position of the first `byte` in `haystack`: the memchr crate's
/// vectorised search, several bytes per instruction, where a byte loop spent
/// most of `read_line`'s time.
fn memchr(byte: u8, haystack: &[u8]) -> Option<usize> {
    memchr::memchr(byte, haystack)
}
