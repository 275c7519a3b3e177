//! [`UnixStream`] (what it shares with `TcpStream` is `impls.rs`).

use std::io;
use std::os::unix::net::SocketAddr;
use std::sync::Arc;

use ioloop_runtime::io::Registration;
use ioloop_runtime::time::sleep;

use super::addr::ToUnixAddr;
use super::sys;
use crate::outbox::Sock;
use crate::seam::{Open, Socket, not_simulated};
use crate::sys::Either;
use crate::syscall::Simulated;
use crate::{impls, options};

/// A Unix domain stream socket registered with the reactor: a
/// [`TcpStream`](crate::TcpStream) for a path, with the same traits and
/// halves. Writes never raise `SIGPIPE` (a peer that has gone is
/// `BrokenPipe` or `ConnectionReset`).
///
/// Inside a simulation ([`seam`](crate::seam)) a Unix stream, its listener
/// and a pair are simulated, within the host: a path names a listener
/// while it is open.
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
    io: Arc<Sock<sys::Stream>>,
}

impls::stream!(UnixStream: SocketAddr;
    short_reads_drain: false, peek: sys::peek);

impl UnixStream {
    /// Connects to the listener at `path` (see [`ToUnixAddr`]), done once
    /// the connection is queued on its backlog; a full backlog is tried
    /// again after 1 ms, doubling up to 100 ms (bound it with a timeout).
    /// A listener dropped before accepting shows at the first read.
    ///
    /// # Errors
    ///
    /// `NotFound` if no socket is at `path`, `ConnectionRefused` if nothing
    /// listens on it, `PermissionDenied`, `InvalidInput` for a path too
    /// long (108 bytes on Linux); an error if no ioloop runtime runs here.
    ///
    /// # Cancellation
    ///
    /// Dropping the future gives up; no connection is left behind.
    #[doc(alias = "open_unix_connection")]
    pub async fn connect(path: impl ToUnixAddr) -> io::Result<UnixStream> {
        let addr = path.to_unix_addr()?;
        let mut delay = sys::FIRST_RETRY;
        loop {
            let connected = match Socket::open(Open::UnixConnect(&addr)) {
                Some(sim) => sim.map(Either::Sim),
                None => mio::net::UnixStream::connect_addr(&addr).map(Either::Os),
            };
            match connected {
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

    /// A pair of connected, unnamed streams: a two-way pipe. Fails with
    /// the OS's error from `socketpair(2)`, or with no runtime here.
    pub fn pair() -> io::Result<(UnixStream, UnixStream)> {
        let (a, b) = match Socket::unix_pair() {
            Some(pair) => pair.map(|(a, b)| (Either::Sim(a), Either::Sim(b)))?,
            None => mio::net::UnixStream::pair().map(|(a, b)| (Either::Os(a), Either::Os(b)))?,
        };
        Ok((Self::from_mio(a)?, Self::from_mio(b)?))
    }

    /// Wraps a connected std stream, made non-blocking and registered:
    /// fails if it cannot be made non-blocking, or no runtime runs here.
    pub fn from_std(stream: std::os::unix::net::UnixStream) -> io::Result<UnixStream> {
        stream.set_nonblocking(true)?;
        Self::from_mio(Either::Os(mio::net::UnixStream::from_std(stream)))
    }

    pub(crate) fn from_mio(stream: sys::Stream) -> io::Result<UnixStream> {
        if let Either::Os(os) = &stream {
            sys::no_sigpipe(os)?;
        }
        Registration::new(stream).map(|io| UnixStream { io: Sock::new(io) })
    }

    /// The peer process's credentials at connect time (`SO_PEERCRED`;
    /// Linux and Android).
    ///
    /// # Errors
    ///
    /// The OS's error from `getsockopt(2)` (rare).
    #[cfg(any(target_os = "linux", target_os = "android"))]
    #[doc(alias = "SO_PEERCRED", alias = "getpeereid")]
    pub fn peer_cred(&self) -> io::Result<super::UCred> {
        let os = self
            .io
            .get_ref()
            .os()
            .ok_or_else(|| not_simulated("SO_PEERCRED"))?;
        super::ucred::peer_cred(&*os)
    }

    options::sockopt!(@buffer_sizes);
}
