//! [`UnixStream`], whole: connecting, pairs, addresses and credentials,
//! readiness and `try_*`, and `futures_io::AsyncRead` / `AsyncWrite`.

use std::fmt;
use std::io::{self, IoSlice, IoSliceMut, Read};
use std::mem::MaybeUninit;
use std::net::Shutdown;
use std::os::unix::net::SocketAddr;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures_io::{AsyncRead, AsyncWrite};
use ioloop_runtime::io::Registration;
use ioloop_runtime::time::sleep;

use super::addr::ToUnixAddr;
use super::sys;
use crate::syscall;

/// A Unix domain stream socket registered with the reactor: a
/// [`TcpStream`](crate::TcpStream) between processes of one machine,
/// named by a path instead of an `ip:port`.
///
/// `UnixStream` and `&UnixStream` implement `futures_io::AsyncRead` and
/// `AsyncWrite`, so one task can read while another writes (see
/// [`split`](Self::split) and [`into_split`](Self::into_split)); for
/// line-oriented protocols wrap it in `ioloop::io::StreamReader` and
/// `StreamWriter`. Writes never raise `SIGPIPE`: they are `send(2)` and
/// `sendmsg(2)` with `MSG_NOSIGNAL`, so a peer that has gone is
/// `BrokenPipe` or `ConnectionReset`.
///
/// Dropping the stream closes the socket.
///
/// # Examples
///
/// ```
/// use futures_util::{AsyncReadExt, AsyncWriteExt};
/// use ioloop::net::UnixStream;
///
/// ioloop::block_on(async {
///     let (mut a, mut b) = UnixStream::pair()?;
///     a.write_all(b"ping").await?;
///     let mut buf = [0; 4];
///     b.read_exact(&mut buf).await?;
///     assert_eq!(&buf, b"ping");
///     Ok::<_, std::io::Error>(())
/// })
/// .unwrap();
/// ```
pub struct UnixStream {
    io: Registration<mio::net::UnixStream>,
}

impl UnixStream {
    /// Connects to the listener at `path` (on Linux, a path starting with a
    /// NUL byte is an abstract name: see [`ToUnixAddr`]).
    ///
    /// A Unix `connect(2)` finishes at once, or fails at once: nothing to
    /// wait for, except when the listener's backlog is full (`EAGAIN`);
    /// then it tries again, after 1 ms, doubling up to 100 ms, until the
    /// listener makes room. Wrap it in `ioloop::time::timeout` to bound
    /// that wait.
    ///
    /// So the future completes on its first poll, as soon as the kernel has
    /// queued the connection on the listener's backlog, without waiting
    /// for the stream to be writable: waiting would cost every connect a
    /// trip through the poller and prove nothing more, since the listener
    /// can go at any time before it accepts. A listener dropped before
    /// accepting shows at the first read (`ConnectionReset` on Linux, then
    /// end of file) or write, not here. tokio's `connect` waits for
    /// writability and may report that same reset at `connect`.
    ///
    /// # Errors
    ///
    /// `NotFound` if no socket is at `path`; `ConnectionRefused` if one is
    /// but nothing listens on it (a socket file left by a server that
    /// exited); `PermissionDenied`; `InvalidInput` if the path is too long
    /// (108 bytes on Linux); an error if no ioloop runtime runs on this
    /// thread.
    ///
    /// # Cancellation
    ///
    /// Dropping the future gives up; no connection is left behind.
    ///
    /// # Examples
    ///
    /// ```
    /// use ioloop::net::{UnixListener, UnixStream};
    ///
    /// ioloop::block_on(async {
    ///     let dir = std::env::temp_dir().join(format!("ioloop-doc-connect-{}", std::process::id()));
    ///     std::fs::create_dir_all(&dir)?;
    ///     let path = dir.join("server.sock");
    ///     let listener = UnixListener::bind(&path)?;
    ///     let client = UnixStream::connect(&path).await?;
    ///     let (server, _) = listener.accept().await?;
    ///     assert_eq!(client.peer_addr()?.as_pathname(), Some(path.as_path()));
    ///     assert!(server.peer_addr()?.is_unnamed());
    ///     std::fs::remove_dir_all(&dir)?;
    ///     Ok::<_, std::io::Error>(())
    /// })
    /// .unwrap();
    /// ```
    #[doc(alias = "open_unix_connection")]
    pub async fn connect(path: impl ToUnixAddr) -> io::Result<UnixStream> {
        let addr = path.to_unix_addr()?;
        let mut delay = sys::FIRST_RETRY;
        loop {
            match mio::net::UnixStream::connect_addr(&addr) {
                Err(err) if err.kind() == io::ErrorKind::WouldBlock => {
                    log::debug!("connect: the listener's backlog is full; again in {delay:?}");
                    sleep(delay).await;
                    delay = (delay * 2).min(sys::MAX_RETRY);
                }
                Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                connected => return Self::from_mio(connected?),
            }
        }
    }

    /// A pair of connected, unnamed streams, each end registered with the
    /// runtime running on this thread: a two-way pipe between tasks, or,
    /// one end handed to a child process, between processes.
    ///
    /// # Errors
    ///
    /// The OS's error from `socketpair(2)` (out of descriptors); an error
    /// if no ioloop runtime runs on this thread.
    pub fn pair() -> io::Result<(UnixStream, UnixStream)> {
        let (a, b) = mio::net::UnixStream::pair()?;
        Ok((Self::from_mio(a)?, Self::from_mio(b)?))
    }

    /// Wraps a connected stream made elsewhere, switching it to
    /// non-blocking mode and registering it with the runtime running on
    /// this thread.
    ///
    /// # Errors
    ///
    /// If the socket cannot be made non-blocking, or no ioloop runtime runs
    /// on this thread.
    pub fn from_std(stream: std::os::unix::net::UnixStream) -> io::Result<UnixStream> {
        stream.set_nonblocking(true)?;
        Self::from_mio(mio::net::UnixStream::from_std(stream))
    }

    pub(crate) fn from_mio(stream: mio::net::UnixStream) -> io::Result<UnixStream> {
        sys::no_sigpipe(&stream)?;
        Ok(UnixStream {
            io: Registration::new(stream)?,
        })
    }

    /// The address this stream is bound to: unnamed for a client (and for
    /// both ends of a [`pair`](Self::pair)); the listener's path for a
    /// stream it accepted.
    ///
    /// # Errors
    ///
    /// The OS's error from `getsockname(2)` (rare).
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.io.get_ref().local_addr()
    }

    /// The address of the peer: the listener's path for a client; unnamed
    /// for a stream a listener accepted, since clients rarely bind.
    ///
    /// # Errors
    ///
    /// `NotConnected` once the peer has closed, on some systems.
    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        self.io.get_ref().peer_addr()
    }

    /// The credentials of the peer process, as the kernel recorded them
    /// when the connection was made (`SO_PEERCRED`): who is on the other
    /// end, for a server that grants access by user.
    ///
    /// Linux and Android only. Read through the `nix` crate, since this
    /// crate has no `unsafe` code and std's `peer_cred` is unstable.
    ///
    /// # Errors
    ///
    /// The OS's error from `getsockopt(2)` (rare).
    ///
    /// # Examples
    ///
    /// ```
    /// use ioloop::net::UnixStream;
    ///
    /// ioloop::block_on(async {
    ///     let (a, _b) = UnixStream::pair()?;
    ///     let cred = a.peer_cred()?;
    ///     assert_eq!(cred.pid(), Some(std::process::id() as i32));
    ///     Ok::<_, std::io::Error>(())
    /// })
    /// .unwrap();
    /// ```
    #[cfg(any(target_os = "linux", target_os = "android"))]
    #[doc(alias = "SO_PEERCRED", alias = "getpeereid")]
    pub fn peer_cred(&self) -> io::Result<super::UCred> {
        super::ucred::peer_cred(self.io.get_ref())
    }

    /// Shuts down one or both directions: `Shutdown::Write` is a half-close
    /// (the peer reads end of file once it has read what was sent, and this
    /// side can still read).
    ///
    /// # Errors
    ///
    /// The OS's error from `shutdown(2)`. A connection already gone is not
    /// one: it is shut, and the call returns `Ok`.
    pub fn shutdown(&self, how: Shutdown) -> io::Result<()> {
        match self.io.get_ref().shutdown(how) {
            Err(err) if err.kind() == io::ErrorKind::NotConnected => Ok(()),
            result => result,
        }
    }

    /// Sets `SO_SNDBUF`, the size of the kernel's send buffer for this
    /// stream: on Linux, how many bytes sent from here may wait unread at the peer
    /// before sends block. Linux doubles the value (the other half is its
    /// bookkeeping) and clamps it to `net.core.wmem_max`, so
    /// [`send_buffer_size`](Self::send_buffer_size) rarely returns what was
    /// set.
    ///
    /// # Errors
    ///
    /// The OS's error from `setsockopt(2)`.
    pub fn set_send_buffer_size(&self, size: u32) -> io::Result<()> {
        sys::set_send_buffer_size(self.io.get_ref(), size)
    }

    /// The size of the kernel's send buffer (`SO_SNDBUF`).
    ///
    /// # Errors
    ///
    /// The OS's error from `getsockopt(2)`.
    pub fn send_buffer_size(&self) -> io::Result<u32> {
        sys::send_buffer_size(self.io.get_ref())
    }

    /// Sets `SO_RCVBUF`. Linux accepts it, but bounds what waits unread
    /// in a Unix socket by the sender's
    /// [send buffer](Self::set_send_buffer_size) (and, for datagrams, by
    /// `net.unix.max_dgram_qlen`) instead.
    ///
    /// # Errors
    ///
    /// The OS's error from `setsockopt(2)`.
    pub fn set_recv_buffer_size(&self, size: u32) -> io::Result<()> {
        sys::set_recv_buffer_size(self.io.get_ref(), size)
    }

    /// The value of `SO_RCVBUF`; see
    /// [`set_recv_buffer_size`](Self::set_recv_buffer_size).
    ///
    /// # Errors
    ///
    /// The OS's error from `getsockopt(2)`.
    pub fn recv_buffer_size(&self) -> io::Result<u32> {
        sys::recv_buffer_size(self.io.get_ref())
    }

    /// Waits until the stream is readable (or the peer has hung up, or an
    /// error is pending), without reading. Any number of tasks may wait.
    ///
    /// A new stream starts out ready, before any event from the poller: on
    /// a fresh stream this returns at once, and only the read that follows
    /// says whether anything is there (a [`try_read`](Self::try_read) that
    /// finds nothing returns `WouldBlock` and clears the readiness, so the
    /// next wait is for a real event). It saves every connection a trip
    /// through the poller before its first read; tokio's streams start
    /// not ready instead.
    ///
    /// # Errors
    ///
    /// Fails once the runtime has shut down.
    pub async fn readable(&self) -> io::Result<()> {
        self.io.readable().await.map(drop)
    }

    /// Waits until the stream is writable (or closed, or in error).
    ///
    /// # Errors
    ///
    /// Fails once the runtime has shut down.
    pub async fn writable(&self) -> io::Result<()> {
        self.io.writable().await.map(drop)
    }

    /// Polls for read readiness, registering `cx` to be woken by it. A new
    /// stream starts out ready, as for [`readable`](Self::readable).
    ///
    /// As a poll function it has no place of its own among the waiters:
    /// per direction, the wakers of the latest 65 distinct tasks polling so
    /// are kept, the oldest woken to make room for one more (see
    /// [`Registration`]); any number of tasks may wait in
    /// [`readable`](Self::readable).
    ///
    /// # Errors
    ///
    /// Fails once the runtime has shut down.
    pub fn poll_read_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.io.poll_read_ready(cx).map_ok(drop)
    }

    /// Polls for write readiness, registering `cx` to be woken by it.
    ///
    /// As a poll function it keeps only the wakers of the latest 65
    /// distinct tasks polling a direction (see [`Registration`]); any
    /// number may wait in the async methods.
    ///
    /// # Errors
    ///
    /// Fails once the runtime has shut down.
    pub fn poll_write_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.io.poll_write_ready(cx).map_ok(drop)
    }

    /// Reads what is there now into `buf`, without waiting: `Ok(0)` is the
    /// end of the stream.
    ///
    /// On a new stream the first call always makes the `recv`, since a
    /// stream starts out ready (see [`readable`](Self::readable)): it says
    /// `WouldBlock` if nothing has come, never a wrong answer.
    ///
    /// # Errors
    ///
    /// `WouldBlock` if nothing can be read now; any error of `recv`.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::io::ErrorKind;
    /// use ioloop::net::UnixStream;
    ///
    /// ioloop::block_on(async {
    ///     let (a, b) = UnixStream::pair()?;
    ///     let mut buf = [0; 8];
    ///     assert_eq!(a.try_read(&mut buf).unwrap_err().kind(), ErrorKind::WouldBlock);
    ///     b.writable().await?;
    ///     b.try_write(b"hi")?;
    ///     a.readable().await?;
    ///     assert_eq!(a.try_read(&mut buf)?, 2);
    ///     Ok::<_, std::io::Error>(())
    /// })
    /// .unwrap();
    /// ```
    pub fn try_read(&self, buf: &mut [u8]) -> io::Result<usize> {
        self.io.try_read_io(|socket| syscall::recv(socket, buf))
    }

    /// [`try_read`](Self::try_read) into several buffers, in one `readv`.
    ///
    /// # Errors
    ///
    /// As [`try_read`](Self::try_read).
    pub fn try_read_vectored(&self, bufs: &mut [IoSliceMut<'_>]) -> io::Result<usize> {
        self.io.try_read_io(|mut socket| socket.read_vectored(bufs))
    }

    /// Writes what the kernel takes now from `buf`, without waiting.
    ///
    /// # Errors
    ///
    /// `WouldBlock` if the send buffer is full; any error of `send`.
    pub fn try_write(&self, buf: &[u8]) -> io::Result<usize> {
        self.io.try_write_io(|socket| sys::send(socket, buf))
    }

    /// [`try_write`](Self::try_write) from several buffers, in one
    /// `sendmsg`. One call takes at most the first `IOV_MAX` (1,024)
    /// buffers, as std's `write_vectored` does: with more, it writes from
    /// those and returns how much it wrote, never `EMSGSIZE`. So do the
    /// `AsyncWrite::poll_write_vectored` of the stream and its halves.
    ///
    /// # Errors
    ///
    /// As [`try_write`](Self::try_write).
    pub fn try_write_vectored(&self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        self.io
            .try_write_io(|socket| sys::send_vectored(socket, bufs))
    }

    /// Waits for data and copies it into `buf` without taking it from the
    /// stream: the next read returns the same bytes.
    ///
    /// # Errors
    ///
    /// Any error of `recv`; fails once the runtime has shut down.
    ///
    /// # Cancellation
    ///
    /// Cancel-safe: nothing is consumed.
    pub async fn peek(&self, buf: &mut [u8]) -> io::Result<usize> {
        self.io.read_io(|socket| sys::peek(socket, buf)).await
    }

    /// Reads into `buf`, which need not be initialized, waiting for data:
    /// one `recv(2)` straight into the caller's memory, for adapters whose
    /// buffers are uninitialized (hyper's `ReadBufCursor`). `Ok(n)`: the
    /// first `n` bytes of `buf` are initialized; `Ok(0)` is the end of the
    /// stream (or an empty `buf`). Readiness is cleared only by
    /// `WouldBlock`, as in the stream's `AsyncRead`.
    ///
    /// # Errors
    ///
    /// Any error of `recv`; fails once the runtime has shut down.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::future::poll_fn;
    /// use std::mem::MaybeUninit;
    /// use futures_util::AsyncWriteExt;
    /// use ioloop::net::UnixStream;
    ///
    /// ioloop::block_on(async {
    ///     let (mut a, b) = UnixStream::pair()?;
    ///     a.write_all(b"hi").await?;
    ///     let mut buf = [MaybeUninit::<u8>::uninit(); 16];
    ///     let n = poll_fn(|cx| b.poll_read_uninit(cx, &mut buf)).await?;
    ///     assert_eq!(n, 2);
    ///     Ok::<_, std::io::Error>(())
    /// })
    /// .unwrap();
    /// ```
    pub fn poll_read_uninit(
        &self,
        cx: &mut Context<'_>,
        buf: &mut [MaybeUninit<u8>],
    ) -> Poll<io::Result<usize>> {
        if buf.is_empty() {
            return Poll::Ready(Ok(0));
        }
        // As `poll_recv`: a Unix stream may stop short with bytes queued.
        self.io
            .poll_read_io(cx, |socket| syscall::recv_uninit(socket, buf))
    }

    /// Reads into `buf`, waiting for data; an empty `buf` returns `Ok(0)`
    /// at once, without a syscall.
    pub(crate) fn poll_recv(
        &self,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        if buf.is_empty() {
            return Poll::Ready(Ok(0));
        }
        // Not `poll_read_stream`, as TCP: there a short read means the
        // receive buffer is empty, but a Unix stream also stops short at
        // a message that carried descriptors or, with `SO_PASSCRED`, other
        // credentials, with bytes still queued and no new edge coming.
        // So readiness is cleared only by `WouldBlock`.
        self.io
            .poll_read_io(cx, |socket| syscall::recv(socket, buf))
    }

    /// Writes from `buf`, waiting for room; an empty `buf` returns `Ok(0)`
    /// at once.
    pub(crate) fn poll_send(&self, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        if buf.is_empty() {
            return Poll::Ready(Ok(0));
        }
        // `send` with `MSG_NOSIGNAL`, not std's `write`: on a Unix socket
        // that is `write(2)`, which raises `SIGPIPE` once the peer is gone.
        self.io
            .poll_write_stream(cx, buf.len(), |socket| sys::send(socket, buf))
    }

    /// Writes from several buffers in one `sendmsg`, waiting for room: the
    /// first `IOV_MAX` of them, so that a write shorter than those is what
    /// says the send buffer is full.
    pub(crate) fn poll_send_vectored(
        &self,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let bufs = crate::syscall::at_most_max_slices(bufs);
        let len = bufs.iter().map(|b| b.len()).sum();
        if len == 0 {
            return Poll::Ready(Ok(0));
        }
        self.io
            .poll_write_stream(cx, len, |socket| sys::send_vectored(socket, bufs))
    }

    /// The write side's `poll_close`: a half-close, so the peer reads end
    /// of file; nothing is buffered here to flush first.
    pub(crate) fn poll_shutdown_write(&self) -> Poll<io::Result<()>> {
        Poll::Ready(self.shutdown(Shutdown::Write))
    }
}

impl AsyncRead for &UnixStream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        self.poll_recv(cx, buf)
    }
}

/// `poll_flush` has nothing to do (bytes go straight to the kernel);
/// `poll_close` shuts the write side down.
impl AsyncWrite for &UnixStream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.poll_send(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        self.poll_send_vectored(cx, bufs)
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_close(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.poll_shutdown_write()
    }
}

impl AsyncRead for UnixStream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        self.poll_recv(cx, buf)
    }
}

impl AsyncWrite for UnixStream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.poll_send(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        self.poll_send_vectored(cx, bufs)
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_close(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.poll_shutdown_write()
    }
}

impl fmt::Debug for UnixStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UnixStream")
            .field("local_addr", &self.local_addr().ok())
            .field("peer_addr", &self.peer_addr().ok())
            .finish()
    }
}

impl std::os::fd::AsFd for UnixStream {
    fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        self.io.get_ref().as_fd()
    }
}

impl std::os::fd::AsRawFd for UnixStream {
    fn as_raw_fd(&self) -> std::os::fd::RawFd {
        self.io.get_ref().as_raw_fd()
    }
}
