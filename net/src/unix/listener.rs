//! [`UnixListener`] (accepting is `tcp/accept.rs`'s).

use std::io;
use std::os::unix::net::SocketAddr;

use ioloop_runtime::io::Registration;

use super::addr::ToUnixAddr;
use super::stream::UnixStream;
use super::sys;
use crate::seam::{Open, Socket};
use crate::sys::Either;
use crate::tcp::accept;

/// A Unix domain socket listening for connections (a [`TcpListener`](crate::TcpListener)
/// for a path). Dropping it leaves the socket file, as std and tokio do.
///
/// # Examples
///
/// ```
/// use ioloop::net::{UnixListener, UnixStream};
/// ioloop::block_on(async {
///     let path = std::env::temp_dir().join(format!("ioloop-doc-{}.sock", std::process::id()));
///     let listener = UnixListener::bind(&path)?;
///     let _client = UnixStream::connect(&path).await?;
///     let (server, _) = listener.accept().await?;
///     assert!(server.peer_addr()?.is_unnamed());
///     std::fs::remove_file(&path)
/// })
/// .unwrap();
/// ```
pub struct UnixListener {
    io: Registration<sys::Listener>,
}

accept::listener!(UnixListener {
    io: sys::Listener,
    std: std::os::unix::net::UnixListener,
    stream: UnixStream,
    addr: SocketAddr
});

impl UnixListener {
    /// Binds a listener to `path` ([`ToUnixAddr`]), with the largest backlog.
    ///
    /// # Errors
    ///
    /// `AddrInUse` if a file is at `path`, `NotFound` without its directory,
    /// `PermissionDenied`, `InvalidInput` for a path too long; no runtime.
    #[doc(alias = "start_unix_server", alias = "listen")]
    pub fn bind(path: impl ToUnixAddr) -> io::Result<UnixListener> {
        let addr = path.to_unix_addr()?;
        if let Some(sim) = Socket::open(Open::UnixListen(&addr)) {
            return Self::from_mio(Either::Sim(sim?));
        }
        let listener = Either::Os(mio::net::UnixListener::bind_addr(&addr)?);
        // Binding made the file: do not leave it behind if registering
        // fails, or the next bind would find the path taken.
        Self::from_mio(listener).inspect_err(|_| sys::remove_socket_file(&addr))
    }
}
