//! `StreamWriter`: a write that never blocks, and `drain`, the point where a
//! slow peer pushes back (the lesson's `outbuf`, `queue_send` and
//! `on_writable`).

use std::future::poll_fn;
use std::io;

use futures_io::AsyncWrite;

use super::write_buf::WriteBuf;

/// A buffered writer with asyncio's `write` + `drain` contract:
/// [`write`](Self::write) never blocks and never loses data,
/// [`drain`](Self::drain) is where the program waits for a slow peer.
///
/// `write` tries the inner writer at once when nothing is queued and keeps
/// only what it did not take: the lesson's partial `send`, with the rest in
/// the `outbuf`.
///
/// # No background writer: why the limits default to zero
///
/// ioloop has no task that flushes buffers behind the program's back: the
/// bytes in a `StreamWriter` move only when its owner calls `write`,
/// `drain`, `flush` or `close`. asyncio's default limits (drain returns at
/// once while at most 64 KiB is queued) rely on the event loop sending the
/// rest later; here, a request/response server would return from `drain`
/// with the tail of its reply still queued, then wait for the client's next
/// request, which never comes because the client is waiting for that tail.
///
/// So both limits default to 0: `drain` sends everything. Raise them with
/// [`set_write_buffer_limits`](Self::set_write_buffer_limits) for a
/// producer that streams and comes back to `drain` soon, where letting a
/// little data queue saves waits.
///
/// # Memory
///
/// The buffer holds what the inner writer has refused. A program that
/// drains after each write holds at most its high-water mark plus one
/// write; a large write to an idle stream keeps only the part the kernel
/// did not take. Once the buffer empties, an allocation over 64 KiB is
/// given back.
///
/// Dropping a `StreamWriter` drops its buffered bytes: call
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
    pub(super) inner: W,
    pub(super) buf: WriteBuf,
    pub(super) high: usize,
    pub(super) low: usize,
    /// An error the inner writer returned during [`write`](Self::write),
    /// which cannot return one: the next drain, flush or close does.
    pub(super) error: Option<io::Error>,
}

impl<W: AsyncWrite + Unpin> StreamWriter<W> {
    /// Wraps `inner`, with an empty buffer and both limits at 0 (`drain`
    /// sends everything; see [the type docs](Self) for why).
    ///
    /// # Examples
    ///
    /// ```
    /// let writer = ioloop::io::StreamWriter::new(Vec::new());
    /// assert_eq!(writer.buffered(), 0);
    /// assert_eq!(writer.write_buffer_limits(), (0, 0));
    /// ```
    pub fn new(inner: W) -> Self {
        StreamWriter {
            inner,
            buf: WriteBuf::default(),
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
    /// goes behind what is queued, so the order is kept. Call
    /// [`drain`](Self::drain) to wait for the peer.
    ///
    /// An error from that try cannot be returned here: it is kept, and the
    /// next `drain`, `flush` or `close` returns it. The stream is then most
    /// likely broken (a reset, a closed pipe) and the queued bytes will not
    /// arrive; they are kept all the same, and a later drain tries them
    /// again.
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
        if data.is_empty() {
            return;
        }
        if self.buf.len() == 0 && self.error.is_none() {
            let (sent, error) = super::writer_io::write_now(&mut self.inner, data);
            self.error = error;
            self.buf.push(&data[sent..]);
        } else {
            self.buf.push(data);
        }
    }

    /// Waits until the queued bytes are at or below the low-water mark:
    /// the backpressure point.
    ///
    /// With queued bytes at or below the high-water mark, it makes one
    /// attempt to send them without waiting and returns at once. Otherwise
    /// it sends, waiting for the inner writer whenever it refuses, until at
    /// most the low-water mark is queued. With the default limits (0, 0)
    /// that means until everything is sent.
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
        if self.buf.len() > self.high {
            let low = self.low;
            poll_fn(|cx| self.poll_send_down_to(cx, low)).await
        } else {
            poll_fn(|cx| self.poll_drain(cx)).await
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
    ///
    /// # Examples
    ///
    /// ```
    /// use ioloop::io::StreamWriter;
    ///
    /// ioloop::block_on(async {
    ///     let mut writer = StreamWriter::new(Vec::new());
    ///     writer.set_write_buffer_limits(1024, 512);
    ///     writer.write(b"abc");
    ///     writer.flush().await?;
    ///     assert_eq!(writer.buffered(), 0);
    ///     assert_eq!(writer.get_ref(), b"abc");
    ///     Ok::<_, std::io::Error>(())
    /// })
    /// .unwrap();
    /// ```
    pub async fn flush(&mut self) -> io::Result<()> {
        poll_fn(|cx| self.poll_flush_all(cx)).await
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
    ///
    /// # Examples
    ///
    /// ```
    /// use ioloop::io::StreamWriter;
    ///
    /// ioloop::block_on(async {
    ///     let mut writer = StreamWriter::new(Vec::new());
    ///     writer.write(b"bye\n");
    ///     writer.close().await?;
    ///     assert_eq!(writer.into_inner(), b"bye\n");
    ///     Ok::<_, std::io::Error>(())
    /// })
    /// .unwrap();
    /// ```
    pub async fn close(&mut self) -> io::Result<()> {
        poll_fn(|cx| self.poll_close_all(cx)).await
    }
}
