//! [`TcpStream`], whole: connecting, addresses and options, and
//! `futures_io::AsyncRead` / `AsyncWrite`.

use std::fmt;
use std::future::poll_fn;
use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr};
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use futures_io::{AsyncRead, AsyncWrite};
use ioloop_runtime::io::Registration;

use crate::addr::ToSocketAddr;

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
    /// There is no timeout of its own (the kernel gives up after minutes of
    /// unanswered SYNs): wrap it in `ioloop::time::timeout` to bound it.
    ///
    /// # Errors
    ///
    /// `InvalidInput` if `addr` is not a literal `ip:port` (no DNS on the
    /// loop thread); the connect error otherwise (`ConnectionRefused` when
    /// nothing listens, `TimedOut`, `NetworkUnreachable`, ...); an error if
    /// no ioloop runtime runs on this thread.
    ///
    /// # Cancellation
    ///
    /// Dropping the future closes the half-open socket.
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
    pub async fn connect(addr: impl ToSocketAddr) -> io::Result<TcpStream> {
        let addr = addr.to_socket_addr()?;
        let stream = Self::from_mio(mio::net::TcpStream::connect(addr)?)?;
        poll_fn(|cx| stream.poll_connected(cx)).await?;
        Ok(stream)
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
            .poll_read_stream(cx, len, |mut socket| socket.read(buf))
    }

    /// Writes from `buf`, waiting for room; an empty `buf` returns `Ok(0)`
    /// at once.
    pub(crate) fn poll_send(&self, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        if buf.is_empty() {
            return Poll::Ready(Ok(0));
        }
        // std's `write` is `send(..., MSG_NOSIGNAL)` on Linux: a peer that
        // has gone is an error for the writing task, not a `SIGPIPE` for a
        // process that never ignored it. For the same reason vectored
        // writes keep the default (first non-empty buffer): `writev(2)`
        // cannot take `MSG_NOSIGNAL`.
        self.io
            .poll_write_stream(cx, buf.len(), |mut socket| socket.write(buf))
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
