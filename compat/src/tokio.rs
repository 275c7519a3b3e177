//! tokio's I/O traits over ioloop's streams (feature `tokio-io`; the
//! facade's `ioloop::compat::tokio`), for the crates written against them:
//! tokio-util's codecs, tokio-rustls, tokio-postgres, ...
//!
//! - [`TokioIo`]: tokio's [`AsyncRead`](tokio::io::AsyncRead) and
//!   [`AsyncWrite`](tokio::io::AsyncWrite) over an ioloop socket
//!   ([`TcpStream`](ioloop_net::tcp::TcpStream), `UnixStream`, a reference
//!   to either, their halves). Reads go straight into the caller's
//!   `ReadBuf`, uninitialized: one `recv`, nothing zeroed or copied.
//! - [`FuturesIo`]: the same traits, and
//!   [`AsyncBufRead`](tokio::io::AsyncBufRead), over any futures-io stream
//!   (a `StreamReader`, a `StreamWriter`, a child's pipe, a TLS stream).
//!   futures-io reads only into initialized memory, so the part of the
//!   caller's `ReadBuf` not yet initialized is zeroed first (once per
//!   buffer: tokio's `ReadBuf` remembers what is).
//!
//! Only the traits: no tokio runtime is started, and a library that calls
//! `tokio::spawn`, `tokio::net` or tokio's timers inside it still needs
//! one (the guide's "Coming from tokio" lists which do).

use std::fmt;
use std::io::{self, IoSlice};
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use tokio::io::ReadBuf;

pub use crate::socket::Socket;

/// An ioloop socket as tokio's I/O: [`tokio::io::AsyncRead`] over any
/// [`Socket`] (a `TcpStream`, a `UnixStream`, a reference to either, a read
/// half), and [`tokio::io::AsyncWrite`] over any of them that writes (the
/// streams, references to them, their write halves).
///
/// A read is one `recv` into the unfilled part of tokio's `ReadBuf`, with
/// nothing zeroed first: a codec that reads into a `BytesMut`'s spare
/// capacity pays only for the bytes that arrive. Writes go through the
/// stream's own (vectored, so `is_write_vectored` is `true`); `poll_flush`
/// sends what the stream's outbox holds; `poll_shutdown` sends it and
/// shuts the write side down, as `poll_close` does.
///
/// # Examples
///
/// ```
/// use ioloop::compat::tokio::TokioIo;
/// use ioloop::net::{TcpListener, TcpStream};
/// use tokio::io::{AsyncReadExt, AsyncWriteExt};
///
/// ioloop::block_on(async {
///     let listener = TcpListener::bind("127.0.0.1:0").await?;
///     let mut client = TokioIo::new(TcpStream::connect(listener.local_addr()?).await?);
///     let (server, _) = listener.accept().await?;
///     let mut server = TokioIo::new(server);
///     client.write_all(b"ping").await?;
///     let mut got = [0; 4];
///     server.read_exact(&mut got).await?;
///     assert_eq!(&got, b"ping");
///     Ok::<_, std::io::Error>(())
/// })
/// .unwrap();
/// ```
pub struct TokioIo<S> {
    inner: S,
}

impl<S> TokioIo<S> {
    /// Wraps `socket`.
    pub fn new(socket: S) -> Self {
        TokioIo { inner: socket }
    }

    /// The socket.
    pub fn get_ref(&self) -> &S {
        &self.inner
    }

    /// The socket, mutably.
    pub fn get_mut(&mut self) -> &mut S {
        &mut self.inner
    }

    /// Unwraps the socket.
    pub fn into_inner(self) -> S {
        self.inner
    }
}

impl<S: fmt::Debug> fmt::Debug for TokioIo<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("TokioIo").field(&self.inner).finish()
    }
}

impl<S: Socket> tokio::io::AsyncRead for TokioIo<S> {
    #[allow(unsafe_code)]
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        // SAFETY: `unfilled_mut` asks that no byte initialized before be
        // de-initialized through the slice. The slice goes only to
        // `recv(2)` (ioloop's `poll_read_uninit`, through socket2's `recv`,
        // which takes `MaybeUninit` bytes), and the kernel only ever writes
        // bytes into it.
        let unfilled = unsafe { buf.unfilled_mut() };
        let n = ready!(self.inner.poll_read_uninit(cx, unfilled))?;
        // SAFETY: `assume_init(n)` asks that the first `n` unfilled bytes
        // be initialized. `Socket` is sealed, so `poll_read_uninit` is
        // ioloop's own: one `recv` into the slice, whose `Ok(n)` means the
        // kernel wrote its first `n` bytes, `n` at most its length.
        unsafe { buf.assume_init(n) };
        buf.advance(n);
        Poll::Ready(Ok(()))
    }
}

impl<S: futures_io::AsyncWrite + Unpin> tokio::io::AsyncWrite for TokioIo<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write_vectored(cx, bufs)
    }

    /// `true`: an ioloop socket writes all its buffers in one `sendmsg`.
    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_close(cx)
    }
}

/// Any futures-io stream as tokio's I/O: [`tokio::io::AsyncRead`],
/// [`tokio::io::AsyncBufRead`] and [`tokio::io::AsyncWrite`] over
/// `T`'s futures-io traits, such as a `StreamReader` (whose buffer tokio's
/// `read_line` and `lines` then read from), a child process's pipe or a
/// TLS stream.
///
/// A futures-io read needs initialized memory: the unfilled part of the
/// caller's `ReadBuf` not yet initialized is zeroed before the read, and
/// what was read goes straight into it (no copy). tokio's `ReadBuf`
/// remembers how much of it is initialized, so a buffer read into again
/// is not zeroed again. For an ioloop socket, [`TokioIo`] zeroes nothing.
///
/// `poll_write_vectored` is passed through; tokio asks
/// [`is_write_vectored`](tokio::io::AsyncWrite::is_write_vectored), which
/// is `false` unless set with
/// [`with_vectored_writes`](Self::with_vectored_writes) (futures-io does
/// not say whether a stream's vectored write is a real one).
///
/// # Examples
///
/// ```
/// use ioloop::compat::tokio::FuturesIo;
/// use tokio::io::AsyncBufReadExt;
///
/// ioloop::block_on(async {
///     // Any futures-io stream: here an in-memory one.
///     let text = futures_util::io::Cursor::new(b"one\ntwo\n".to_vec());
///     let mut lines = FuturesIo::new(text).lines();
///     assert_eq!(lines.next_line().await?.as_deref(), Some("one"));
///     assert_eq!(lines.next_line().await?.as_deref(), Some("two"));
///     assert_eq!(lines.next_line().await?, None);
///     Ok::<_, std::io::Error>(())
/// })
/// .unwrap();
/// ```
pub struct FuturesIo<T> {
    inner: T,
    vectored: bool,
}

impl<T> FuturesIo<T> {
    /// Wraps `stream`.
    pub fn new(stream: T) -> Self {
        FuturesIo {
            inner: stream,
            vectored: false,
        }
    }

    /// Tells tokio's callers that `stream`'s `poll_write_vectored` writes
    /// all its buffers in one call, so they hand it several at once.
    pub fn with_vectored_writes(mut self, vectored: bool) -> Self {
        self.vectored = vectored;
        self
    }

    /// The stream.
    pub fn get_ref(&self) -> &T {
        &self.inner
    }

    /// The stream, mutably.
    pub fn get_mut(&mut self) -> &mut T {
        &mut self.inner
    }

    /// Unwraps the stream.
    pub fn into_inner(self) -> T {
        self.inner
    }
}

impl<T: fmt::Debug> fmt::Debug for FuturesIo<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("FuturesIo").field(&self.inner).finish()
    }
}

impl<T: futures_io::AsyncRead + Unpin> tokio::io::AsyncRead for FuturesIo<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let unfilled = buf.initialize_unfilled();
        let n = ready!(Pin::new(&mut self.get_mut().inner).poll_read(cx, unfilled))?;
        buf.advance(n);
        Poll::Ready(Ok(()))
    }
}

impl<T: futures_io::AsyncBufRead + Unpin> tokio::io::AsyncBufRead for FuturesIo<T> {
    fn poll_fill_buf(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<&[u8]>> {
        Pin::new(&mut self.get_mut().inner).poll_fill_buf(cx)
    }

    fn consume(self: Pin<&mut Self>, amt: usize) {
        Pin::new(&mut self.get_mut().inner).consume(amt);
    }
}

impl<T: futures_io::AsyncWrite + Unpin> tokio::io::AsyncWrite for FuturesIo<T> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.vectored
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_close(cx)
    }
}
