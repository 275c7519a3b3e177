//! [`UnixListener`], whole, and [`Incoming`], its connections as a
//! `futures_core::Stream`. Accept errors are sorted, and `EMFILE` backed
//! off, by the accept loop TCP uses (`tcp/accept.rs`).

use std::fmt;
use std::future::poll_fn;
use std::io;
use std::os::unix::net::SocketAddr;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures_core::Stream;
use ioloop_runtime::io::Registration;

use super::addr::ToUnixAddr;
use super::stream::UnixStream;
use super::sys;
use crate::tcp::accept::{Accept, Acceptor};

/// A Unix domain socket listening for connections, registered with the
/// reactor: [`TcpListener`](crate::TcpListener) for a path.
///
/// Binding creates the socket file; dropping the listener closes the
/// socket but leaves the file, as std and tokio do, and a later bind to
/// the same path fails with `AddrInUse` until it is removed: a server
/// removes it when it stops (or before it binds). Abstract names (Linux)
/// leave no file.
///
/// # Examples
///
/// ```
/// use futures_util::{AsyncReadExt, AsyncWriteExt};
/// use ioloop::net::{UnixListener, UnixStream};
///
/// ioloop::block_on(async {
///     let dir = std::env::temp_dir().join(format!("ioloop-doc-listener-{}", std::process::id()));
///     std::fs::create_dir_all(&dir)?;
///     let path = dir.join("echo.sock");
///     let listener = UnixListener::bind(&path)?;
///     let server = ioloop::spawn(async move {
///         let (mut stream, _) = listener.accept().await?;
///         let mut buf = [0; 5];
///         stream.read_exact(&mut buf).await?;
///         stream.write_all(&buf).await
///     });
///     let mut client = UnixStream::connect(&path).await?;
///     client.write_all(b"hello").await?;
///     let mut echoed = [0; 5];
///     client.read_exact(&mut echoed).await?;
///     assert_eq!(&echoed, b"hello");
///     server.await.unwrap()?;
///     std::fs::remove_dir_all(&dir)?;
///     Ok::<_, std::io::Error>(())
/// })
/// .unwrap();
/// ```
pub struct UnixListener {
    io: Registration<mio::net::UnixListener>,
}

impl UnixListener {
    /// Binds a listener to `path` (on Linux, `"\0name"` or an abstract
    /// `SocketAddr` binds an abstract name: see [`ToUnixAddr`]) and starts
    /// listening, with the kernel's largest backlog. Not `async`, as in
    /// tokio: binding never waits.
    ///
    /// # Errors
    ///
    /// `AddrInUse` if a file (a socket left by an earlier run, say) is at
    /// `path`; `NotFound` if its directory does not exist;
    /// `PermissionDenied`; `InvalidInput` if the path is too long (108
    /// bytes on Linux); an error if no ioloop runtime runs on this thread.
    #[doc(alias = "start_unix_server", alias = "listen")]
    pub fn bind(path: impl ToUnixAddr) -> io::Result<UnixListener> {
        let addr = path.to_unix_addr()?;
        let listener = mio::net::UnixListener::bind_addr(&addr)?;
        // Binding made the file: do not leave it behind if registering
        // fails, or the next bind would find the path taken.
        Self::from_mio(listener).inspect_err(|_| sys::remove_socket_file(&addr))
    }

    /// Wraps a listener made elsewhere (bound and listening), switching it
    /// to non-blocking mode and registering it with the runtime running on
    /// this thread.
    ///
    /// # Errors
    ///
    /// If the socket cannot be made non-blocking, or no ioloop runtime runs
    /// on this thread.
    pub fn from_std(listener: std::os::unix::net::UnixListener) -> io::Result<UnixListener> {
        listener.set_nonblocking(true)?;
        Self::from_mio(mio::net::UnixListener::from_std(listener))
    }

    fn from_mio(listener: mio::net::UnixListener) -> io::Result<UnixListener> {
        Ok(UnixListener {
            io: Registration::new(listener)?,
        })
    }

    /// The address this listener is bound to.
    ///
    /// # Errors
    ///
    /// The OS's error from `getsockname(2)` (rare).
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.io.get_ref().local_addr()
    }

    /// Waits for the next connection and returns it with the peer's
    /// address (unnamed, unless the client bound its socket). The stream
    /// is registered with the runtime running this future.
    ///
    /// Accept errors are handled as [`TcpListener::accept`] handles them:
    /// connections that failed while queued are skipped, logged at debug
    /// level; when the process is out of file descriptors (`EMFILE`,
    /// `ENFILE`), buffers or memory, the connection stays queued and
    /// accepting pauses, with a warning, for 10 ms, doubling on each
    /// failure up to 1 s, instead of spinning on a listener that stays
    /// readable.
    ///
    /// # Errors
    ///
    /// Only errors that say the listener itself is unusable (or the runtime
    /// shut down); per-connection and resource errors are handled here.
    ///
    /// # Cancellation
    ///
    /// Cancel-safe: a connection is either returned or left in the queue.
    ///
    /// [`TcpListener::accept`]: crate::TcpListener::accept
    pub async fn accept(&self) -> io::Result<(UnixStream, SocketAddr)> {
        let mut acceptor = Acceptor::new(&self.io);
        poll_fn(|cx| acceptor.poll_accept(cx)).await
    }

    /// The connections this listener accepts, as a `futures_core::Stream`:
    /// see [`Incoming`].
    pub fn incoming(&self) -> Incoming<'_> {
        Incoming {
            acceptor: Acceptor::new(&self.io),
        }
    }
}

impl Accept for mio::net::UnixListener {
    type Accepted = (UnixStream, SocketAddr);

    fn accept_registered(&self) -> io::Result<Self::Accepted> {
        let (stream, addr) = self.accept()?;
        Ok((UnixStream::from_mio(stream)?, addr))
    }
}

impl fmt::Debug for UnixListener {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UnixListener")
            .field("local_addr", &self.local_addr().ok())
            .finish()
    }
}

impl std::os::fd::AsFd for UnixListener {
    fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        self.io.get_ref().as_fd()
    }
}

impl std::os::fd::AsRawFd for UnixListener {
    fn as_raw_fd(&self) -> std::os::fd::RawFd {
        self.io.get_ref().as_raw_fd()
    }
}

/// The stream of connections a [`UnixListener`] accepts, from
/// [`UnixListener::incoming`].
///
/// It never ends, and yields `Err` only for errors of the listener itself:
/// failed connections are skipped and resource shortages backed off, as in
/// [`UnixListener::accept`].
///
/// # Examples
///
/// ```
/// use std::pin::Pin;
/// use futures_core::Stream;
/// use ioloop::net::{UnixListener, UnixStream};
///
/// ioloop::block_on(async {
///     let name = format!("\0ioloop-doc-incoming-{}", std::process::id());
///     let listener = UnixListener::bind(&name)?;
///     let _client = UnixStream::connect(&name).await?;
///     let mut incoming = listener.incoming();
///     let next = std::future::poll_fn(|cx| Pin::new(&mut incoming).poll_next(cx)).await;
///     let server = next.expect("the stream never ends")?;
///     assert!(server.peer_addr()?.is_unnamed());
///     Ok::<_, std::io::Error>(())
/// })
/// .unwrap();
/// ```
#[must_use = "streams do nothing unless polled"]
pub struct Incoming<'a> {
    acceptor: Acceptor<'a, mio::net::UnixListener>,
}

impl Stream for Incoming<'_> {
    type Item = io::Result<UnixStream>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        this.acceptor
            .poll_accept(cx)
            .map(|accepted| Some(accepted.map(|(stream, _)| stream)))
    }
}

impl fmt::Debug for Incoming<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Incoming")
            .field("listener", self.acceptor.listener().get_ref())
            .field("acceptor", &self.acceptor)
            .finish()
    }
}
