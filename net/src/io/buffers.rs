//! The bytes of a stream's two directions, shared by the streams and the
//! callback layer's `Connection`: [`ReadBuf`], read and not yet handed out
//! (the lesson's `inbuf`), and [`WriteBuf`], queued and not yet taken by
//! the writer (its `outbuf`), with the one send loop.
//!
//! Both keep cursors rather than shifting bytes on every consume or send:
//! the lesson's `del conn.inbuf[:i + 1]` moves the rest of the buffer for
//! each line, which makes a burst of pipelined lines quadratic.
//!
//! The small methods are `#[inline]`: they run several times per message
//! from other modules, which a release build (16 codegen units) would
//! otherwise call out of line (`benches/echo_cost.sh`: about 2,540
//! instructions per echoed line without, 2,470 with).

use std::io;
use std::ops::Range;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use futures_io::{AsyncRead, AsyncWrite};

/// The unit a [`ReadBuf`] is allocated and grown in, 8 KiB: one `recv` per
/// few KiB on a busy stream, a cheap buffer on an idle one. It is also the
/// slack in the memory bound (what may be held, plus this).
pub(crate) const READ_CHUNK: usize = 8 * 1024;

/// The least free space a read is offered: half a chunk, so that a short
/// partial line moved to the front of a full buffer leaves room for a
/// worthwhile read without doubling the buffer.
const MIN_READ: usize = READ_CHUNK / 2;

/// The stack buffer the first read of an unallocated [`ReadBuf`] goes into:
/// a connection that never sends costs no inbuf, where allocating at the
/// first attempt would cost 8 KiB each. The price is one copy of up to
/// 1 KiB, once.
const PROBE: usize = 1024;

/// The capacity a [`WriteBuf`] keeps once it empties: enough for a typical
/// reply; more is given back, so one large burst does not keep its memory.
const KEEP: usize = 64 * 1024;

/// Bytes read and not yet handed out, in one allocation:
/// `[ consumed | unread: start..end | free: end.. ]`.
///
/// Every byte of `bytes` is initialized (the crate forbids `unsafe`), so
/// free space is zeroed once per growth, not before each read.
#[derive(Debug, Default)]
pub(crate) struct ReadBuf {
    bytes: Vec<u8>,
    start: usize,
    end: usize,
}

impl ReadBuf {
    /// The unread bytes.
    #[inline]
    pub(crate) fn unread(&self) -> &[u8] {
        &self.bytes[self.start..self.end]
    }

    /// How many bytes are unread.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.end - self.start
    }

    /// Bytes allocated.
    pub(crate) fn capacity(&self) -> usize {
        self.bytes.capacity()
    }

    /// Marks the first `n` unread bytes (all, if fewer) as handed out and
    /// returns where they sit, so the caller can still borrow them with
    /// [`get`](Self::get): nothing moves until the next fill.
    #[inline]
    pub(crate) fn consume(&mut self, n: usize) -> Range<usize> {
        let n = n.min(self.len());
        let taken = self.start..self.start + n;
        self.start += n;
        if self.start == self.end {
            // Empty: the next fill starts at the front, no compaction needed.
            self.start = 0;
            self.end = 0;
        }
        taken
    }

    /// Bytes by their place in storage, as [`consume`](Self::consume)
    /// returned it.
    #[inline]
    pub(crate) fn get(&self, range: Range<usize>) -> &[u8] {
        &self.bytes[range]
    }

    /// Appends `data` after the unread bytes as if it had been read, with
    /// no limit (`Connection::feed`).
    pub(crate) fn extend(&mut self, data: &[u8]) {
        self.bytes.truncate(self.end);
        self.bytes.drain(..self.start);
        self.bytes.extend_from_slice(data);
        self.start = 0;
        self.end = self.bytes.len();
    }

    /// Reads once from `reader`, at most `at_most` bytes (more than 0).
    /// `hold` is how many unread bytes the caller may need at once (a line
    /// limit, or `n` for `read_exact`): the buffer never grows past `hold`,
    /// or past what it already holds, plus [`READ_CHUNK`].
    ///
    /// Returns the number of bytes read; 0 means end of stream.
    /// `Interrupted` is retried here (and in the first fill).
    pub(crate) fn poll_fill<R: AsyncRead + Unpin>(
        &mut self,
        cx: &mut Context<'_>,
        reader: &mut R,
        hold: usize,
        at_most: usize,
    ) -> Poll<io::Result<usize>> {
        debug_assert!(at_most > 0, "a read of 0 bytes would look like the end");
        if self.bytes.is_empty() {
            return self.poll_first_fill(cx, reader, at_most);
        }
        self.reserve(hold);
        loop {
            let free = &mut self.bytes[self.end..];
            let limit = free.len().min(at_most);
            match ready!(Pin::new(&mut *reader).poll_read(cx, &mut free[..limit])) {
                Ok(n) => {
                    // A reader claiming more than it was given breaks the
                    // AsyncRead contract; clamp rather than index past it.
                    let n = n.min(limit);
                    self.end += n;
                    return Poll::Ready(Ok(n));
                }
                Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                Err(err) => return Poll::Ready(Err(err)),
            }
        }
    }

    /// [`poll_fill`](Self::poll_fill) with nothing allocated: read into a
    /// [`PROBE`] on the stack, and allocate only if something came. It
    /// needs no `hold`: an empty buffer's first allocation is one
    /// [`READ_CHUNK`] whatever the hold (see [`make_room`](Self::make_room)).
    /// Cold and out of line: once per connection. Its read loop is
    /// `poll_fill`'s, written out again: an `#[inline(always)]` helper for
    /// the two cost 3 instructions per echoed message (`poll_fill` 115 to
    /// 118, `benches/echo_cost.sh --top`).
    #[cold]
    #[inline(never)]
    fn poll_first_fill<R: AsyncRead + Unpin>(
        &mut self,
        cx: &mut Context<'_>,
        reader: &mut R,
        at_most: usize,
    ) -> Poll<io::Result<usize>> {
        let mut probe = [0u8; PROBE];
        let probe = &mut probe[..at_most.min(PROBE)];
        loop {
            match ready!(Pin::new(&mut *reader).poll_read(cx, probe)) {
                Ok(0) => return Poll::Ready(Ok(0)),
                Ok(n) => {
                    let n = n.min(probe.len());
                    self.reserve(0);
                    debug_assert_eq!(self.bytes.len(), READ_CHUNK);
                    self.bytes[..n].copy_from_slice(&probe[..n]);
                    self.start = 0;
                    self.end = n;
                    return Poll::Ready(Ok(n));
                }
                Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                Err(err) => return Poll::Ready(Err(err)),
            }
        }
    }

    /// Makes at least [`MIN_READ`] of free space, within the bound of
    /// `hold + READ_CHUNK`. Inline, since it is on every read and usually
    /// has nothing to do; the work is in [`make_room`](Self::make_room).
    #[inline]
    fn reserve(&mut self, hold: usize) {
        // Saturating: `usize::MAX` is how a caller says "no limit".
        let bound = hold.max(self.len()).saturating_add(READ_CHUNK);
        if self.len() == 0 && self.bytes.len() > bound {
            // A large read_exact is over: give its memory back instead of
            // keeping it for the life of the connection.
            self.bytes = Vec::new();
        }
        if self.bytes.len() - self.end < MIN_READ {
            self.make_room(bound);
        }
    }

    /// Makes room for a read: first by moving the unread bytes to the
    /// front (cheap, and usually enough), then by growing, doubling to keep
    /// a long `read_exact` linear, but never past `bound`.
    fn make_room(&mut self, bound: usize) {
        if self.start > 0 {
            self.bytes.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
            if self.bytes.len() - self.end >= MIN_READ {
                return;
            }
        }
        // `end == len()` after the move above, so the minimum is within `bound`.
        let size = self
            .bytes
            .len()
            .saturating_mul(2)
            .clamp(self.end + READ_CHUNK, bound);
        // `resize` alone may over-allocate (amortized doubling); the bound is
        // a promise about memory, so ask for exactly `size`.
        self.bytes.reserve_exact(size - self.bytes.len());
        self.bytes.resize(size, 0);
    }
}

/// Bytes queued and not yet taken by the writer: `bytes[head..]`.
///
/// Sending advances `head` instead of shifting the bytes, so a partial
/// write costs nothing; the sent prefix is dropped when new bytes are
/// appended and it is at least as large as what remains (each byte is then
/// moved at most once on average), or when everything has been sent.
#[derive(Debug, Default)]
pub(crate) struct WriteBuf {
    bytes: Vec<u8>,
    head: usize,
}

impl WriteBuf {
    /// The bytes still to be sent.
    #[inline]
    pub(crate) fn unsent(&self) -> &[u8] {
        &self.bytes[self.head..]
    }

    /// How many bytes are still to be sent.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.bytes.len() - self.head
    }

    /// Appends `data` after the unsent bytes.
    pub(crate) fn push(&mut self, data: &[u8]) {
        if self.head > 0 && self.head >= self.len() {
            self.bytes.drain(..self.head);
            self.head = 0;
        }
        self.bytes.extend_from_slice(data);
    }

    /// Marks the first `n` unsent bytes as sent.
    #[inline]
    pub(crate) fn advance(&mut self, n: usize) {
        self.head += n.min(self.len());
        if self.head == self.bytes.len() {
            self.head = 0;
            if self.bytes.capacity() > KEEP {
                self.bytes = Vec::new();
            } else {
                self.bytes.clear();
            }
        }
    }

    /// Sends until at most `target` bytes are queued, waiting on `writer`
    /// whenever it refuses: the lesson's `on_writable`, with its
    /// `del conn.outbuf[:sent]`. Only what the writer took leaves the
    /// buffer, recorded after every call, so a dropped future loses and
    /// repeats nothing. An empty buffer makes no call at all.
    #[inline]
    pub(crate) fn poll_send_down_to<W: AsyncWrite + Unpin>(
        &mut self,
        cx: &mut Context<'_>,
        writer: &mut W,
        target: usize,
    ) -> Poll<io::Result<()>> {
        while self.len() > target {
            match ready!(Pin::new(&mut *writer).poll_write(cx, self.unsent())) {
                Ok(0) => return Poll::Ready(Err(write_zero())),
                Ok(n) => self.advance(n),
                Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                Err(err) => return Poll::Ready(Err(err)),
            }
        }
        Poll::Ready(Ok(()))
    }
}

/// A writer that accepted nothing without saying why would be polled
/// forever; std's `write_all` reports it the same way.
#[cold]
pub(crate) fn write_zero() -> io::Error {
    io::Error::new(io::ErrorKind::WriteZero, "the writer accepted no bytes")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extend_and_consume_keep_the_order() {
        let mut buf = ReadBuf::default();
        buf.extend(b"one\ntwo");
        buf.consume(4);
        buf.extend(b"\nthree");
        assert_eq!(buf.unread(), b"two\nthree");
        buf.consume(100);
        assert_eq!((buf.len(), buf.unread()), (0, &b""[..]));
    }

    #[test]
    fn a_fill_reads_at_most_what_it_is_allowed() {
        let mut cx = Context::from_waker(std::task::Waker::noop());
        let mut buf = ReadBuf::default();
        let mut reader = &[7u8; 100][..];
        assert!(matches!(
            buf.poll_fill(&mut cx, &mut reader, usize::MAX, 3),
            Poll::Ready(Ok(3))
        ));
        assert!(matches!(
            buf.poll_fill(&mut cx, &mut reader, usize::MAX, 5),
            Poll::Ready(Ok(5))
        ));
        assert_eq!(buf.unread(), [7; 8]);
        assert_eq!(reader.len(), 92);
    }
}
