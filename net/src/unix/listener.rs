//! [`UnixListener`]: binding (accepting is `tcp/accept.rs`'s, shared
//! with `TcpListener`).

use std::io;
use std::os::unix::net::SocketAddr;

use ioloop_runtime::io::Registration;

use super::addr::ToUnixAddr;
use super::stream::UnixStream;
use super::sys;
use crate::tcp::accept;

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

accept::listener!(UnixListener {
    io: mio::net::UnixListener,
    std: std::os::unix::net::UnixListener,
    stream: UnixStream,
    addr: SocketAddr
});

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
}
