//! [`TcpStream`], whole: connecting, addresses and options, and
//! `futures_io::AsyncRead` / `AsyncWrite`.

use std::fmt;
use std::future::poll_fn;
use std::io::{self, IoSlice, IoSliceMut, Read};
use std::mem::MaybeUninit;
use std::net::{Shutdown, SocketAddr};
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use futures_io::{AsyncRead, AsyncWrite};
use ioloop_runtime::io::Registration;

use crate::addr::{self, ToSocketAddrs};
use crate::syscall;

/// A TCP connection registered with the reactor: the lesson's `conn`.
///
/// `TcpStream` and `&TcpStream` implement `futures_io::AsyncRead` and
/// `AsyncWrite`, so one task can read while another writes (one task per
/// direction: see [`split`](Self::split) and
/// [`into_split`](Self::into_split)). For line-oriented protocols wrap it
/// in `ioloop::io::StreamReader` and `StreamWriter`. Writes never raise
/// `SIGPIPE`: a peer that has gone is `BrokenPipe` or `ConnectionReset`.
///
/// Dropping the stream closes the socket.
///
/// # Examples
///
/// ```
/// use ioloop::net::{TcpListener, TcpStream};
///
/// ioloop::block_on(async {
///     let listener = TcpListener::bind("127.0.0.1:0").await?;
///     let client = TcpStream::connect(listener.local_addr()?).await?;
///     let (server, _) = listener.accept().await?;
///     assert_eq!(client.peer_addr()?, server.local_addr()?);
///     assert_eq!(server.peer_addr()?, client.local_addr()?);
///     Ok::<_, std::io::Error>(())
/// })
/// .unwrap();
/// ```
pub struct TcpStream {
    io: Registration<mio::net::TcpStream>,
}

impl TcpStream {
    /// Opens a connection to `addr`: a non-blocking `connect(2)`, then a
    /// wait for the socket to become writable, then its error, if any.
    ///
    /// `addr` is any [`ToSocketAddrs`]: a literal address is used at once; a
    /// host name (`"example.com:80"`, `("localhost", 8080)`) is resolved on
    /// the blocking pool first (see [`lookup_host`](crate::lookup_host)).
    /// With several addresses (a name's, or a slice), each is tried in turn,
    /// in order, until one connects. They are not raced (no RFC 8305 "happy
    /// eyeballs"): an address that drops SYNs holds up the next ones until
    /// the kernel gives up on it.
    ///
    /// There is no timeout of its own (the kernel gives up after minutes of
    /// unanswered SYNs): wrap it in `ioloop::time::timeout` to bound it.
    ///
    /// # Errors
    ///
    /// The last address's connect error if none connects
    /// (`ConnectionRefused` when nothing listens, `TimedOut`,
    /// `NetworkUnreachable`, ...); the lookup's error for a name that does
    /// not resolve, naming it; `InvalidInput` for a malformed address string
    /// or an empty slice; an error if no ioloop runtime runs on this thread.
    ///
    /// # Cancellation
    ///
    /// Dropping the future closes the half-open socket (and abandons a
    /// lookup under way).
    ///
    /// # Examples
    ///
    /// ```
    /// use ioloop::net::{TcpListener, TcpStream};
    ///
    /// ioloop::block_on(async {
    ///     let listener = TcpListener::bind("127.0.0.1:0").await?;
    ///     let addr = listener.local_addr()?;
    ///     let stream = TcpStream::connect(addr).await?;
    ///     assert_eq!(stream.peer_addr()?, addr);
    ///     drop(listener);
    ///     let refused = TcpStream::connect(addr).await.unwrap_err();
    ///     assert_eq!(refused.kind(), std::io::ErrorKind::ConnectionRefused);
    ///     Ok::<_, std::io::Error>(())
    /// })
    /// .unwrap();
    /// ```
    #[doc(alias = "open_connection", alias = "create_connection")]
    pub async fn connect(addr: impl ToSocketAddrs) -> io::Result<TcpStream> {
        let mut last = None;
        for addr in addr::resolve(&addr).await? {
            match Self::connect_one(addr).await {
                Ok(stream) => return Ok(stream),
                Err(err) => last = Some(err),
            }
        }
        Err(last.unwrap_or_else(addr::no_addresses))
    }

    /// Ready once a non-blocking connect has finished, with its outcome.
    fn poll_connected(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        loop {
            // Writable means the connect finished, well or not: `SO_ERROR`
            // says which. A wake-up before that (a new registration starts
            // out "ready") shows as `ENOTCONN` from `getpeername`: clear the
            // readiness and wait for the real edge.
            let event = ready!(self.io.poll_write_ready(cx))?;
            let socket = self.io.get_ref();
            if let Some(err) = socket.take_error()? {
                return Poll::Ready(Err(err));
            }
            match socket.peer_addr() {
                Ok(_) => return Poll::Ready(Ok(())),
                // A write-closed socket stays "ready" (the closed bit never
                // clears), so waiting again would spin: report it instead.
                Err(err)
                    if err.kind() == io::ErrorKind::NotConnected && !event.is_write_closed() =>
                {
                    self.io.clear_readiness(event);
                }
                Err(err) => return Poll::Ready(Err(err)),
            }
        }
    }

    /// Wraps a connected stream made elsewhere, switching it to
    /// non-blocking mode and registering it with the runtime running on
    /// this thread.
    ///
    /// # Errors
    ///
    /// If the socket cannot be made non-blocking, or no ioloop runtime runs
    /// on this thread.
    pub fn from_std(stream: std::net::TcpStream) -> io::Result<TcpStream> {
        stream.set_nonblocking(true)?;
        Self::from_mio(mio::net::TcpStream::from_std(stream))
    }

    pub(crate) fn from_mio(stream: mio::net::TcpStream) -> io::Result<TcpStream> {
        Ok(TcpStream {
            io: Registration::new(stream)?,
        })
    }

    /// The address of the peer this stream is connected to.
    ///
    /// # Errors
    ///
    /// `NotConnected` once the connection was reset.
    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        self.io.get_ref().peer_addr()
    }

    /// The local address of this stream.
    ///
    /// # Errors
    ///
    /// The OS's error from `getsockname(2)` (rare).
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.io.get_ref().local_addr()
    }

    /// Sets `TCP_NODELAY`: with `true`, small writes go out at once instead
    /// of waiting (Nagle's algorithm) to be merged with later ones.
    ///
    /// # Errors
    ///
    /// The OS's error from `setsockopt(2)`.
    pub fn set_nodelay(&self, nodelay: bool) -> io::Result<()> {
        self.io.get_ref().set_nodelay(nodelay)
    }

    /// Whether `TCP_NODELAY` is set (it is not by default); see
    /// [`set_nodelay`](Self::set_nodelay).
    ///
    /// # Errors
    ///
    /// The OS's error from `getsockopt(2)`.
    pub fn nodelay(&self) -> io::Result<bool> {
        self.io.get_ref().nodelay()
    }

    /// Shuts down one or both directions: `Shutdown::Write` is a half-close
    /// (the peer reads end of file once it has read what was sent, and this
    /// side can still read), the lesson's `conn.shutdown(SHUT_WR)`.
    ///
    /// # Errors
    ///
    /// The OS's error from `shutdown(2)`. A connection the peer already
    /// reset is not one: it is shut, and the call returns `Ok`.
    pub fn shutdown(&self, how: Shutdown) -> io::Result<()> {
        match self.io.get_ref().shutdown(how) {
            // A reset got there first (a race with the kernel): nothing left to shut.
            Err(err) if err.kind() == io::ErrorKind::NotConnected => Ok(()),
            result => result,
        }
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
    /// use ioloop::net::{TcpListener, TcpStream};
    ///
    /// ioloop::block_on(async {
    ///     let listener = TcpListener::bind("127.0.0.1:0").await?;
    ///     let stream = TcpStream::connect(listener.local_addr()?).await?;
    ///     let mut buf = [0; 8];
    ///     let err = stream.try_read(&mut buf).unwrap_err();
    ///     assert_eq!(err.kind(), ErrorKind::WouldBlock);
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
        self.io.try_write_io(|socket| syscall::send(socket, buf))
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
        self.io.try_write_io(|socket| send_vectored(socket, bufs))
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
        self.io.read_io(|socket| socket.peek(buf)).await
    }

    /// Reads into `buf`, which need not be initialized, waiting for data:
    /// one `recv(2)` straight into the caller's memory, with the readiness
    /// handling of the stream's `AsyncRead` (a short read clears readiness).
    /// For adapters whose buffers are uninitialized, such as hyper's
    /// `ReadBufCursor`, which would otherwise zero each buffer before every
    /// read. `Ok(n)`: the first `n` bytes of `buf` are initialized, and
    /// `Ok(0)` is the end of the stream (or an empty `buf`).
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
    /// use ioloop::net::{TcpListener, TcpStream};
    ///
    /// ioloop::block_on(async {
    ///     let listener = TcpListener::bind("127.0.0.1:0").await?;
    ///     let mut client = TcpStream::connect(listener.local_addr()?).await?;
    ///     let (server, _) = listener.accept().await?;
    ///     client.write_all(b"hi").await?;
    ///     let mut buf = [MaybeUninit::<u8>::uninit(); 16];
    ///     let n = poll_fn(|cx| server.poll_read_uninit(cx, &mut buf)).await?;
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
        let len = buf.len();
        self.io
            .poll_read_stream(cx, len, |socket| syscall::recv_uninit(socket, buf))
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
        // The stream variant also clears readiness after a short read: on a
        // byte stream the kernel buffer is then empty, and the next call
        // waits for an edge instead of spending a `recv` on `EAGAIN`. That
        // keeps an echo at one `recv` and one `send` per message.
        let len = buf.len();
        self.io
            .poll_read_stream(cx, len, |socket| syscall::recv(socket, buf))
    }

    /// Writes from `buf`, waiting for room; an empty `buf` returns `Ok(0)`
    /// at once.
    pub(crate) fn poll_send(&self, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        if buf.is_empty() {
            return Poll::Ready(Ok(0));
        }
        // `send(..., MSG_NOSIGNAL)`: a peer that has gone is an error for
        // the writing task, not a `SIGPIPE` for a process that never
        // ignored it.
        self.io
            .poll_write_stream(cx, buf.len(), |socket| syscall::send(socket, buf))
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
            .poll_write_stream(cx, len, |socket| send_vectored(socket, bufs))
    }

    /// The write side's `poll_close`: a half-close, so the peer reads end
    /// of file; nothing is buffered here to flush first.
    pub(crate) fn poll_shutdown_write(&self) -> Poll<io::Result<()>> {
        Poll::Ready(self.shutdown(Shutdown::Write))
    }
}

impl AsyncRead for &TcpStream {
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
impl AsyncWrite for &TcpStream {
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

impl AsyncRead for TcpStream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        self.poll_recv(cx, buf)
    }
}

impl AsyncWrite for TcpStream {
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

impl fmt::Debug for TcpStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TcpStream")
            .field("local_addr", &self.local_addr().ok())
            .field("peer_addr", &self.peer_addr().ok())
            .finish()
    }
}

#[cfg(unix)]
impl std::os::fd::AsFd for TcpStream {
    fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        self.io.get_ref().as_fd()
    }
}

#[cfg(unix)]
impl std::os::fd::AsRawFd for TcpStream {
    fn as_raw_fd(&self) -> std::os::fd::RawFd {
        self.io.get_ref().as_raw_fd()
    }
}

/// `sendmsg` with `MSG_NOSIGNAL`: `writev(2)` cannot take the flag, and a
/// vectored write to a peer that has gone must be an error, not `SIGPIPE`.
fn send_vectored(socket: &mio::net::TcpStream, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
    syscall::send_vectored(socket, bufs)
}

/// Helpers for [`TcpSocket`](super::TcpSocket).
impl TcpStream {
    /// Registers a socket whose non-blocking `connect(2)` has begun and
    /// waits for the connect to finish, with its outcome.
    pub(crate) async fn connected(stream: mio::net::TcpStream) -> io::Result<TcpStream> {
        let stream = Self::from_mio(stream)?;
        poll_fn(|cx| stream.poll_connected(cx)).await?;
        Ok(stream)
    }

    /// One connect attempt, to one address.
    async fn connect_one(addr: SocketAddr) -> io::Result<TcpStream> {
        Self::connected(mio::net::TcpStream::connect(addr)?).await
    }
}

// The options: their imports here, next to the one block that uses them.
use std::time::Duration;

use socket2::SockRef;

/// Socket options, through `socket2::SockRef`.
impl TcpStream {
    /// Sets `SO_LINGER`, what closing (dropping) the stream does with data
    /// not yet sent. `None`, the default: the close returns at once and the
    /// kernel sends the rest, then an orderly end of file. `Some(ZERO)`:
    /// the close drops unsent data and resets the connection (the peer's
    /// next read or write fails with `ConnectionReset`), leaving no
    /// `TIME_WAIT` behind. A non-zero duration changes nothing here: the
    /// socket is non-blocking, so the close never waits for it.
    ///
    /// The OS counts whole seconds in a C `int`: a fraction of a second is
    /// rounded up (so only `ZERO` is an abortive close; tokio, passing it
    /// to socket2 as is, rounds half a second down to a reset), and a
    /// duration past `i32::MAX` seconds is taken as that; [`linger`](Self::linger)
    /// reads back what the OS holds.
    ///
    /// # Errors
    ///
    /// The OS's error from `setsockopt(2)`.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use futures_util::AsyncReadExt;
    /// use ioloop::net::{TcpListener, TcpStream};
    ///
    /// ioloop::block_on(async {
    ///     let listener = TcpListener::bind("127.0.0.1:0").await?;
    ///     let mut client = TcpStream::connect(listener.local_addr()?).await?;
    ///     let (server, _) = listener.accept().await?;
    ///     server.set_linger(Some(Duration::ZERO))?;
    ///     drop(server); // a reset, not an end of file
    ///     let err = client.read(&mut [0; 8]).await.unwrap_err();
    ///     assert_eq!(err.kind(), std::io::ErrorKind::ConnectionReset);
    ///     Ok::<_, std::io::Error>(())
    /// })
    /// .unwrap();
    /// ```
    pub fn set_linger(&self, linger: Option<Duration>) -> io::Result<()> {
        SockRef::from(self.io.get_ref()).set_linger(crate::options::linger(linger))
    }

    /// `SO_LINGER`; see [`set_linger`](Self::set_linger).
    ///
    /// # Errors
    ///
    /// The OS's error from `getsockopt(2)`.
    pub fn linger(&self) -> io::Result<Option<Duration>> {
        SockRef::from(self.io.get_ref()).linger()
    }

    /// Sets `IP_TTL`, the time-to-live of the IPv4 packets this stream sends:
    /// how many routers they may cross.
    ///
    /// # Errors
    ///
    /// `InvalidInput` outside 1..=255, checked here: `u32::MAX` reaches the
    /// OS as -1, which Linux takes as "the default" rather than refuse.
    /// Else the OS's error from `setsockopt(2)`.
    pub fn set_ttl(&self, ttl: u32) -> io::Result<()> {
        SockRef::from(self.io.get_ref()).set_ttl_v4(crate::options::ttl(ttl)?)
    }

    /// `IP_TTL`; see [`set_ttl`](Self::set_ttl).
    ///
    /// # Errors
    ///
    /// The OS's error from `getsockopt(2)`.
    pub fn ttl(&self) -> io::Result<u32> {
        SockRef::from(self.io.get_ref()).ttl_v4()
    }

    /// Sets `IP_TOS`, the type-of-service byte (DSCP and ECN bits) of the
    /// IPv4 packets this stream sends. Not on Fuchsia, Redox, Solaris or
    /// Haiku.
    ///
    /// # Errors
    ///
    /// `InvalidInput` above 255, checked here: `u32::MAX` reaches the OS
    /// as -1, which Linux may read as "the default", or truncate, rather than
    /// refuse.
    /// Else the OS's error from `setsockopt(2)`.
    #[cfg(not(any(
        target_os = "fuchsia",
        target_os = "redox",
        target_os = "solaris",
        target_os = "haiku"
    )))]
    pub fn set_tos(&self, tos: u32) -> io::Result<()> {
        SockRef::from(self.io.get_ref()).set_tos_v4(crate::options::byte(tos, "IP_TOS")?)
    }

    /// `IP_TOS`; see [`set_tos`](Self::set_tos).
    ///
    /// # Errors
    ///
    /// The OS's error from `getsockopt(2)`.
    #[cfg(not(any(
        target_os = "fuchsia",
        target_os = "redox",
        target_os = "solaris",
        target_os = "haiku"
    )))]
    pub fn tos(&self) -> io::Result<u32> {
        SockRef::from(self.io.get_ref()).tos_v4()
    }

    /// Sets `IPV6_TCLASS`, the traffic class byte of the IPv6 packets this
    /// stream sends (IPv6's `IP_TOS`). Linux, Android, the BSDs, macOS,
    /// illumos and Fuchsia.
    ///
    /// # Errors
    ///
    /// `InvalidInput` above 255, checked here: `u32::MAX` reaches the OS
    /// as -1, which Linux may read as "the default", or truncate, rather than
    /// refuse.
    /// Else the OS's error from `setsockopt(2)` (on an IPv4 socket, say).
    #[cfg(any(
        target_os = "android",
        target_os = "dragonfly",
        target_os = "freebsd",
        target_os = "fuchsia",
        target_os = "illumos",
        target_os = "linux",
        target_os = "macos",
        target_os = "netbsd",
        target_os = "openbsd",
    ))]
    pub fn set_tclass_v6(&self, tclass: u32) -> io::Result<()> {
        SockRef::from(self.io.get_ref()).set_tclass_v6(crate::options::byte(tclass, "IPV6_TCLASS")?)
    }

    /// `IPV6_TCLASS`; see [`set_tclass_v6`](Self::set_tclass_v6).
    ///
    /// # Errors
    ///
    /// The OS's error from `getsockopt(2)`.
    #[cfg(any(
        target_os = "android",
        target_os = "dragonfly",
        target_os = "freebsd",
        target_os = "fuchsia",
        target_os = "illumos",
        target_os = "linux",
        target_os = "macos",
        target_os = "netbsd",
        target_os = "openbsd",
    ))]
    pub fn tclass_v6(&self) -> io::Result<u32> {
        SockRef::from(self.io.get_ref()).tclass_v6()
    }

    /// Sets `SO_SNDBUF`, the size of the kernel's send buffer for this
    /// stream. Linux doubles the value (the other half is its bookkeeping)
    /// and clamps it to `net.core.wmem_max`, so
    /// [`send_buffer_size`](Self::send_buffer_size) rarely returns what was
    /// set.
    ///
    /// # Errors
    ///
    /// The OS's error from `setsockopt(2)`.
    pub fn set_send_buffer_size(&self, size: u32) -> io::Result<()> {
        SockRef::from(self.io.get_ref()).set_send_buffer_size(size as usize)
    }

    /// The size of the kernel's send buffer (`SO_SNDBUF`).
    ///
    /// # Errors
    ///
    /// The OS's error from `getsockopt(2)`.
    pub fn send_buffer_size(&self) -> io::Result<u32> {
        let size = SockRef::from(self.io.get_ref()).send_buffer_size()?;
        Ok(u32::try_from(size).unwrap_or(u32::MAX))
    }

    /// Sets `SO_RCVBUF`, the size of the kernel's receive buffer for this
    /// stream; Linux doubles and clamps it as for
    /// [`set_send_buffer_size`](Self::set_send_buffer_size), here to
    /// `net.core.rmem_max`.
    ///
    /// # Errors
    ///
    /// The OS's error from `setsockopt(2)`.
    pub fn set_recv_buffer_size(&self, size: u32) -> io::Result<()> {
        SockRef::from(self.io.get_ref()).set_recv_buffer_size(size as usize)
    }

    /// The size of the kernel's receive buffer (`SO_RCVBUF`).
    ///
    /// # Errors
    ///
    /// The OS's error from `getsockopt(2)`.
    pub fn recv_buffer_size(&self) -> io::Result<u32> {
        let size = SockRef::from(self.io.get_ref()).recv_buffer_size()?;
        Ok(u32::try_from(size).unwrap_or(u32::MAX))
    }
}
