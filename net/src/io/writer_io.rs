//! Moving a `StreamWriter`'s bytes: the try-at-once behind `write`, the poll
//! functions behind `drain`, `flush` and `close`, and `AsyncWrite`.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, Waker, ready};

use futures_io::AsyncWrite;

use super::writer::StreamWriter;

/// Writes as much of `data` as `inner` takes right now, without waiting.
/// Returns how much it took, and the error that stopped it, if one did.
///
/// It polls with a waker that does nothing. That is safe: `write` must not
/// wait, so nobody needs waking now, and if the writer registers the no-op
/// waker for writability (it returns `Pending`), the task that later awaits
/// `drain` polls the writer again with its real waker, which replaces this
/// one. `drain` needs `&mut` to the `StreamWriter`, so no drain can be
/// waiting on this writer while `write` runs. (Another handle writing to the
/// same socket from another task could lose its wakeup; two writers
/// interleaving on one stream is already a bug.)
///
/// It keeps trying while the writer makes progress. For a socket, a partial
/// write means the send buffer is full, so the extra try costs one
/// `EAGAIN`, and only on that slow path; writers that take a bounded piece
/// per call (a pipe, a TLS layer) would otherwise leave bytes queued that
/// they would take right now, and those would wait for the next `drain`.
pub(super) fn write_now<W: AsyncWrite + Unpin>(
    inner: &mut W,
    data: &[u8],
) -> (usize, Option<io::Error>) {
    let mut cx = Context::from_waker(Waker::noop());
    let mut sent = 0;
    while sent < data.len() {
        match Pin::new(&mut *inner).poll_write(&mut cx, &data[sent..]) {
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

/// A writer that accepted nothing without saying why would be polled
/// forever; std's `write_all` reports it the same way.
fn write_zero() -> io::Error {
    io::Error::new(io::ErrorKind::WriteZero, "the writer accepted no bytes")
}

impl<W: AsyncWrite + Unpin> StreamWriter<W> {
    /// `drain`: at or below `high`, one try without waiting; above it, send
    /// down to `low`.
    pub(super) fn poll_drain(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if let Some(err) = self.error.take() {
            return Poll::Ready(Err(err));
        }
        if self.buf.len() > self.high {
            return self.poll_send_down_to(cx, self.low);
        }
        if self.buf.len() > 0 {
            let (sent, error) = write_now(&mut self.inner, self.buf.unsent());
            self.buf.advance(sent);
            if let Some(err) = error {
                return Poll::Ready(Err(err));
            }
        }
        Poll::Ready(Ok(()))
    }

    /// Sends until at most `target` bytes are queued, waiting on the inner
    /// writer whenever it refuses. Progress is recorded in the buffer after
    /// every call, so a dropped future loses nothing.
    pub(super) fn poll_send_down_to(
        &mut self,
        cx: &mut Context<'_>,
        target: usize,
    ) -> Poll<io::Result<()>> {
        if let Some(err) = self.error.take() {
            return Poll::Ready(Err(err));
        }
        while self.buf.len() > target {
            match ready!(Pin::new(&mut self.inner).poll_write(cx, self.buf.unsent())) {
                Ok(0) => return Poll::Ready(Err(write_zero())),
                Ok(n) => self.buf.advance(n),
                Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                Err(err) => return Poll::Ready(Err(err)),
            }
        }
        Poll::Ready(Ok(()))
    }

    /// `flush`: everything sent, then the inner writer flushed.
    pub(super) fn poll_flush_all(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.poll_send_down_to(cx, 0))?;
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    /// `close`: everything sent, then the inner writer closed (its
    /// `poll_close` flushes too).
    pub(super) fn poll_close_all(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.poll_send_down_to(cx, 0))?;
        Pin::new(&mut self.inner).poll_close(cx)
    }
}

/// Accepts whole slices, like [`StreamWriter::write`], with backpressure
/// before rather than after: when more than the high-water mark is queued,
/// `poll_write` first sends down to the low-water mark, waiting if it must.
/// That keeps a combinator that writes in a loop (`write_all`, `copy`)
/// within the high-water mark plus one slice, as `drain` after each `write`
/// would. Accepted bytes may still be queued: `flush` or `close` when done.
///
/// Unlike `write`, errors are returned at once, not kept for later: if the
/// inner writer fails before taking any of a slice, `poll_write` returns the
/// error and queues nothing, so a retry does not duplicate bytes.
///
/// # Examples
///
/// ```
/// use futures_util::io::AsyncWriteExt;
/// use ioloop::io::StreamWriter;
///
/// ioloop::block_on(async {
///     let mut writer = StreamWriter::new(Vec::new());
///     futures_util::io::copy(&b"copied bytes"[..], &mut writer).await?;
///     AsyncWriteExt::close(&mut writer).await?;
///     assert_eq!(writer.get_ref(), b"copied bytes");
///     Ok::<_, std::io::Error>(())
/// })
/// .unwrap();
/// ```
impl<W: AsyncWrite + Unpin> AsyncWrite for StreamWriter<W> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        if this.buf.len() > this.high {
            ready!(this.poll_send_down_to(cx, this.low))?;
        } else if let Some(err) = this.error.take() {
            return Poll::Ready(Err(err));
        }
        if this.buf.len() > 0 || data.is_empty() {
            this.buf.push(data);
            return Poll::Ready(Ok(data.len()));
        }
        match write_now(&mut this.inner, data) {
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

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.get_mut().poll_flush_all(cx)
    }

    fn poll_close(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.get_mut().poll_close_all(cx)
    }
}
