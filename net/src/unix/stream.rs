//! [`UnixStream`], whole: connecting, pairs, addresses and credentials,
//! and reads (its writes, readiness and `futures_io` impls are
//! `impls.rs`'s, shared with `TcpStream`).

use std::io;
use std::os::unix::net::SocketAddr;

use ioloop_runtime::io::Registration;
use ioloop_runtime::time::sleep;

use super::addr::ToUnixAddr;
use super::sys;
use crate::{impls, options};

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

// `send` with `MSG_NOSIGNAL`, not std's `write`: on a Unix socket that is
// `write(2)`, which raises `SIGPIPE` once the peer is gone.
impls::stream!(UnixStream: SocketAddr; reads: io; send: sys::send, sys::send_vectored);

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
}

/// Socket options, through `socket2::SockRef`.
impl UnixStream {
    options::buffer_sizes!();
}
