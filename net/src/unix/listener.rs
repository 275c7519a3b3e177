//! [`UnixListener`], whole, and [`Incoming`], its connections as a
//! `futures_core::Stream`. Accept errors are sorted, and `EMFILE` backed
//! off, by the accept loop TCP uses (`tcp/accept.rs`).

use std::future::poll_fn;
use std::io;
use std::os::unix::net::SocketAddr;

use ioloop_runtime::io::Registration;

use super::addr::ToUnixAddr;
use super::stream::UnixStream;
use super::sys;
use crate::impls;
use crate::tcp::accept::{self, Accept, Acceptor};

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
        let mut acceptor = Acceptor::new(self);
        poll_fn(|cx| acceptor.poll_accept(cx)).await
    }

    /// The connections this listener accepts, as a `futures_core::Stream`:
    /// see [`Incoming`].
    pub fn incoming(&self) -> Incoming<'_> {
        Incoming::new(self)
    }
}

impls::debug_and_fd!(UnixListener: local_addr);

/// The stream of connections a [`UnixListener`] accepts, from
/// [`UnixListener::incoming`]: see [`UnixListener::accept`] for the errors
/// it skips and backs off.
pub type Incoming<'a> = accept::Incoming<'a, UnixListener>;

impl Accept for UnixListener {
    type Io = mio::net::UnixListener;
    type Stream = UnixStream;
    type Addr = SocketAddr;

    fn io(&self) -> &Registration<Self::Io> {
        &self.io
    }

    fn accept_registered(io: &Self::Io) -> io::Result<(UnixStream, SocketAddr)> {
        let (stream, addr) = io.accept()?;
        Ok((UnixStream::from_mio(stream)?, addr))
    }
}
