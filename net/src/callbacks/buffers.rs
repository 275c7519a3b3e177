//! A connection's two buffers: `InBuf`, the bytes read and not yet
//! consumed (the lesson's `inbuf`), and `OutBuf`, the bytes queued and not
//! yet sent (its `outbuf`: `StreamWriter`'s own buffer, shared).
//!
//! Both keep a cursor instead of shifting bytes on every consume or send:
//! the lesson's `del conn.inbuf[:i + 1]` moves the whole rest of the buffer
//! for each line, which makes a burst of pipelined lines quadratic.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use futures_io::AsyncRead;

use crate::TcpStream;

/// The most a single read asks for: 8 KiB, as `StreamReader` reads.
const READ_CHUNK: usize = 8 * 1024;

/// The stack buffer the first read of a connection goes into, so that a
/// client that connects and says nothing costs no inbuf at all.
const PROBE: usize = 1024;

/// The outbuf: the same buffer `StreamWriter` queues its bytes in.
pub(super) use crate::io::write_buf::WriteBuf as OutBuf;

/// Storage with a read cursor (`start`) and a fill cursor (`end`):
/// `[ consumed | unread: start..end | free: end.. ]`.
///
/// Every byte of `bytes` is initialized (the crate forbids `unsafe`), so
/// free space is zeroed once, when the buffer grows, not before each read.
#[derive(Debug, Default)]
pub(super) struct InBuf {
    bytes: Vec<u8>,
    start: usize,
    end: usize,
}

impl InBuf {
    pub(super) fn unread(&self) -> &[u8] {
        &self.bytes[self.start..self.end]
    }

    pub(super) fn len(&self) -> usize {
        self.end - self.start
    }

    /// Drops the first `n` unread bytes (all of them if fewer).
    pub(super) fn consume(&mut self, n: usize) {
        self.start += n.min(self.len());
        if self.start == self.end {
            // Empty: the next read starts at the front, nothing to move.
            self.start = 0;
            self.end = 0;
        }
    }

    /// Appends `data`, with no limit: reads are bounded by their caller.
    pub(super) fn extend(&mut self, data: &[u8]) {
        self.make_room(data.len(), usize::MAX);
        let end = self.end;
        self.bytes[end..end + data.len()].copy_from_slice(data);
        self.end += data.len();
    }

    /// Reads once from `stream`, adding at most `up_to` bytes (more than 0).
    /// Returns how many came; 0 is the end of the stream.
    pub(super) fn poll_read(
        &mut self,
        cx: &mut Context<'_>,
        stream: &TcpStream,
        up_to: usize,
    ) -> Poll<io::Result<usize>> {
        debug_assert!(up_to > 0, "a read of 0 bytes would look like EOF");
        let want = up_to.min(READ_CHUNK);
        if self.bytes.is_empty() {
            let mut probe = [0; PROBE];
            let probe = &mut probe[..want.min(PROBE)];
            let n = ready!(Pin::new(&mut &*stream).poll_read(cx, probe))?.min(probe.len());
            self.extend(&probe[..n]);
            return Poll::Ready(Ok(n));
        }
        // Room for `want`, but never more than `up_to` past what is held:
        // the memory bound is the caller's limit, not a doubling of it.
        self.make_room(want, self.len() + up_to);
        let end = self.end;
        let free = &mut self.bytes[end..end + want];
        let n = ready!(Pin::new(&mut &*stream).poll_read(cx, free))?.min(want);
        self.end += n;
        Poll::Ready(Ok(n))
    }

    /// Makes `n` bytes of free space after the unread ones: first by moving
    /// the unread bytes to the front (cheap: usually a partial line), then
    /// by growing, doubling but never past `bound` bytes in all.
    fn make_room(&mut self, n: usize, bound: usize) {
        if self.bytes.len() - self.end >= n {
            return;
        }
        if self.start > 0 {
            self.bytes.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        let need = self.end + n;
        if self.bytes.len() < need {
            let size = (self.bytes.len() * 2).clamp(need, bound.max(need));
            self.bytes.reserve_exact(size - self.bytes.len());
            self.bytes.resize(size, 0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn consume_and_extend_keep_the_order() {
        let mut buf = InBuf::default();
        buf.extend(b"one\ntwo");
        buf.consume(4);
        buf.extend(b"\nthree");
        assert_eq!(buf.unread(), b"two\nthree");
        buf.consume(100);
        assert_eq!((buf.len(), buf.unread()), (0, &b""[..]));
    }

    #[test]
    fn room_is_made_by_moving_before_growing() {
        let mut buf = InBuf::default();
        buf.extend(&[b'x'; 64]);
        buf.consume(60);
        let size = buf.bytes.len();
        buf.make_room(60, usize::MAX);
        assert_eq!(buf.bytes.len(), size, "moved, not grown");
        assert_eq!(buf.unread(), b"xxxx");
    }

    #[test]
    fn growth_stops_at_the_bound() {
        let mut buf = InBuf::default();
        buf.extend(&[0; 1000]);
        buf.make_room(100, 1100);
        assert_eq!(buf.bytes.capacity(), 1100);
    }
}
