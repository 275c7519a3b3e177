//! [`StreamReader`], whole: lines, delimited records and exact-size frames
//! cut out of its [`InBuf`], its limits and accessors, and
//! `AsyncRead` / `AsyncBufRead` over the same buffer; and [`InBuf`]
//! itself, public for a layer of one's own over a socket (the lesson's
//! `inbuf`; ioloop-callbacks' `Connection` keeps one).
//!
//! `InBuf` and `OutBuf` (writer.rs) keep cursors rather than shifting
//! bytes on every consume or send: the lesson's `del conn.inbuf[:i + 1]`
//! moves the rest of the buffer for each line, which makes a burst of
//! pipelined lines quadratic. Their small methods are `#[inline]`: they run
//! several times per message from other modules, which a release build
//! (16 codegen units) would otherwise call out of line
//! (`benches/echo_cost.sh`, 2026-12-01, 0aa8dc0: about 2,540 instructions
//! per echoed line without, 2,470 with).

use std::fmt;
use std::future::poll_fn;
use std::io;
use std::ops::Range;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use futures_io::{AsyncBufRead, AsyncRead};

use crate::impls::fill_spare;

/// The default maximum line length of a [`StreamReader`]: 64 KiB, as
/// asyncio's default `limit`.
pub const DEFAULT_MAX_LINE_LENGTH: usize = 64 * 1024;

/// A buffered reader that frames a byte stream into lines, delimited
/// records or exact-size frames: asyncio's `StreamReader`, the lesson's
/// `inbuf`.
///
/// The reader owns its buffer. Each method returns a slice borrowed from
/// it (no copy), valid until the next call on the reader. Bytes read but
/// not yet returned stay in the buffer, so every method is cancel-safe:
/// dropping a future half-way loses nothing.
///
/// The buffer is allocated on the first read, 8 KiB at a time, and never
/// grows past the [maximum line length](Self::set_max_line_length) plus
/// 8 KiB, whatever the peer sends; only [`read_exact`](Self::read_exact)
/// and [`fill_more`](Self::fill_more) go beyond, to the `n` asked for or
/// to what the caller leaves unread, and give it back afterwards.
///
/// It implements [`AsyncRead`] and [`AsyncBufRead`] over the same buffer,
/// so futures-util's combinators mix with `read_line`. The inherent
/// `read_line`, `read_until` and `read_exact` shadow the extension-trait
/// methods of those names; call those as
/// `AsyncBufReadExt::read_line(&mut reader, &mut s)`.
///
/// # Examples
///
/// ```
/// use ioloop::io::StreamReader;
///
/// ioloop::block_on(async {
///     let mut reader = StreamReader::new(&b"Hello!\r\n[echo] hi\nbye"[..]);
///     assert_eq!(reader.read_line().await?, Some(&b"Hello!"[..]));
///     assert_eq!(reader.read_line().await?, Some(&b"[echo] hi"[..]));
///     assert_eq!(reader.read_line().await?, Some(&b"bye"[..]));
///     assert_eq!(reader.read_line().await?, None);
///     Ok::<_, std::io::Error>(())
/// })
/// .unwrap();
/// ```
pub struct StreamReader<R> {
    inner: R,
    buf: InBuf,
    max_line: usize,
    /// How many unread bytes were already searched for `scan_for` and found
    /// not to contain it: the next search starts there, so a line arriving
    /// one byte at a time costs O(n), not O(n²).
    scanned: usize,
    scan_for: u8,
    /// Set after an overlong line was reported before its end arrived: the
    /// rest of it, up to and including this delimiter, is skipped by the
    /// next read of any kind.
    skip_until: Option<u8>,
}

/// What [`StreamReader::poll_record`] makes of bytes the stream ends with
/// before a delimiter.
#[derive(Clone, Copy)]
enum Unterminated {
    /// A last record, as it is: `read_line`, as asyncio's `readline`.
    Record,
    /// `UnexpectedEof`, the bytes left buffered: `read_until`, as asyncio's
    /// `readuntil`.
    Error,
}

impl<R: AsyncRead + Unpin> StreamReader<R> {
    /// Wraps `inner`, with an empty buffer (nothing is allocated until the
    /// first read) and a maximum line length of 64 KiB.
    pub fn new(inner: R) -> Self {
        StreamReader {
            inner,
            buf: InBuf::default(),
            max_line: DEFAULT_MAX_LINE_LENGTH,
            scanned: 0,
            scan_for: b'\n',
            skip_until: None,
        }
    }

    /// Reads the next line, without its line ending (`\n` or `\r\n`).
    ///
    /// Returns `Ok(None)` at a clean end of stream (no bytes pending). A
    /// last line that the stream ends without a `\n` is returned as it is.
    ///
    /// # Errors
    ///
    /// - [`InvalidData`](io::ErrorKind::InvalidData) as soon as the line
    ///   passes the [maximum line length](Self::set_max_line_length). The
    ///   reader stays usable: the overlong line is dropped (the part still
    ///   to come is skipped by the next read), and the next call returns the
    ///   line after it.
    /// - Any error of the inner reader, once the lines already buffered
    ///   are returned. A partial line stays buffered, and a later call may
    ///   go on.
    ///
    /// # Cancellation
    ///
    /// Cancel-safe: the bytes of a partial line live in the reader, so
    /// dropping the future (say, under a
    /// [`timeout`](ioloop_runtime::time::timeout)) loses nothing, and the
    /// next call returns the whole line.
    ///
    /// # Examples
    ///
    /// ```
    /// use ioloop::io::StreamReader;
    ///
    /// ioloop::block_on(async {
    ///     let mut reader = StreamReader::new(&b"GET / HTTP/1.0\r\n\r\n"[..]);
    ///     assert_eq!(reader.read_line().await?, Some(&b"GET / HTTP/1.0"[..]));
    ///     assert_eq!(reader.read_line().await?, Some(&b""[..]));
    ///     assert_eq!(reader.read_line().await?, None);
    ///     Ok::<_, std::io::Error>(())
    /// })
    /// .unwrap();
    /// ```
    #[doc(alias = "readline")]
    pub async fn read_line(&mut self) -> io::Result<Option<&[u8]>> {
        let record = poll_fn(|cx| self.poll_record(cx, b'\n', Unterminated::Record)).await?;
        Ok(record.map(|range| {
            let line = self.buf.get(range);
            match line.strip_suffix(b"\n") {
                Some(rest) => rest.strip_suffix(b"\r").unwrap_or(rest),
                None => line,
            }
        }))
    }

    /// Reads up to and including the next `delimiter`.
    ///
    /// Returns `Ok(None)` at a clean end of stream (no bytes pending).
    ///
    /// # Errors
    ///
    /// - [`UnexpectedEof`](io::ErrorKind::UnexpectedEof) if the stream ends
    ///   before the delimiter; the bytes that did arrive stay in the
    ///   [buffer](Self::buffer).
    /// - [`InvalidData`](io::ErrorKind::InvalidData) if the bytes before
    ///   the delimiter pass the [maximum line length](Self::set_max_line_length);
    ///   the record is dropped, as `read_line` drops an overlong line.
    /// - Any error of the inner reader, as for `read_line`.
    ///
    /// # Cancellation
    ///
    /// Cancel-safe, as [`read_line`](Self::read_line).
    #[doc(alias = "readuntil")]
    pub async fn read_until(&mut self, delimiter: u8) -> io::Result<Option<&[u8]>> {
        let record = poll_fn(|cx| self.poll_record(cx, delimiter, Unterminated::Error)).await?;
        Ok(record.map(|range| self.buf.get(range)))
    }

    /// Reads exactly `n` bytes. The buffer grows to `n` if it must; the
    /// line limit does not apply.
    ///
    /// # Errors
    ///
    /// - [`UnexpectedEof`](io::ErrorKind::UnexpectedEof) if the stream ends
    ///   first; the bytes that did arrive stay in the
    ///   [buffer](Self::buffer).
    /// - Any error of the inner reader, with the bytes read so far kept.
    ///
    /// # Cancellation
    ///
    /// Cancel-safe: the bytes gathered so far stay in the reader, and the
    /// next call picks them up.
    ///
    /// # Examples
    ///
    /// ```
    /// use ioloop::io::StreamReader;
    ///
    /// ioloop::block_on(async {
    ///     let mut reader = StreamReader::new(&b"\x00\x05hello"[..]);
    ///     let len = reader.read_exact(2).await?;
    ///     let len = usize::from(u16::from_be_bytes([len[0], len[1]]));
    ///     assert_eq!(reader.read_exact(len).await?, b"hello");
    ///     Ok::<_, std::io::Error>(())
    /// })
    /// .unwrap();
    /// ```
    #[doc(alias = "readexactly")]
    pub async fn read_exact(&mut self, n: usize) -> io::Result<&[u8]> {
        let range = poll_fn(|cx| self.poll_exact(cx, n)).await?;
        Ok(self.buf.get(range))
    }

    /// Reads more from the inner reader into the [buffer](Self::buffer),
    /// even if unread bytes are there: what a frame parser calls when the
    /// buffer holds part of a frame. Returns how many bytes came; 0 is the
    /// end of the stream.
    ///
    /// The line limit does not apply: the buffer holds whatever is left
    /// unread, doubling as it must, so a parser bounds its frames itself
    /// (say, by refusing a length over its limit). A buffer grown past the
    /// limit plus 8 KiB is given back at the first read that finds it empty.
    ///
    /// # Errors
    ///
    /// Any error of the inner reader; the buffered bytes stay.
    ///
    /// # Cancellation
    ///
    /// Cancel-safe: bytes are in the reader's buffer as soon as they are
    /// read, so dropping the future loses nothing.
    ///
    /// # Examples
    ///
    /// Frames of a 2-byte big-endian length and that many bytes, parsed
    /// where they lie in the buffer:
    ///
    /// ```
    /// use ioloop::io::StreamReader;
    ///
    /// /// A whole frame at the front of `buf`: its body, and its size.
    /// fn frame(buf: &[u8]) -> Option<(&[u8], usize)> {
    ///     let len = usize::from(u16::from_be_bytes([*buf.first()?, *buf.get(1)?]));
    ///     Some((buf.get(2..2 + len)?, 2 + len))
    /// }
    ///
    /// ioloop::block_on(async {
    ///     let mut reader = StreamReader::new(&b"\x00\x05hello\x00\x02hi"[..]);
    ///     let mut bodies = Vec::new();
    ///     loop {
    ///         if let Some((body, size)) = frame(reader.buffer()) {
    ///             bodies.push(body.to_vec());
    ///             reader.consume(size);
    ///         } else if reader.fill_more().await? == 0 {
    ///             break; // the end; `buffer()` holds any partial frame
    ///         }
    ///     }
    ///     assert_eq!(bodies, [&b"hello"[..], b"hi"]);
    ///     Ok::<_, std::io::Error>(())
    /// })
    /// .unwrap();
    /// ```
    pub async fn fill_more(&mut self) -> io::Result<usize> {
        poll_fn(|cx| {
            ready!(self.poll_start(cx))?;
            // Doubling past the limit keeps a large frame's reads linear.
            let hold = self.max_line.max(self.buf.len().saturating_mul(2));
            self.poll_fill(cx, hold)
        })
        .await
    }

    /// Finds the next record ending in `delimiter`, consumes it, and returns
    /// where it sits in the buffer (delimiter included, if it came).
    /// `Ok(None)` is a clean end of stream.
    ///
    /// All progress (bytes read, how far the search got, a tail being
    /// skipped) is kept in the reader, never in the future: that is the
    /// whole of the cancel-safety argument.
    fn poll_record(
        &mut self,
        cx: &mut Context<'_>,
        delimiter: u8,
        unterminated: Unterminated,
    ) -> Poll<io::Result<Option<Range<usize>>>> {
        ready!(self.poll_start(cx))?;
        if self.scan_for != delimiter {
            // What was searched for another byte says nothing about this one.
            self.scan_for = delimiter;
            self.scanned = 0;
        }
        loop {
            let unread = self.buf.unread();
            // memchr's vectorised search: a byte loop was most of
            // `read_line`'s time. Nothing new to search (the usual case on
            // a record's first poll, between records) costs no call: its
            // dispatch was 35 instructions an echoed line, twice.
            let fresh = &unread[self.scanned..];
            if !fresh.is_empty()
                && let Some(at) = memchr::memchr(delimiter, fresh)
            {
                let len = self.scanned + at;
                let record = self.take(len + 1);
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
                self.take(usize::MAX);
                self.skip_until = Some(delimiter);
                return Poll::Ready(Err(too_long(self.max_line)));
            }
            // `scanned <= max_line` here, so the fill stays within
            // `max_line + READ_CHUNK`: the memory bound.
            if ready!(self.poll_fill(cx, self.max_line))? == 0 {
                let len = self.buf.len();
                if len == 0 {
                    return Poll::Ready(Ok(None));
                }
                return Poll::Ready(match unterminated {
                    // The stream ended mid-record: hand out what there is.
                    Unterminated::Record => Ok(Some(self.take(usize::MAX))),
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
    fn poll_exact(&mut self, cx: &mut Context<'_>, n: usize) -> Poll<io::Result<Range<usize>>> {
        ready!(self.poll_start(cx))?;
        while self.buf.len() < n {
            if ready!(self.poll_fill(cx, n.max(self.max_line)))? == 0 {
                // The partial bytes stay buffered: the caller may still want
                // them (`buffer()`), and nothing is ever thrown away.
                let msg = format!("stream ended after {} of {n} bytes", self.buf.len());
                return Poll::Ready(Err(io::Error::new(io::ErrorKind::UnexpectedEof, msg)));
            }
        }
        Poll::Ready(Ok(self.take(n)))
    }

    /// Where every read starts. One unit of the task's budget per call: a
    /// reader that is always ready (in memory, or a socket with a backlog)
    /// must not let a task that loops over it hold the loop. Then, after an
    /// overlong line was reported mid-way, reads and drops the rest of it,
    /// up to and including its delimiter. Only the current chunk is ever
    /// held, so an endless line costs one buffer.
    fn poll_start(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(ioloop_runtime::task::poll_budget(cx));
        while let Some(delimiter) = self.skip_until {
            if let Some(at) = memchr::memchr(delimiter, self.buf.unread()) {
                self.take(at + 1);
                self.skip_until = None;
                break;
            }
            self.take(usize::MAX);
            if ready!(self.poll_fill(cx, self.max_line))? == 0 {
                // The stream ended inside the overlong line: nothing left to skip.
                self.skip_until = None;
            }
        }
        Poll::Ready(Ok(()))
    }

    /// One read from the inner reader into the buffer, which may need to
    /// hold `hold` bytes at once.
    fn poll_fill(&mut self, cx: &mut Context<'_>, hold: usize) -> Poll<io::Result<usize>> {
        self.buf.poll_fill(cx, &mut self.inner, hold, usize::MAX)
    }

    /// The unread bytes, after one read from the inner reader if there were
    /// none; empty means end of stream.
    fn fill_if_empty(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<&[u8]>> {
        if self.buf.is_empty() {
            ready!(self.poll_fill(cx, self.max_line))?;
        }
        Poll::Ready(Ok(self.buf.unread()))
    }
}

impl<R> StreamReader<R> {
    /// Sets the maximum line length, in bytes: 64 KiB by default,
    /// `usize::MAX` for none.
    ///
    /// The limit counts every byte before the `\n` (or the
    /// [`read_until`](StreamReader::read_until) delimiter), a `\r` included:
    /// a line of exactly `max` bytes is accepted, one byte more is an
    /// [`InvalidData`](std::io::ErrorKind::InvalidData) error. The buffer
    /// then never grows past `max` plus one 8 KiB read.
    #[doc(alias = "limit")]
    pub fn set_max_line_length(&mut self, max: usize) {
        self.max_line = max;
    }

    /// The maximum line length, in bytes.
    pub fn max_line_length(&self) -> usize {
        self.max_line
    }

    /// The bytes read from the inner reader and not yet returned.
    pub fn buffer(&self) -> &[u8] {
        self.buf.unread()
    }

    /// The bytes allocated for the buffer: what the reader costs in memory.
    pub fn capacity(&self) -> usize {
        self.buf.capacity()
    }

    /// The inner reader.
    pub fn get_ref(&self) -> &R {
        &self.inner
    }

    /// The inner reader, mutably. Reading from it directly skips the
    /// buffered bytes.
    pub fn get_mut(&mut self) -> &mut R {
        &mut self.inner
    }

    /// Unwraps the inner reader. Bytes still buffered are dropped: take
    /// them from [`buffer`](Self::buffer) first if they matter.
    pub fn into_inner(self) -> R {
        self.inner
    }

    /// Drops the first `n` bytes of the [buffer](Self::buffer) (all of
    /// them if fewer): what a parser calls once it has taken a frame from
    /// the buffer. The same as `AsyncBufRead::consume`, with no trait to
    /// import.
    pub fn consume(&mut self, n: usize) {
        self.take(n);
    }

    /// [`consume`](Self::consume), returning where the bytes sit, and
    /// keeping the search position in step.
    fn take(&mut self, n: usize) -> Range<usize> {
        let taken = self.buf.take(n);
        self.scanned = self.scanned.saturating_sub(taken.len());
        taken
    }
}

/// Serves buffered bytes first, so reads mixed with `read_line` see the
/// stream in order.
impl<R: AsyncRead + Unpin> AsyncRead for StreamReader<R> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        out: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        if out.is_empty() {
            return Poll::Ready(Ok(0));
        }
        ready!(this.poll_start(cx))?;
        if this.buf.is_empty() && out.len() >= READ_CHUNK {
            // Nothing buffered and the caller's buffer is at least a chunk:
            // going through ours would only add a copy.
            return Pin::new(&mut this.inner).poll_read(cx, out);
        }
        let available = ready!(this.fill_if_empty(cx))?;
        let n = available.len().min(out.len());
        out[..n].copy_from_slice(&available[..n]);
        this.take(n);
        Poll::Ready(Ok(n))
    }
}

/// Hands out the reader's own buffer; a fill reads only when it is empty
/// ([`fill_more`](StreamReader::fill_more) reads more).
///
/// # Examples
///
/// ```
/// use futures_util::io::AsyncBufReadExt;
/// use futures_util::stream::TryStreamExt;
/// use ioloop::io::StreamReader;
///
/// ioloop::block_on(async {
///     let reader = StreamReader::new(&b"a\nb\r\nc"[..]);
///     let lines: Vec<String> = reader.lines().try_collect().await?;
///     assert_eq!(lines, ["a", "b", "c"]);
///     Ok::<_, std::io::Error>(())
/// })
/// .unwrap();
/// ```
impl<R: AsyncRead + Unpin> AsyncBufRead for StreamReader<R> {
    fn poll_fill_buf(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<&[u8]>> {
        let this = self.get_mut();
        ready!(this.poll_start(cx))?;
        this.fill_if_empty(cx)
    }

    fn consume(self: Pin<&mut Self>, amt: usize) {
        self.get_mut().take(amt);
    }
}

impl<R: fmt::Debug> fmt::Debug for StreamReader<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StreamReader")
            .field("inner", &self.inner)
            .field("buffered", &self.buf.len())
            .field("max_line_length", &self.max_line)
            .finish()
    }
}

/// Reads once from `reader` and appends what came to `buf`, in its spare
/// capacity: tokio's `read_buf`, for any [`AsyncRead`] (a TCP or Unix
/// stream, a half of one, a [`StreamReader`]). Returns how many bytes
/// came; 0 is the end of the stream. It takes the reader as `copy` does:
/// `&mut stream`, or a `&TcpStream` as it is.
///
/// The read is offered the spare capacity, at least 8 KiB (reserved if
/// there is less) and at most 16 KiB. With no `unsafe`, that space is
/// zeroed before each poll of the read: about 80 ns for 16 KiB, against
/// 1.3 µs to pass 16 KiB through a Unix socket; 64 KiB would cost 1.2 µs.
///
/// # Errors
///
/// Any error of `reader`; `buf` is left as it was.
///
/// # Cancellation
///
/// Cancel-safe: within one poll, `buf` is extended with zeros, read into,
/// and cut back to the bytes read, with no `await` in between. A dropped
/// future never leaves zeros in `buf`, and bytes are in `buf` as soon as
/// they are read.
///
/// # Examples
///
/// ```
/// ioloop::block_on(async {
///     let mut buf = b"already here, ".to_vec();
///     let mut reader = &b"then more"[..];
///     while ioloop::io::read_buf(&mut reader, &mut buf).await? > 0 {}
///     assert_eq!(buf, b"already here, then more");
///     Ok::<_, std::io::Error>(())
/// })
/// .unwrap();
/// ```
pub async fn read_buf(mut reader: impl AsyncRead + Unpin, buf: &mut Vec<u8>) -> io::Result<usize> {
    poll_fn(|cx| {
        buf.reserve(READ_CHUNK);
        let offer = (buf.capacity() - buf.len()).min(2 * READ_CHUNK);
        let read = |spare: &mut [u8]| Pin::new(&mut reader).poll_read(cx, spare);
        let filled = |read: &Poll<io::Result<usize>>| match read {
            Poll::Ready(Ok(n)) => *n,
            _ => 0,
        };
        fill_spare(buf, offer, read, filled).map_ok(|n| n.min(offer))
    })
    .await
}

/// The error for a line over the limit; its message names the limit, so a
/// server can pass it on as is.
fn too_long(max_line: usize) -> io::Error {
    let msg = format!("line longer than the maximum line length of {max_line} bytes");
    io::Error::new(io::ErrorKind::InvalidData, msg)
}

/// The unit an [`InBuf`] is allocated and grown in, 8 KiB: one `recv` per
/// few KiB on a busy stream, a cheap buffer on an idle one. It is also the
/// slack in the memory bound (what may be held, plus this).
const READ_CHUNK: usize = 8 * 1024;

/// The least free space a read is offered: half a chunk, so that a short
/// partial line moved to the front of a full buffer leaves room for a
/// worthwhile read without doubling the buffer.
const MIN_READ: usize = READ_CHUNK / 2;

/// The stack buffer the first read of an unallocated [`InBuf`] goes into:
/// a connection that never sends costs no inbuf, where allocating at the
/// first attempt would cost 8 KiB each. The price is one copy of up to
/// 1 KiB, once.
const PROBE: usize = 1024;

/// Bytes read and not yet consumed: the lesson's `inbuf`, the buffer a
/// [`StreamReader`] keeps, for a layer of one's own over a socket (a
/// protocol's parser, a callback layer such as ioloop-callbacks').
/// [`poll_fill`](Self::poll_fill) reads into it, within a memory bound;
/// [`unread`](Self::unread) shows what is there, and
/// [`consume`](Self::consume) drops a prefix by moving a cursor, not the
/// bytes, so a burst of pipelined messages costs no quadratic shifting.
///
/// In one allocation, made at the first read that brings bytes:
/// `[ consumed | unread: start..end | free: end.. ]`. Every byte of
/// `bytes` is initialized (the crate forbids `unsafe`), so free space is
/// zeroed once per growth, not before each read.
///
/// # Examples
///
/// The lesson's `_read`: fill, cut out each whole line, keep the partial
/// rest for the next fill.
///
/// ```
/// use std::future::poll_fn;
///
/// use ioloop::io::InBuf;
///
/// ioloop::block_on(async {
///     let mut peer = &b"GET /\nHost: x\n"[..];
///     let (mut inbuf, mut lines) = (InBuf::default(), Vec::new());
///     loop {
///         if let Some(at) = inbuf.unread().iter().position(|&b| b == b'\n') {
///             lines.push(inbuf.unread()[..at].to_vec());
///             inbuf.consume(at + 1);
///         } else if poll_fn(|cx| inbuf.poll_fill(cx, &mut peer, 1024, usize::MAX)).await? == 0 {
///             break; // the end of the stream
///         }
///     }
///     assert_eq!(lines, [&b"GET /"[..], b"Host: x"]);
///     assert!(inbuf.is_empty());
///     Ok::<_, std::io::Error>(())
/// })
/// .unwrap();
/// ```
#[derive(Debug, Default)]
pub struct InBuf {
    bytes: Vec<u8>,
    start: usize,
    end: usize,
}

impl InBuf {
    /// The unread bytes, oldest first.
    #[inline]
    pub fn unread(&self) -> &[u8] {
        &self.bytes[self.start..self.end]
    }

    /// How many bytes are unread.
    #[inline]
    pub fn len(&self) -> usize {
        self.end - self.start
    }

    /// Whether no byte is unread.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.start == self.end
    }

    /// Bytes allocated.
    pub(crate) fn capacity(&self) -> usize {
        self.bytes.capacity()
    }

    /// Drops the first `n` unread bytes (all of them, if fewer): the
    /// lesson's `del conn.inbuf[:n]`, done by moving a cursor.
    #[inline]
    pub fn consume(&mut self, n: usize) {
        self.take(n);
    }

    /// [`consume`](Self::consume), returning where the bytes sit, so the
    /// caller can still borrow them with [`get`](Self::get): nothing moves
    /// until the next fill.
    #[inline]
    pub(crate) fn take(&mut self, n: usize) -> Range<usize> {
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

    /// Bytes by their place in storage, as [`take`](Self::take) returned
    /// it.
    #[inline]
    pub(crate) fn get(&self, range: Range<usize>) -> &[u8] {
        &self.bytes[range]
    }

    /// Appends `data` after the unread bytes as if it had been read, with
    /// no limit: for bytes that came another way, or to drive a parser in
    /// a test without a socket (asyncio's `feed_data`).
    pub fn extend(&mut self, data: &[u8]) {
        self.bytes.truncate(self.end);
        self.bytes.drain(..self.start);
        self.bytes.extend_from_slice(data);
        self.start = 0;
        self.end = self.bytes.len();
    }

    /// Reads once from `reader` after the unread bytes, at most `at_most`
    /// of them (a limit of one's own on what is held; `usize::MAX` for
    /// none). `hold` is how many unread bytes the caller may need at once
    /// (a line limit, or `n` for `read_exact`): the buffer never grows
    /// past `hold`, or past what it already holds, plus 8 KiB, whatever
    /// the peer sends. Nothing is allocated until a read brings bytes.
    ///
    /// Returns the number of bytes read; 0 means end of stream.
    /// `Interrupted` is retried here (and in the first fill).
    ///
    /// # Errors
    ///
    /// Any other error of `reader`; the unread bytes stay.
    ///
    /// # Panics
    ///
    /// In a debug build, if `at_most` is 0: a read of 0 bytes would look
    /// like the end of the stream (a release build returns `Ok(0)`).
    pub fn poll_fill<R: AsyncRead + Unpin>(
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
        if self.is_empty() && self.bytes.len() > bound {
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
        // A `Vec` holds at most `isize::MAX` bytes: doubling cannot overflow.
        let size = (self.bytes.len() * 2).clamp(self.end + READ_CHUNK, bound);
        // `resize` alone may over-allocate (amortized doubling); the bound is
        // a promise about memory, so ask for exactly `size`.
        self.bytes.reserve_exact(size - self.bytes.len());
        self.bytes.resize(size, 0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extend_and_consume_keep_the_order() {
        let mut buf = InBuf::default();
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
        let mut buf = InBuf::default();
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
