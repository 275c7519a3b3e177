//! [`StreamWriter`], whole: `write` that never blocks, `drain` where a slow
//! peer pushes back, its water marks and accessors, and `AsyncWrite`. The
//! bytes wait in an [`OutBuf`], whose send loop, public, is here too (the
//! lesson's `outbuf`; ioloop-callbacks' `Connection` keeps one).

use std::collections::VecDeque;
use std::fmt;
use std::future::poll_fn;
use std::io::{self, IoSlice};
use std::pin::Pin;
use std::task::{Context, Poll, Waker, ready};

use futures_io::AsyncWrite;

pub use crate::outbox::OutBuf;
use crate::outbox::gathering;

/// A buffered writer with asyncio's `write` + `drain` contract:
/// [`write`](Self::write) never blocks and never loses data,
/// [`drain`](Self::drain) is where the program waits for a slow peer.
///
/// `write` hands the bytes to the inner writer at once when nothing is
/// queued and keeps only what it did not take: the lesson's partial
/// `send`, with the rest in the `outbuf`. Over an ioloop stream socket
/// (`TcpStream`, `UnixStream`, their halves), the small writes one poll
/// makes are gathered by the socket and leave together, in one `send`, at
/// the next `drain` or when that poll returns, whichever comes first: a
/// reply written in four pieces costs one syscall, with no `flush`. Unlike
/// asyncio's `write`, nothing reaches the kernel before then; unlike
/// tokio's `BufWriter`, nothing waits for a `flush`.
///
/// Only a socket's gathered bytes go out in the background; the writer's
/// own queue moves only when the owner calls `write`, `drain`, `flush` or
/// `close`. So both water marks default to 0 and `drain` sends everything;
/// raise them with
/// [`set_write_buffer_limits`](Self::set_write_buffer_limits) for a
/// producer that comes back to `drain` soon.
///
/// The buffer holds only what the inner writer refused: a program that
/// drains after each write holds at most its high-water mark plus one
/// write. Once it empties, an allocation over 64 KiB is given back.
/// Dropping a `StreamWriter` drops its queued bytes: call
/// [`flush`](Self::flush) or [`close`](Self::close) first.
///
/// # Examples
///
/// ```
/// use ioloop::io::StreamWriter;
///
/// ioloop::block_on(async {
///     let mut writer = StreamWriter::new(Vec::new());
///     writer.write(b"Hello!\n");
///     writer.write(b"[echo] hi\n");
///     writer.drain().await?;
///     assert_eq!(writer.get_ref(), b"Hello!\n[echo] hi\n");
///     Ok::<_, std::io::Error>(())
/// })
/// .unwrap();
/// ```
pub struct StreamWriter<W> {
    inner: W,
    buf: Queue,
    high: usize,
    low: usize,
    /// An error the inner writer returned during [`write`](Self::write),
    /// which cannot return one: the next drain, flush or close does.
    error: Option<io::Error>,
}

impl<W: AsyncWrite + Unpin> StreamWriter<W> {
    /// Wraps `inner`, with an empty buffer and both water marks at 0
    /// (`drain` sends everything).
    pub fn new(inner: W) -> Self {
        StreamWriter {
            inner,
            buf: Queue::default(),
            high: 0,
            low: 0,
            error: None,
        }
    }

    /// Queues `data` to be sent, without waiting and without losing any of
    /// it.
    ///
    /// If nothing is queued, the inner writer is tried at once, without
    /// waiting, and only what it does not take is kept; otherwise `data`
    /// goes behind what is queued, so the order is kept. A stream socket
    /// gathers small writes, to send at the next `drain` or when the poll
    /// returns (see the type's docs). Call [`drain`](Self::drain) to wait
    /// for the peer.
    ///
    /// An error from that try is kept, and the next `drain`, `flush` or
    /// `close` returns it. The queued bytes are kept all the same, and a
    /// later drain tries them again.
    ///
    /// # Examples
    ///
    /// ```
    /// use ioloop::io::StreamWriter;
    ///
    /// let mut writer = StreamWriter::new(Vec::new());
    /// // A Vec takes everything at once: nothing is left queued.
    /// writer.write(b"ping\n");
    /// assert_eq!(writer.buffered(), 0);
    /// assert_eq!(writer.get_ref(), b"ping\n");
    /// ```
    pub fn write(&mut self, data: &[u8]) {
        let mut sent = 0;
        if self.buf.len() == 0 && self.error.is_none() {
            (sent, self.error) = gathering(|| write_now(&mut self.inner, data));
        }
        if sent < data.len() {
            self.buf.push(&data[sent..]);
        }
    }

    /// [`write`](Self::write) for a buffer the writer may keep (a
    /// `Vec<u8>`, an `Arc<[u8]>`, a `bytes::Bytes`: anything that is
    /// `AsRef<[u8]>`): what the inner writer does not take at once is
    /// queued as it is, without a copy, and sent as the writer takes it,
    /// 16 KiB a send, each a unit of the task's budget. For a large payload
    /// (a file's contents, a cached value), which `write` would copy.
    ///
    /// # Examples
    ///
    /// ```
    /// use ioloop::io::StreamWriter;
    ///
    /// ioloop::block_on(async {
    ///     let mut writer = StreamWriter::new(Vec::new());
    ///     writer.write(b"$5\r\n");
    ///     writer.write_owned(b"hello".to_vec());
    ///     writer.write(b"\r\n");
    ///     writer.drain().await?;
    ///     assert_eq!(writer.get_ref(), b"$5\r\nhello\r\n");
    ///     Ok::<_, std::io::Error>(())
    /// })
    /// .unwrap();
    /// ```
    pub fn write_owned<B: AsRef<[u8]> + Send + Sync + 'static>(&mut self, data: B) {
        let mut sent = 0;
        if self.buf.len() == 0 && self.error.is_none() {
            (sent, self.error) = gathering(|| write_now(&mut self.inner, data.as_ref()));
        }
        if sent < data.as_ref().len() {
            self.buf.push_owned(Box::new(data), sent);
        }
    }

    /// Waits until the queued bytes are at or below the low-water mark:
    /// the backpressure point.
    ///
    /// With queued bytes at or below a high-water mark above 0, it makes
    /// one attempt to send them (and to flush the inner writer) without
    /// waiting and returns at once. Otherwise it sends, waiting for the
    /// inner writer whenever it refuses, until at most the low-water mark is
    /// queued; at a low-water mark of 0 it then flushes the inner writer,
    /// so with the default limits (0, 0) everything is sent, a socket's
    /// gathered bytes included.
    ///
    /// # Errors
    ///
    /// An error kept from an earlier [`write`](Self::write), else any error
    /// of the inner writer. Unsent bytes stay queued.
    ///
    /// # Cancellation
    ///
    /// Cancel-safe: the bytes are in the writer, and what was sent is
    /// accounted for, so dropping the future loses and repeats nothing.
    ///
    /// # Examples
    ///
    /// ```
    /// use ioloop::io::StreamWriter;
    ///
    /// ioloop::block_on(async {
    ///     let mut writer = StreamWriter::new(Vec::new());
    ///     for i in 0..3 {
    ///         writer.write(format!("line {i}\n").as_bytes());
    ///         writer.drain().await?;
    ///         assert_eq!(writer.buffered(), 0);
    ///     }
    ///     assert_eq!(writer.get_ref(), b"line 0\nline 1\nline 2\n");
    ///     Ok::<_, std::io::Error>(())
    /// })
    /// .unwrap();
    /// ```
    pub async fn drain(&mut self) -> io::Result<()> {
        // Decided once per call, not per poll: a drain that starts above the
        // high-water mark goes all the way down to the low one, even if a
        // poll on the way finds the queue back between the two.
        if self.high == 0 && self.buf.len() == 0 && self.error.is_none() {
            // Nothing of our own queued: one flush, which a socket that
            // gathered this poll's writes answers at once (one `send`) in
            // the usual case. Only if it must wait does the drain below.
            let mut now = Context::from_waker(Waker::noop());
            if let Poll::Ready(flushed) = Pin::new(&mut self.inner).poll_flush(&mut now) {
                return flushed;
            }
        }
        if self.buf.len() > self.high || self.high == 0 {
            let low = self.low;
            return poll_fn(|cx| {
                ready!(self.poll_send_down_to(cx, low))?;
                if low > 0 {
                    return Poll::Ready(Ok(()));
                }
                // Down to nothing: what the inner writer holds goes too (a
                // socket's gathered writes).
                Pin::new(&mut self.inner).poll_flush(cx)
            })
            .await;
        }
        // At or below it: one try without waiting, as in `write_now` (what
        // the writer does not take now is no error), then one flush: a
        // socket sends what it gathered from this poll's writes.
        let mut now = Context::from_waker(Waker::noop());
        let tried = match self.poll_send_down_to(&mut now, 0) {
            Poll::Ready(Ok(())) => Pin::new(&mut self.inner).poll_flush(&mut now),
            other => other,
        };
        match tried {
            Poll::Ready(Err(err)) if err.kind() != io::ErrorKind::WouldBlock => Err(err),
            _ => Ok(()),
        }
    }

    /// Sends everything queued, then flushes the inner writer.
    ///
    /// # Errors
    ///
    /// As [`drain`](Self::drain), and any error of the inner flush.
    ///
    /// # Cancellation
    ///
    /// Cancel-safe, as [`drain`](Self::drain).
    pub async fn flush(&mut self) -> io::Result<()> {
        poll_fn(|cx| Pin::new(&mut *self).poll_flush(cx)).await
    }

    /// Sends everything queued, then closes the inner writer (for a TCP
    /// stream: shuts its write side down, so the peer reads end of stream).
    /// No queued byte is lost on close.
    ///
    /// # Errors
    ///
    /// As [`drain`](Self::drain), and any error of the inner close.
    ///
    /// # Cancellation
    ///
    /// Cancel-safe, as [`drain`](Self::drain); calling it again finishes
    /// the job.
    pub async fn close(&mut self) -> io::Result<()> {
        poll_fn(|cx| Pin::new(&mut *self).poll_close(cx)).await
    }

    /// Before queueing more: above the high-water mark, sends down to the
    /// low one; else returns the error a partial write kept, if any.
    #[inline]
    fn poll_room(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        // Down to what is queued: nothing to send, only the error to return.
        let above = self.buf.len() > self.high;
        let target = if above { self.low } else { self.buf.len() };
        self.poll_send_down_to(cx, target)
    }

    /// Sends until at most `target` bytes are queued, after returning a
    /// kept error if there is one.
    // Inlined, with `OutBuf`'s: `drain` comes here once per echoed line,
    // mostly with nothing queued, and a call costs more than the check
    // (`benches/echo_cost.sh --top`: out of line, 28 to 32 instructions).
    #[inline(always)]
    fn poll_send_down_to(&mut self, cx: &mut Context<'_>, target: usize) -> Poll<io::Result<()>> {
        if let Some(err) = self.error.take() {
            return Poll::Ready(Err(err));
        }
        self.buf.poll_send_down_to(cx, &mut self.inner, target)
    }
}

impl<W> StreamWriter<W> {
    /// Sets the high- and low-water marks [`drain`](StreamWriter::drain)
    /// works with, in bytes: asyncio's `set_write_buffer_limits`, high mark
    /// first. `drain` returns at once while at most `high` bytes are
    /// queued, and otherwise sends until at most `low` are.
    ///
    /// # Panics
    ///
    /// If `low > high`, as asyncio raises `ValueError`: such limits would
    /// make `drain` return with more queued than it was called with.
    pub fn set_write_buffer_limits(&mut self, high: usize, low: usize) {
        assert!(
            low <= high,
            "StreamWriter::set_write_buffer_limits: low-water mark {low} is above high-water mark {high}"
        );
        self.high = high;
        self.low = low;
    }

    /// The high- and low-water marks, in bytes, high first.
    pub fn write_buffer_limits(&self) -> (usize, usize) {
        (self.high, self.low)
    }

    /// How many bytes are queued, not yet taken by the inner writer.
    #[doc(alias = "get_write_buffer_size")]
    pub fn buffered(&self) -> usize {
        self.buf.len()
    }

    /// The inner writer.
    pub fn get_ref(&self) -> &W {
        &self.inner
    }

    /// The inner writer, mutably. Writing to it directly goes ahead of the
    /// queued bytes.
    pub fn get_mut(&mut self) -> &mut W {
        &mut self.inner
    }

    /// Unwraps the inner writer. Queued bytes are dropped: flush first.
    pub fn into_inner(self) -> W {
        self.inner
    }
}

/// Accepts whole slices, like [`StreamWriter::write`], with backpressure
/// before rather than after: above the high-water mark, `poll_write` first
/// sends down to the low-water mark, so `write_all` or `copy` stay within
/// the high-water mark plus one slice. Accepted bytes may still be queued:
/// `flush` or `close` when done.
///
/// Unlike `write`, errors are returned at once: if the inner writer fails
/// before taking any of a slice, `poll_write` returns the error and queues
/// nothing, so a retry does not duplicate bytes.
impl<W: AsyncWrite + Unpin> AsyncWrite for StreamWriter<W> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        ready!(this.poll_room(cx))?;
        if this.buf.len() > 0 || data.is_empty() {
            this.buf.push(data);
            return Poll::Ready(Ok(data.len()));
        }
        match gathering(|| write_now(&mut this.inner, data)) {
            (0, Some(err)) => Poll::Ready(Err(err)),
            // Part went out before the error: report that part accepted,
            // and keep the error for the next call.
            (sent, Some(err)) => {
                this.error = Some(err);
                Poll::Ready(Ok(sent))
            }
            (sent, None) => {
                this.buf.push(&data[sent..]);
                Poll::Ready(Ok(data.len()))
            }
        }
    }

    /// Several slices at once (a header and a body, say): with nothing
    /// queued, one vectored write is tried at once (one `sendmsg` on a
    /// socket) and what it did not take is queued; otherwise the slices
    /// join the queue, which a later send drains whole.
    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        ready!(this.poll_room(cx))?;
        let total = bufs.iter().map(|b| b.len()).sum();
        let mut sent = 0;
        if this.buf.len() == 0 && total > 0 {
            let mut now = Context::from_waker(Waker::noop());
            match gathering(|| Pin::new(&mut this.inner).poll_write_vectored(&mut now, bufs)) {
                Poll::Ready(Ok(n)) => sent = n.min(total),
                // Not taken now: all of it waits for `drain`.
                Poll::Ready(Err(err)) if err.kind() == io::ErrorKind::WouldBlock => {}
                Poll::Ready(Err(err)) if err.kind() == io::ErrorKind::Interrupted => {}
                Poll::Ready(Err(err)) => return Poll::Ready(Err(err)),
                Poll::Pending => {}
            }
        }
        for buf in bufs {
            let skip = sent.min(buf.len());
            sent -= skip;
            this.buf.push(&buf[skip..]);
        }
        Poll::Ready(Ok(total))
    }

    /// Everything sent, then the inner writer flushed.
    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.poll_send_down_to(cx, 0))?;
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    /// Everything sent, then the inner writer closed (its `poll_close`
    /// flushes too).
    fn poll_close(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.poll_send_down_to(cx, 0))?;
        Pin::new(&mut self.inner).poll_close(cx)
    }
}

impl<W: fmt::Debug> fmt::Debug for StreamWriter<W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StreamWriter")
            .field("inner", &self.inner)
            .field("buffered", &self.buf.len())
            .field("high", &self.high)
            .field("low", &self.low)
            .field("error", &self.error)
            .finish()
    }
}

/// Writes as much of `data` as `inner` takes right now, without waiting.
/// Returns how much it took, and the error that stopped it, if one did.
///
/// It polls with a waker that does nothing, which is sound: `write` must
/// not wait, so nobody needs waking now, and if the writer keeps the no-op
/// waker (it returns `Pending`), the task that later awaits `drain` polls
/// again with its real waker, which replaces it. `drain` needs `&mut self`,
/// so no drain can be waiting meanwhile.
///
/// It keeps trying while the writer makes progress: for a socket a partial
/// write means the send buffer is full (one extra `EAGAIN`, on the slow
/// path only), but writers that take a bounded piece per call (a pipe, a
/// TLS layer) would otherwise leave bytes queued that they would take now.
fn write_now<W: AsyncWrite + Unpin>(inner: &mut W, data: &[u8]) -> (usize, Option<io::Error>) {
    let mut cx = Context::from_waker(Waker::noop());
    let mut sent = 0;
    while sent < data.len() {
        // Vectored, if of one slice: a socket gathers there, and keeps its
        // `poll_write` for raw writes (`Sock::poll_write_one`).
        let rest = [IoSlice::new(&data[sent..])];
        match Pin::new(&mut *inner).poll_write_vectored(&mut cx, &rest) {
            Poll::Ready(Ok(0)) => return (sent, Some(write_zero())),
            Poll::Ready(Ok(n)) => sent += n.min(data.len() - sent),
            Poll::Ready(Err(err)) if err.kind() == io::ErrorKind::Interrupted => {}
            // Not an error here: the bytes wait for `drain`.
            Poll::Ready(Err(err)) if err.kind() == io::ErrorKind::WouldBlock => break,
            Poll::Ready(Err(err)) => return (sent, Some(err)),
            Poll::Pending => break,
        }
    }
    (sent, None)
}

/// The send loop `StreamWriter` and a layer of one's own (ioloop-callbacks'
/// `Connection`) share, over any writer.
impl OutBuf {
    /// Sends until at most `target` bytes are queued (0: all of them),
    /// `Pending` with the task's waker left on `writer` whenever it
    /// refuses: the lesson's `on_writable`, with its
    /// `del conn.outbuf[:sent]`. Only what the writer took leaves the
    /// buffer, recorded after every call, so a dropped future loses and
    /// repeats nothing. An empty buffer makes no call at all. At most
    /// 16 KiB go to each write.
    ///
    /// # Errors
    ///
    /// The first error of `writer` but `Interrupted` (retried), and
    /// [`WriteZero`](io::ErrorKind::WriteZero) if it takes no byte; the
    /// bytes it did not take stay queued.
    #[inline(always)]
    pub fn poll_send_down_to<W: AsyncWrite + Unpin>(
        &mut self,
        cx: &mut Context<'_>,
        writer: &mut W,
        target: usize,
    ) -> Poll<io::Result<()>> {
        while self.len() > target {
            // A piece at a time, as `Queue`'s owned buffers go (`PIECE`).
            let unsent = self.unsent();
            let piece = &unsent[..unsent.len().min(PIECE)];
            match ready!(Pin::new(&mut *writer).poll_write(cx, piece)) {
                Ok(0) => return Poll::Ready(Err(write_zero())),
                Ok(n) => self.advance(n.min(piece.len())),
                Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                Err(err) => return Poll::Ready(Err(err)),
            }
        }
        Poll::Ready(Ok(()))
    }
}

/// The most of a queue one send is given (copied bytes or an owned
/// buffer), each send a unit of the task's budget, so a large payload
/// leaves the loop to others between pieces instead of going out whole in
/// one poll (`benches/kv_big_value.sh`, a 100 MiB value going out while
/// another client PINGs: its slowest PING 4.4-5.8 ms, tokio's 4.5-5.6;
/// given whole to each send, 7-12 ms).
const PIECE: usize = 16 * 1024;

/// A buffer given to [`StreamWriter::write_owned`].
type Owned = Box<dyn AsRef<[u8]> + Send + Sync>;

/// What a [`StreamWriter`] holds: nothing until the inner writer first
/// refuses bytes, then a [`Parts`] on the heap, kept for later. A socket
/// takes (or gathers) what a writer writes, so most writers never queue;
/// and a connection's writer lives in its task's future for the
/// connection's whole life: one pointer there instead of 48 bytes is 40
/// bytes less per idle connection (`benches/compare.sh --only idle`).
#[derive(Default)]
struct Queue(Option<Box<Parts>>);

impl Queue {
    #[inline]
    fn len(&self) -> usize {
        self.0.as_ref().map_or(0, |parts| parts.len())
    }

    fn push(&mut self, data: &[u8]) {
        if !data.is_empty() {
            self.0.get_or_insert_default().push(data);
        }
    }

    fn push_owned(&mut self, data: Owned, from: usize) {
        self.0.get_or_insert_default().push_owned(data, from);
    }

    #[inline(always)]
    fn poll_send_down_to<W: AsyncWrite + Unpin>(
        &mut self,
        cx: &mut Context<'_>,
        writer: &mut W,
        target: usize,
    ) -> Poll<io::Result<()>> {
        match &mut self.0 {
            Some(parts) => parts.poll_send_down_to(cx, writer, target),
            None => Poll::Ready(Ok(())),
        }
    }
}

/// A queue's bytes: copied bytes, then buffers queued as they are
/// ([`StreamWriter::write_owned`]), sent in that order. Bytes written
/// while owned buffers wait go behind them, as one more.
#[derive(Default)]
struct Parts {
    bytes: OutBuf,
    owned: VecDeque<(Owned, usize)>,
    /// The unsent bytes of `owned`.
    owned_len: usize,
}

impl Parts {
    #[inline]
    fn len(&self) -> usize {
        self.bytes.len() + self.owned_len
    }

    fn push(&mut self, data: &[u8]) {
        if self.owned_len == 0 {
            self.bytes.push(data);
        } else if !data.is_empty() {
            self.push_owned(Box::new(data.to_vec()), 0);
        }
    }

    /// Queues `data` from its byte `from` on.
    fn push_owned(&mut self, data: Owned, from: usize) {
        self.owned_len += (*data).as_ref().len() - from;
        self.owned.push_back((data, from));
    }

    /// [`OutBuf::poll_send_down_to`], through the owned buffers too.
    #[inline(always)]
    fn poll_send_down_to<W: AsyncWrite + Unpin>(
        &mut self,
        cx: &mut Context<'_>,
        writer: &mut W,
        target: usize,
    ) -> Poll<io::Result<()>> {
        ready!(
            self.bytes
                .poll_send_down_to(cx, writer, target.saturating_sub(self.owned_len))
        )?;
        while self.len() > target {
            let (data, from) = self.owned.front_mut().expect("owned bytes are queued");
            let all = &(**data).as_ref()[*from..];
            let rest = &all[..all.len().min(PIECE)];
            match ready!(Pin::new(&mut *writer).poll_write(cx, rest)) {
                Ok(0) => return Poll::Ready(Err(write_zero())),
                Ok(n) => {
                    let n = n.min(rest.len());
                    (*from, self.owned_len) = (*from + n, self.owned_len - n);
                    if n == all.len() {
                        self.owned.pop_front();
                    }
                }
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
fn write_zero() -> io::Error {
    io::Error::new(io::ErrorKind::WriteZero, "the writer accepted no bytes")
}
