//! The I/O wrappers: [`HyperIo`] over ioloop's sockets, reading straight
//! into hyper's uninitialized buffer, and [`FuturesIo`] over any futures-io
//! stream.

use std::fmt;
use std::io::{self, IoSlice};
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use futures_io::{AsyncRead, AsyncWrite};
use hyper::rt::{Read, ReadBufCursor, Write};

pub use crate::socket::Socket;

/// An ioloop socket as hyper's I/O: [`hyper::rt::Read`] and
/// [`hyper::rt::Write`] over a [`TcpStream`](ioloop_net::tcp::TcpStream) or
/// `UnixStream`, or a read half of either (for reads only).
///
/// Reads go straight into hyper's buffer, uninitialized: one `recv` per
/// read, nothing zeroed first. Writes are vectored (`sendmsg`), so hyper
/// sends a response's head and body in one call.
///
/// # Examples
///
/// ```
/// use ioloop::compat::hyper::HyperIo;
/// use ioloop::net::{TcpListener, TcpStream};
///
/// ioloop::block_on(async {
///     let listener = TcpListener::bind("127.0.0.1:0").await?;
///     let stream = TcpStream::connect(listener.local_addr()?).await?;
///     let io = HyperIo::new(stream);
///     assert!(io.get_ref().peer_addr().is_ok());
///     Ok::<_, std::io::Error>(())
/// })
/// .unwrap();
/// ```
pub struct HyperIo<S> {
    inner: S,
}

impl<S: Socket> HyperIo<S> {
    /// Wraps `socket`.
    pub fn new(socket: S) -> Self {
        HyperIo { inner: socket }
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

impl<S: fmt::Debug> fmt::Debug for HyperIo<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("HyperIo").field(&self.inner).finish()
    }
}

impl<S: Socket> Read for HyperIo<S> {
    #[allow(unsafe_code)]
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        mut buf: ReadBufCursor<'_>,
    ) -> Poll<io::Result<()>> {
        // SAFETY: `as_mut` asks that no byte initialized before be
        // de-initialized through the slice. The slice goes only to
        // `recv(2)` (through socket2's `recv`, which takes `MaybeUninit`
        // bytes), and the kernel only ever writes bytes into it.
        let unfilled = unsafe { buf.as_mut() };
        let n = ready!(self.inner.poll_read_uninit(cx, unfilled))?;
        // SAFETY: `advance(n)` asks that `n` more bytes be initialized.
        // `Socket` is sealed, so `poll_read_uninit` is ioloop's own, on
        // `TcpStream` or `UnixStream`: one `recv` into the slice, whose
        // `Ok(n)` means the kernel wrote the first `n` bytes of it. `n` is
        // at most the slice's length (the kernel never writes past the
        // length it is given), so the filled part stays within the buffer
        // and is all initialized.
        unsafe { buf.advance(n) };
        Poll::Ready(Ok(()))
    }
}

impl<S: Socket + AsyncWrite> Write for HyperIo<S> {
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
        true
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        // Bytes go straight to the kernel: nothing is buffered here.
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_close(cx)
    }
}

/// The most a [`FuturesIo`] reads at once, and so the size its scratch
/// buffer grows to.
const SCRATCH_MAX: usize = 16 * 1024;

/// Any futures-io stream as hyper's I/O: [`hyper::rt::Read`] and
/// [`hyper::rt::Write`] over `T: AsyncRead + AsyncWrite + Unpin`, such as
/// a TLS stream over an ioloop socket.
///
/// futures-io reads only into initialized memory, and hyper's buffer is
/// not. Rather than zero hyper's buffer before every read, a `FuturesIo`
/// keeps a scratch buffer, zeroed once as it grows (to at most 16 KiB),
/// reads into it, and copies what was read into hyper's buffer: the copy
/// costs what was read, where zeroing costs the whole buffer, every time.
/// For an ioloop socket, [`HyperIo`] reads with no copy at all.
///
/// `poll_write_vectored` is passed through; hyper asks
/// [`is_write_vectored`](Write::is_write_vectored), which is `false` unless
/// set with [`with_vectored_writes`](Self::with_vectored_writes) (futures-io
/// does not say whether a stream's vectored write is a real one).
///
/// # Examples
///
/// ```
/// use ioloop::compat::hyper::FuturesIo;
///
/// // Any futures-io stream: here an in-memory one.
/// let io = FuturesIo::new(futures_util::io::Cursor::new(Vec::<u8>::new()));
/// assert!(io.get_ref().get_ref().is_empty());
/// ```
pub struct FuturesIo<T> {
    inner: T,
    scratch: Vec<u8>,
    vectored: bool,
}

impl<T> FuturesIo<T> {
    /// Wraps `stream`.
    pub fn new(stream: T) -> Self {
        FuturesIo {
            inner: stream,
            scratch: Vec::new(),
            vectored: false,
        }
    }

    /// Tells hyper that `stream`'s `poll_write_vectored` writes all its
    /// buffers in one call (so hyper hands it a head and a body together
    /// instead of copying them into one buffer first).
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
        f.debug_struct("FuturesIo")
            .field("inner", &self.inner)
            .field("scratch", &self.scratch.len())
            .finish()
    }
}

impl<T: AsyncRead + Unpin> Read for FuturesIo<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        mut buf: ReadBufCursor<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let want = buf.remaining().min(SCRATCH_MAX);
        if this.scratch.len() < want {
            // Zeroed once, as it grows; reused by every later read.
            this.scratch.resize(want, 0);
        }
        let n = ready!(Pin::new(&mut this.inner).poll_read(cx, &mut this.scratch[..want]))?;
        buf.put_slice(&this.scratch[..n]);
        Poll::Ready(Ok(()))
    }
}

impl<T: AsyncWrite + Unpin> Write for FuturesIo<T> {
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
