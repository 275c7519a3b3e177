//! [`TcpListener`]: binding and options (accepting is `accept.rs`'s,
//! shared with `UnixListener`).

use std::io;
use std::net::SocketAddr;

use ioloop_runtime::io::Registration;
use socket2::{Domain, Protocol, Socket, Type};

use super::accept;
use super::stream::TcpStream;
use crate::addr::{self, ToSocketAddrs};
use crate::options;

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

accept::listener!(TcpListener {
    io: mio::net::TcpListener,
    std: std::net::TcpListener,
    stream: TcpStream,
    addr: SocketAddr
});

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
        set_ttl(ttl: u32) => set_ttl_v4(options::ttl(ttl)?), checks "1..=255";
        ttl -> u32 => ttl_v4;
    }
}
