//! [`TcpSocket`], for the options set before `bind` or `connect`.

use std::io;
use std::net::SocketAddr;

use socket2::{Domain, Protocol, Socket, Type};

use super::listener::TcpListener;
use super::stream::TcpStream;
use crate::options;

/// A TCP socket not yet listening or connected, for what counts only
/// before (`SO_REUSEPORT`; a receive buffer, which sets the window scale
/// the handshake announces; a local address; a backlog). Registered only
/// once it listens or connects, it may be made outside a runtime.
///
/// # Examples
///
/// ```
/// use ioloop::net::TcpSocket;
///
/// ioloop::block_on(async {
///     let socket = TcpSocket::new_v4()?;
///     socket.set_reuseport(true)?;
///     socket.bind("127.0.0.1:0".parse().unwrap())?;
///     let addr = socket.local_addr()?;
///     let _listener = socket.listen(128)?;
///     let stream = TcpSocket::new_v4()?.connect(addr).await?;
///     assert_eq!(stream.peer_addr()?, addr);
///     Ok::<_, std::io::Error>(())
/// })
/// .unwrap();
/// ```
pub struct TcpSocket {
    io: Socket,
}

impl TcpSocket {
    /// A new IPv4 TCP socket; fails with the OS's error from `socket(2)`
    /// (`EMFILE`, ...), and with `Unsupported` inside a simulation, which
    /// has no OS sockets (use `TcpListener::bind` and
    /// `TcpStream::connect` there).
    pub fn new_v4() -> io::Result<TcpSocket> {
        TcpSocket::new(Domain::IPV4)
    }

    /// A new IPv6 TCP socket; fails as [`new_v4`](Self::new_v4), and with
    /// `EAFNOSUPPORT` without IPv6.
    pub fn new_v6() -> io::Result<TcpSocket> {
        TcpSocket::new(Domain::IPV6)
    }

    fn new(domain: Domain) -> io::Result<TcpSocket> {
        if crate::seam::running() {
            return Err(crate::seam::not_simulated("TcpSocket"));
        }
        // socket2 sets close-on-exec in `socket(2)` itself where the OS
        // takes the flag, so no concurrent `fork` + `exec` inherits it.
        let io = Socket::new(domain, Type::STREAM, Some(Protocol::TCP))?;
        io.set_nonblocking(true)?;
        Ok(TcpSocket { io })
    }

    options::sockopt! {
        /// Sets `SO_REUSEADDR`: `bind` then succeeds on a port connections
        /// of an earlier socket hold in `TIME_WAIT`. [`TcpListener::bind`]
        /// sets it; a new `TcpSocket` does not.
        set_reuseaddr(on: bool) => set_reuse_address(on);
        reuseaddr -> bool => reuse_address;

        #[cfg(all(unix, not(any(target_os = "solaris", target_os = "illumos"))))]
        /// Sets `SO_REUSEPORT`: several sockets, each with it, may bind one
        /// address and port (Linux spreads a shared listening port's
        /// connections between them). Not on Solaris or illumos.
        set_reuseport(on: bool) => set_reuse_port(on);
        reuseport -> bool => reuse_port;
    }

    options::sockopt!(@ip);
    options::sockopt!(@tcp);

    /// Binds the socket to `addr` (a listener's, or the local address a
    /// client connects from); port 0 picks a free port. Fails with the
    /// OS's error from `bind(2)`: `AddrInUse`, `AddrNotAvailable` (no
    /// interface has it), `InvalidInput` (the other family).
    pub fn bind(&self, addr: SocketAddr) -> io::Result<()> {
        self.io.bind(&addr.into())
    }

    /// The address this socket is bound to; fails with the OS's error from
    /// `getsockname(2)`.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.io.local_addr()?.as_socket().ok_or_else(|| {
            io::Error::new(io::ErrorKind::InvalidData, "the socket has no IP address")
        })
    }

    /// Listens, queueing at most `backlog` connections not yet accepted
    /// (capped at `net.core.somaxconn`; [`TcpListener::bind`] uses 1024).
    /// An unbound socket gets a free port of the wildcard address.
    ///
    /// # Errors
    ///
    /// The OS's error from `listen(2)`; an error if no ioloop runtime runs
    /// on this thread.
    pub fn listen(self, backlog: u32) -> io::Result<TcpListener> {
        self.io.listen(i32::try_from(backlog).unwrap_or(i32::MAX))?;
        TcpListener::from_mio(crate::sys::TcpListener::from_std(self.io.into()))
    }

    /// Connects to `addr`, as [`TcpStream::connect`] for one address;
    /// fails with the connect error (`ConnectionRefused`, ...), or with no
    /// runtime here.
    ///
    /// # Cancellation
    ///
    /// Dropping the future closes the half-open socket.
    pub async fn connect(self, addr: SocketAddr) -> io::Result<TcpStream> {
        match self.io.connect(&addr.into()) {
            Ok(()) => {}
            #[cfg(unix)]
            Err(err) if err.raw_os_error() == Some(libc::EINPROGRESS) => {}
            Err(err) => return Err(err),
        }
        let stream = crate::sys::TcpStream::from_std(self.io.into());
        TcpStream::connected(stream).await
    }

    /// A non-blocking `TcpSocket` of a std stream neither connected nor
    /// listening (made with socket2, say, for an option missing here);
    /// fails if it cannot be made non-blocking.
    pub fn from_std_stream(stream: std::net::TcpStream) -> io::Result<TcpSocket> {
        stream.set_nonblocking(true)?;
        Ok(TcpSocket { io: stream.into() })
    }
}

crate::impls::debug_and_fd!(TcpSocket: local_addr; |socket| &socket.io);
