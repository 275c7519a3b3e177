//! [`TcpListener`], whole, and [`Incoming`], its connections as a
//! `futures_core::Stream`. How accept errors are handled is `accept.rs`.

use std::future::poll_fn;
use std::io;
use std::net::SocketAddr;

use ioloop_runtime::io::Registration;
use socket2::{Domain, Protocol, Socket, Type};

use super::accept::{self, Accept, Acceptor};
use super::stream::TcpStream;
use crate::addr::{self, ToSocketAddrs};
use crate::{impls, options};

/// The listen backlog. std and mio use 128, which drops connections when
/// a burst of clients arrives faster than one loop tick accepts them; the
/// kernel caps it at `net.core.somaxconn` (4096 on Linux since 5.4).
const BACKLOG: i32 = 1024;

/// A TCP socket listening for connections: the lesson's listening socket,
/// registered with the reactor.
///
/// # Examples
///
/// ```
/// use ioloop::net::{TcpListener, TcpStream};
///
/// ioloop::block_on(async {
///     let listener = TcpListener::bind("127.0.0.1:0").await?;
///     let addr = listener.local_addr()?;
///     let client = TcpStream::connect(addr).await?;
///     let (server, peer) = listener.accept().await?;
///     assert_eq!(peer, client.local_addr()?);
///     assert_eq!(server.peer_addr()?, client.local_addr()?);
///     Ok::<_, std::io::Error>(())
/// })
/// .unwrap();
/// ```
pub struct TcpListener {
    io: Registration<mio::net::TcpListener>,
}

impl TcpListener {
    /// Binds a listener to `addr`, with `SO_REUSEADDR` (a restarted server
    /// can bind the port its previous run left in `TIME_WAIT`) and a listen
    /// backlog of 1024. Port 0 picks a free port; see
    /// [`local_addr`](Self::local_addr).
    ///
    /// `addr` is any [`ToSocketAddrs`]. A host name (`"localhost:8080"`) is
    /// resolved on the blocking pool, the only time this waits; a literal
    /// binds at once. The first address that binds is used. For other
    /// options before binding (`SO_REUSEPORT`, a backlog of your own), see
    /// [`TcpSocket`](crate::TcpSocket).
    ///
    /// # Errors
    ///
    /// The OS's error if the socket cannot be created or bound (`AddrInUse`,
    /// `PermissionDenied`, ...), the last address's if `addr` stands for
    /// several and none binds; the lookup's error for a host name that does
    /// not resolve; `InvalidInput` for a malformed address string or an
    /// empty slice; an error if no ioloop runtime runs on this thread.
    ///
    /// # Examples
    ///
    /// ```
    /// use ioloop::net::TcpListener;
    ///
    /// ioloop::block_on(async {
    ///     let listener = TcpListener::bind("127.0.0.1:0").await?;
    ///     assert_ne!(listener.local_addr()?.port(), 0);
    ///     let taken = TcpListener::bind(listener.local_addr()?).await.unwrap_err();
    ///     assert_eq!(taken.kind(), std::io::ErrorKind::AddrInUse);
    ///     Ok::<_, std::io::Error>(())
    /// })
    /// .unwrap();
    /// ```
    #[doc(alias = "start_server", alias = "create_server", alias = "listen")]
    pub async fn bind(addr: impl ToSocketAddrs) -> io::Result<TcpListener> {
        addr::each_addr(addr::resolve(&addr).await?, Self::bind_one)
    }

    /// Wraps a listener made elsewhere (bound and listening), switching it
    /// to non-blocking mode and registering it with the runtime running on
    /// this thread.
    ///
    /// # Errors
    ///
    /// If the socket cannot be made non-blocking, or no ioloop runtime runs
    /// on this thread.
    pub fn from_std(listener: std::net::TcpListener) -> io::Result<TcpListener> {
        listener.set_nonblocking(true)?;
        Self::from_mio(mio::net::TcpListener::from_std(listener))
    }

    fn from_mio(listener: mio::net::TcpListener) -> io::Result<TcpListener> {
        Ok(TcpListener {
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
    /// address: the lesson's `conn, addr = sock.accept()`. The stream is
    /// registered with the runtime running this future.
    ///
    /// Connections that failed while queued (aborted, reset, refused by a
    /// firewall) are skipped, logged at debug level. When the process is out
    /// of file descriptors (`EMFILE`, `ENFILE`), buffers or memory, the
    /// connection stays queued and accepting pauses, with a warning, for
    /// 10 ms, doubling on each failure up to 1 s, instead of spinning on a
    /// listener that stays readable.
    ///
    /// # Errors
    ///
    /// Only errors that say the listener itself is unusable (or the runtime
    /// shut down); per-connection and resource errors are handled here.
    ///
    /// # Cancellation
    ///
    /// Cancel-safe: a connection is either returned or left in the queue.
    /// The back-off delay lives in the future, so a new call starts again
    /// from the shortest delay.
    ///
    /// # Examples
    ///
    /// ```
    /// use ioloop::net::{TcpListener, TcpStream};
    ///
    /// ioloop::block_on(async {
    ///     let listener = TcpListener::bind("127.0.0.1:0").await?;
    ///     let client = TcpStream::connect(listener.local_addr()?).await?;
    ///     let (_server, peer) = listener.accept().await?;
    ///     assert_eq!(peer, client.local_addr()?);
    ///     Ok::<_, std::io::Error>(())
    /// })
    /// .unwrap();
    /// ```
    pub async fn accept(&self) -> io::Result<(TcpStream, SocketAddr)> {
        let mut acceptor = Acceptor::new(self);
        poll_fn(|cx| acceptor.poll_accept(cx)).await
    }

    /// The connections this listener accepts, as a `futures_core::Stream`:
    /// see [`Incoming`].
    pub fn incoming(&self) -> Incoming<'_> {
        Incoming::new(self)
    }
}

impls::debug_and_fd!(TcpListener: local_addr);

/// The stream of connections a [`TcpListener`] accepts, from
/// [`TcpListener::incoming`]: see [`TcpListener::accept`] for the errors
/// it skips and backs off.
pub type Incoming<'a> = accept::Incoming<'a, TcpListener>;

impl Accept for TcpListener {
    type Io = mio::net::TcpListener;
    type Stream = TcpStream;
    type Addr = SocketAddr;

    fn io(&self) -> &Registration<Self::Io> {
        &self.io
    }

    fn accept_registered(io: &Self::Io) -> io::Result<(TcpStream, SocketAddr)> {
        let (stream, addr) = io.accept()?;
        Ok((TcpStream::from_mio(stream)?, addr))
    }
}

/// Helpers for [`TcpSocket`](super::TcpSocket).
impl TcpListener {
    /// Registers a socket already bound and listening (non-blocking).
    pub(crate) fn from_socket(socket: socket2::Socket) -> io::Result<TcpListener> {
        Self::from_mio(mio::net::TcpListener::from_std(socket.into()))
    }
}

/// Binding one address.
impl TcpListener {
    /// A listener on `addr`: `SO_REUSEADDR`, the backlog of 1024.
    fn bind_one(addr: SocketAddr) -> io::Result<TcpListener> {
        let socket = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
        socket.set_reuse_address(true)?;
        socket.set_nonblocking(true)?;
        socket.bind(&addr.into())?;
        socket.listen(BACKLOG)?;
        Self::from_socket(socket)
    }
}

/// Socket options, through `socket2::SockRef`.
impl TcpListener {
    options::sockopt! {
        /// Sets `IP_TTL`, how many routers IPv4 packets may cross, for the
        /// streams this listener accepts from now on (each inherits it).
        ///
        /// # Errors
        ///
        /// `InvalidInput` outside 1..=255 (checked here); else the OS's
        /// error.
        set_ttl(ttl: u32) => set_ttl_v4(options::ttl(ttl)?);
        ttl -> u32 => ttl_v4;
    }
}
