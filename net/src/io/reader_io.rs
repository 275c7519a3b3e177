//! `AsyncRead` and `AsyncBufRead` for `StreamReader`, so futures-util's
//! combinators run over the same buffer as `read_line`.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use futures_io::{AsyncBufRead, AsyncRead};

use super::read_buf::READ_CHUNK;
use super::reader::StreamReader;

/// Serves buffered bytes first, so reads mixed with `read_line` see the
/// stream in order.
///
/// # Examples
///
/// ```
/// use futures_util::io::AsyncReadExt;
/// use ioloop::io::StreamReader;
///
/// ioloop::block_on(async {
///     let mut reader = StreamReader::new(&b"header\nbody bytes"[..]);
///     assert_eq!(reader.read_line().await?, Some(&b"header"[..]));
///     let mut body = Vec::new();
///     reader.read_to_end(&mut body).await?;
///     assert_eq!(body, b"body bytes");
///     Ok::<_, std::io::Error>(())
/// })
/// .unwrap();
/// ```
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
        ready!(ioloop_runtime::task::poll_budget(cx));
        ready!(this.poll_skip_overlong(cx))?;
        if this.buf.len() == 0 && out.len() >= READ_CHUNK {
            // Nothing buffered and the caller's buffer is at least a chunk:
            // going through ours would only add a copy.
            return Pin::new(&mut this.inner).poll_read(cx, out);
        }
        let available = ready!(this.fill_if_empty(cx))?;
        let n = available.len().min(out.len());
        out[..n].copy_from_slice(&available[..n]);
        this.consume(n);
        Poll::Ready(Ok(n))
    }
}

/// Hands out the reader's own buffer; a fill reads only when it is empty.
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
        ready!(ioloop_runtime::task::poll_budget(cx));
        ready!(this.poll_skip_overlong(cx))?;
        this.fill_if_empty(cx)
    }

    fn consume(self: Pin<&mut Self>, amt: usize) {
        StreamReader::consume(self.get_mut(), amt);
    }
}

impl<R: AsyncRead + Unpin> StreamReader<R> {
    /// The unread bytes, after one read from the inner reader if there were
    /// none; empty means end of stream.
    fn fill_if_empty(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<&[u8]>> {
        if self.buf.len() == 0 {
            ready!(self.buf.poll_fill(cx, &mut self.inner, self.max_line))?;
        }
        Poll::Ready(Ok(self.buf.unread()))
    }
}
