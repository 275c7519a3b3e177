//! `AsyncFd`: any file descriptor on the reactor, without mio in the
//! user's `Cargo.toml`.

use std::fmt;
use std::future::poll_fn;
use std::io::{self, IoSlice, IoSliceMut, Read, Write};
use std::os::fd::{AsRawFd, RawFd};
use std::pin::Pin;
use std::task::{Context, Poll};

use ioloop_runtime::io::{ReadyEvent, Registration};
use mio::event::Source;
use mio::unix::SourceFd;
use mio::{Interest, Registry, Token};

/// A nonblocking file descriptor registered with the reactor of the runtime
/// it was made in: readiness to wait for, and the I/O calls to run when it
/// comes. tokio's `AsyncFd`; [`Registration`] does the same for a mio
/// source.
///
/// The descriptor must be in nonblocking mode (`O_NONBLOCK`): a call
/// that would block must say `WouldBlock`, or it blocks the loop thread.
/// `AsyncFd` does not set the mode for you, because the mode belongs to the
/// open file, which other processes may share.
///
/// Dropping it removes the descriptor from the reactor, then drops `T`
/// (which closes the descriptor if `T` owns it);
/// [`into_inner`](Self::into_inner) gives `T` back instead.
///
/// It reads with [`AsyncRead`](futures_io::AsyncRead) where `&T` implements
/// [`Read`], and writes with [`AsyncWrite`](futures_io::AsyncWrite) where
/// `&T` implements [`Write`]. A read is tried again until it says
/// `WouldBlock`, even after a short one: a terminal returns one line per
/// read, with more left behind.
///
/// # Examples
///
/// ```
/// use ioloop::io::{AsyncFd, AsyncReadExt};
/// use std::io::Write;
/// use std::os::unix::net::UnixStream;
///
/// ioloop::block_on(async {
///     let (a, mut b) = UnixStream::pair()?;
///     a.set_nonblocking(true)?;
///     let mut a = AsyncFd::new(a)?;
///     b.write_all(b"ping")?;
///     let mut buf = [0; 4];
///     a.read_exact(&mut buf).await?;
///     assert_eq!(&buf, b"ping");
///     Ok::<_, std::io::Error>(())
/// })
/// .unwrap();
/// ```
#[doc(alias = "connect_read_pipe")]
pub struct AsyncFd<T: AsRawFd> {
    io: Registration<Fd<T>>,
}

/// The descriptor as mio sees it. `inner` is `None` only inside
/// [`AsyncFd::into_inner`], between taking `T` out and dropping the
/// registration, which deregisters `raw` while `T` still holds it open.
struct Fd<T> {
    inner: Option<T>,
    raw: RawFd,
}

impl<T> Source for Fd<T> {
    fn register(
        &mut self,
        registry: &Registry,
        token: Token,
        interests: Interest,
    ) -> io::Result<()> {
        SourceFd(&self.raw).register(registry, token, interests)
    }

    fn reregister(
        &mut self,
        registry: &Registry,
        token: Token,
        interests: Interest,
    ) -> io::Result<()> {
        SourceFd(&self.raw).reregister(registry, token, interests)
    }

    fn deregister(&mut self, registry: &Registry) -> io::Result<()> {
        SourceFd(&self.raw).deregister(registry)
    }
}

impl<T: AsRawFd> AsyncFd<T> {
    /// Registers `inner`'s descriptor with the runtime running on this
    /// thread, for both directions.
    ///
    /// # Errors
    ///
    /// - outside an ioloop runtime, or once it is shutting down;
    /// - [`io::ErrorKind::PermissionDenied`] for a descriptor epoll cannot
    ///   watch: a regular file or a directory, which never blocks (read it
    ///   in `spawn_blocking`);
    /// - [`io::ErrorKind::AlreadyExists`] for a descriptor already
    ///   registered (two `AsyncFd`s, or a socket, on one open file).
    pub fn new(inner: T) -> io::Result<Self> {
        let raw = inner.as_raw_fd();
        let fd = Fd {
            inner: Some(inner),
            raw,
        };
        match Registration::new(fd) {
            Ok(io) => Ok(AsyncFd { io }),
            Err(err) if err.raw_os_error() == Some(EPERM) => Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!(
                    "descriptor {raw} cannot be watched by epoll (a regular file or a \
                     directory never blocks): read it with spawn_blocking instead"
                ),
            )),
            Err(err) => Err(err),
        }
    }

    /// The descriptor's owner.
    pub fn get_ref(&self) -> &T {
        inner(self.io.get_ref())
    }

    /// The descriptor's owner, mutably. Replacing the descriptor it holds
    /// (with `dup2`, say) leaves the old one registered: don't.
    pub fn get_mut(&mut self) -> &mut T {
        self.io.get_mut().inner.as_mut().expect(TAKEN)
    }

    /// Removes the descriptor from the reactor and gives its owner back,
    /// still open.
    pub fn into_inner(mut self) -> T {
        let inner = self.io.get_mut().inner.take().expect(TAKEN);
        // Deregisters `raw`, which `inner` keeps open until it is returned.
        drop(self.io);
        inner
    }

    /// Returns read readiness (readable, read-closed, an error), or
    /// registers `cx` to be woken when it comes. Readiness stays until
    /// [`clear_readiness`](Self::clear_readiness) says the descriptor has
    /// none left, which the `*_io` calls do on `WouldBlock`.
    ///
    /// # Errors
    ///
    /// Fails once the runtime has shut down.
    pub fn poll_read_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<ReadyEvent>> {
        self.io.poll_read_ready(cx)
    }

    /// Returns write readiness, or registers `cx` to be woken when it comes.
    ///
    /// # Errors
    ///
    /// Fails once the runtime has shut down.
    pub fn poll_write_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<ReadyEvent>> {
        self.io.poll_write_ready(cx)
    }

    /// Waits for read readiness: [`poll_read_ready`](Self::poll_read_ready)
    /// as a future.
    ///
    /// # Errors
    ///
    /// Fails once the runtime has shut down.
    pub async fn readable(&self) -> io::Result<ReadyEvent> {
        poll_fn(|cx| self.poll_read_ready(cx)).await
    }

    /// Waits for write readiness.
    ///
    /// # Errors
    ///
    /// Fails once the runtime has shut down.
    pub async fn writable(&self) -> io::Result<ReadyEvent> {
        poll_fn(|cx| self.poll_write_ready(cx)).await
    }

    /// Says the readiness `event` reported is used up (a call said
    /// `WouldBlock`), so the next wait waits for a new event; an event that
    /// came since `event` is kept.
    pub fn clear_readiness(&self, event: ReadyEvent) {
        self.io.clear_readiness(event);
    }

    /// Runs the read-side call `f` until it does not say `WouldBlock`,
    /// waiting for readiness in between; `Interrupted` is retried.
    ///
    /// # Errors
    ///
    /// What `f` returns other than those, and the errors of
    /// [`poll_read_ready`](Self::poll_read_ready).
    pub fn poll_read_io<R>(
        &self,
        cx: &mut Context<'_>,
        mut f: impl FnMut(&T) -> io::Result<R>,
    ) -> Poll<io::Result<R>> {
        self.io.poll_read_io(cx, |fd| f(inner(fd)))
    }

    /// Runs the write-side call `f` until it does not say `WouldBlock`.
    ///
    /// # Errors
    ///
    /// As [`poll_read_io`](Self::poll_read_io).
    pub fn poll_write_io<R>(
        &self,
        cx: &mut Context<'_>,
        mut f: impl FnMut(&T) -> io::Result<R>,
    ) -> Poll<io::Result<R>> {
        self.io.poll_write_io(cx, |fd| f(inner(fd)))
    }

    /// [`poll_read_io`](Self::poll_read_io) as a future.
    ///
    /// ```
    /// use ioloop::io::AsyncFd;
    /// use std::io::{Read, Write};
    /// use std::os::unix::net::UnixStream;
    ///
    /// ioloop::block_on(async {
    ///     let (a, mut b) = UnixStream::pair()?;
    ///     a.set_nonblocking(true)?;
    ///     let a = AsyncFd::new(a)?;
    ///     b.write_all(b"hi")?;
    ///     let mut buf = [0; 8];
    ///     let n = a.read_io(|mut s| s.read(&mut buf)).await?;
    ///     assert_eq!(&buf[..n], b"hi");
    ///     Ok::<_, std::io::Error>(())
    /// })
    /// .unwrap();
    /// ```
    ///
    /// # Errors
    ///
    /// As [`poll_read_io`](Self::poll_read_io).
    pub async fn read_io<R>(&self, mut f: impl FnMut(&T) -> io::Result<R>) -> io::Result<R> {
        poll_fn(|cx| self.poll_read_io(cx, &mut f)).await
    }

    /// [`poll_write_io`](Self::poll_write_io) as a future.
    ///
    /// # Errors
    ///
    /// As [`poll_read_io`](Self::poll_read_io).
    pub async fn write_io<R>(&self, mut f: impl FnMut(&T) -> io::Result<R>) -> io::Result<R> {
        poll_fn(|cx| self.poll_write_io(cx, &mut f)).await
    }

    /// A byte stream's read (a pipe): a short read proves it empty, so
    /// readiness is cleared without a call that can only say `WouldBlock`.
    pub(crate) fn poll_read_stream(
        &self,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>>
    where
        for<'a> &'a T: Read,
    {
        let len = buf.len();
        self.io
            .poll_read_stream(cx, len, |fd| inner(fd).read(&mut *buf))
    }

    /// A byte stream's write: a short one proves the buffer full.
    pub(crate) fn poll_write_stream(
        &self,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>>
    where
        for<'a> &'a T: Write,
    {
        let len = bufs.iter().map(|b| b.len()).sum();
        self.io
            .poll_write_stream(cx, len, |fd| inner(fd).write_vectored(bufs))
    }
}

const TAKEN: &str = "an AsyncFd's descriptor is only taken as it is dropped";

fn inner<T>(fd: &Fd<T>) -> &T {
    fd.inner.as_ref().expect(TAKEN)
}

/// `EPERM` (1 on every Unix): what `epoll_ctl` says of a regular file or a
/// directory.
const EPERM: i32 = 1;

impl<T: AsRawFd> AsRawFd for AsyncFd<T> {
    fn as_raw_fd(&self) -> RawFd {
        self.io.get_ref().raw
    }
}

impl<T: AsRawFd + fmt::Debug> fmt::Debug for AsyncFd<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AsyncFd")
            .field("inner", self.get_ref())
            .finish()
    }
}

impl<T: AsRawFd> futures_io::AsyncRead for AsyncFd<T>
where
    for<'a> &'a T: Read,
{
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        self.poll_read_io(cx, |mut t| t.read(&mut *buf))
    }

    fn poll_read_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &mut [IoSliceMut<'_>],
    ) -> Poll<io::Result<usize>> {
        self.poll_read_io(cx, |mut t| t.read_vectored(&mut *bufs))
    }
}

impl<T: AsRawFd> futures_io::AsyncWrite for AsyncFd<T>
where
    for<'a> &'a T: Write,
{
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.poll_write_io(cx, |mut t| t.write(buf))
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        self.poll_write_io(cx, |mut t| t.write_vectored(bufs))
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.poll_write_io(cx, |mut t| t.flush())
    }

    fn poll_close(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.poll_flush(cx)
    }
}
