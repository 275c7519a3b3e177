//! `ReadBuf`: the bytes a `StreamReader` has read and not yet handed out
//! (the lesson's `inbuf`), as one allocation with two cursors.

use std::io;
use std::ops::Range;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use futures_io::AsyncRead;

/// The unit the buffer is allocated and grown in: 8 KiB.
///
/// Big enough that a busy stream costs one `recv` per few KiB rather than
/// one per line, small enough that an idle connection's buffer stays cheap.
/// It is also the slack in the memory bound: a buffer never grows past what
/// the current operation may hold plus this much.
pub(crate) const READ_CHUNK: usize = 8 * 1024;

/// The least free space a read is offered: 4 KiB, half a chunk.
///
/// Less than a whole chunk on purpose: an 8 KiB buffer holding the start of
/// a short line, moved to the front, still has room for a worthwhile read,
/// where asking for a full chunk would double the buffer every time a line
/// straddles two reads.
const MIN_READ: usize = READ_CHUNK / 2;

/// The stack buffer the first read of an unallocated buffer goes into.
///
/// A reader allocates nothing until data actually arrives: a connection
/// that is accepted and then says nothing (an idle keep-alive client, a
/// slow starter) costs no inbuf at all, where allocating at the first
/// attempt would cost 8 KiB each. The price is one copy of up to 1 KiB,
/// once per connection.
const PROBE: usize = 1024;

/// Storage with a read cursor (`start`) and a fill cursor (`end`).
///
/// ```text
/// [ consumed | unread: start..end | free: end..len ]
/// ```
///
/// Every byte of `bytes` is initialized (the crate forbids `unsafe`), so the
/// free space is `bytes.len() - end`; zeroing happens once per growth, not
/// per read.
#[derive(Debug, Default)]
pub(crate) struct ReadBuf {
    bytes: Vec<u8>,
    start: usize,
    end: usize,
}

impl ReadBuf {
    /// The unread bytes.
    pub(crate) fn unread(&self) -> &[u8] {
        &self.bytes[self.start..self.end]
    }

    /// How many bytes are unread.
    pub(crate) fn len(&self) -> usize {
        self.end - self.start
    }

    /// Bytes allocated.
    pub(crate) fn capacity(&self) -> usize {
        self.bytes.capacity()
    }

    /// Marks the first `n` unread bytes as handed out and returns where they
    /// sit in storage, so the caller can still borrow them: nothing moves
    /// until the next fill.
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

    /// Bytes by their place in storage, as returned by [`consume`](Self::consume).
    pub(crate) fn get(&self, range: Range<usize>) -> &[u8] {
        &self.bytes[range]
    }

    /// Reads once from `reader` into the free space, after making at least
    /// [`MIN_READ`] of it. `hold` is how many unread bytes the caller may
    /// need to keep at once (the line limit, or `n` for `read_exact`); the
    /// buffer never grows past `hold + READ_CHUNK`, or past what it already
    /// holds plus `READ_CHUNK`.
    ///
    /// Returns the number of bytes read; 0 means end of stream.
    /// `Interrupted` is retried here, the one place reads are made.
    pub(crate) fn poll_fill<R: AsyncRead + Unpin>(
        &mut self,
        cx: &mut Context<'_>,
        reader: &mut R,
        hold: usize,
    ) -> Poll<io::Result<usize>> {
        if self.bytes.is_empty() {
            return self.poll_first_fill(cx, reader, hold);
        }
        self.reserve(hold);
        loop {
            let free = &mut self.bytes[self.end..];
            match ready!(Pin::new(&mut *reader).poll_read(cx, free)) {
                Ok(n) => {
                    // A reader claiming more than it was given breaks the
                    // AsyncRead contract; clamp rather than index past `len`.
                    self.end += n.min(self.bytes.len() - self.end);
                    return Poll::Ready(Ok(n));
                }
                Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                Err(err) => return Poll::Ready(Err(err)),
            }
        }
    }

    /// [`poll_fill`](Self::poll_fill) with nothing allocated: read into a
    /// [`PROBE`] on the stack, and allocate only if something came.
    fn poll_first_fill<R: AsyncRead + Unpin>(
        &mut self,
        cx: &mut Context<'_>,
        reader: &mut R,
        hold: usize,
    ) -> Poll<io::Result<usize>> {
        let mut probe = [0u8; PROBE];
        loop {
            match ready!(Pin::new(&mut *reader).poll_read(cx, &mut probe)) {
                Ok(0) => return Poll::Ready(Ok(0)),
                Ok(n) => {
                    let n = n.min(PROBE);
                    self.reserve(hold);
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

    /// Makes at least [`MIN_READ`] of free space: first by moving the
    /// unread bytes to the front (cheap, and usually enough), then by
    /// growing, doubling to keep a long `read_exact` linear, but capped at
    /// the bound so a long line costs at most `limit + READ_CHUNK`.
    fn reserve(&mut self, hold: usize) {
        // Saturating: `usize::MAX` is how a caller says "no limit".
        let bound = hold.max(self.len()).saturating_add(READ_CHUNK);
        if self.len() == 0 && self.bytes.len() > bound {
            // A large read_exact is over: give its memory back instead of
            // keeping it for the life of the connection.
            self.bytes = Vec::new();
        }
        if self.bytes.len() - self.end >= MIN_READ {
            return;
        }
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
