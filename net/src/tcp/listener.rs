//! [`TcpListener`]: binding and options (accepting is `accept.rs`'s,
//! shared with `UnixListener`).

use std::future::ready;
use std::io;
use std::net::SocketAddr;

use ioloop_runtime::io::Registration;
use socket2::{Domain, Protocol, Socket, Type};

use super::accept;
use super::stream::TcpStream;
use crate::addr::{self, ToSocketAddrs};
use crate::{options, sys};

/// The listen backlog: std's and mio's 128 drops connections in a burst
/// (the kernel caps it at `net.core.somaxconn`, 4096 on Linux since 5.4).
const BACKLOG: i32 = 1024;

/// A TCP socket listening for connections, registered with the reactor.
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
pub struct TcpListener {
    io: Registration<sys::TcpListener>,
}

accept::listener!(TcpListener {
    io: sys::TcpListener,
    std: std::net::TcpListener,
    stream: TcpStream,
    addr: SocketAddr
});

impl TcpListener {
    /// Binds a listener to the first address of `addr` that binds (a host
    /// name is resolved on the blocking pool), with `SO_REUSEADDR` and a
    /// backlog of 1024 (see [`TcpSocket`](crate::TcpSocket) for others);
    /// port 0 picks a free port.
    ///
    /// # Errors
    ///
    /// The last address's error (`AddrInUse`, `PermissionDenied`, ...); the
    /// lookup's; `InvalidInput` for a malformed address or an empty slice;
    /// an error if no ioloop runtime runs on this thread.
    #[doc(alias = "start_server", alias = "create_server", alias = "listen")]
    pub async fn bind(addr: impl ToSocketAddrs) -> io::Result<TcpListener> {
        addr::each_addr(&addr, |addr| ready(Self::bind_one(addr))).await
    }

    /// A listener on `addr`: `SO_REUSEADDR`, the backlog of 1024.
    fn bind_one(addr: SocketAddr) -> io::Result<TcpListener> {
        if let Some(simulated) = sys::TcpListener::simulated(addr) {
            return Self::from_mio(simulated?);
        }
        let socket = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
        socket.set_reuse_address(true)?;
        socket.set_nonblocking(true)?;
        socket.bind(&addr.into())?;
        socket.listen(BACKLOG)?;
        Self::from_mio(sys::TcpListener::from_std(socket.into()))
    }

    options::sockopt! {
        /// Sets `IP_TTL`, how many routers IPv4 packets may cross, for the
        /// streams this listener accepts from now on (each inherits it).
        set_ttl(ttl: u32) => set_ttl_v4(options::in_range(ttl, 1, "IP_TTL")?), checks "1..=255";
        ttl -> u32 => ttl_v4;
    }
}
