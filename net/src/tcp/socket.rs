//! [`TcpSocket`]: a TCP socket not yet listening or connected, for the
//! options that must be set before `bind`, `listen` or `connect`.

use std::io;
use std::net::SocketAddr;
use std::time::Duration;

use socket2::{Domain, Protocol, Socket, Type};

use super::listener::TcpListener;
use super::stream::TcpStream;

/// A TCP socket that is neither listening nor connected yet: the place for
/// the options that only count before [`bind`](Self::bind),
/// [`listen`](Self::listen) or [`connect`](Self::connect)
/// (`SO_REUSEADDR`, `SO_REUSEPORT`, buffer sizes, a chosen local address
/// for an outgoing connection, a listen backlog of your own).
///
/// [`TcpListener::bind`] and [`TcpStream::connect`] cover the usual case;
/// reach for `TcpSocket` when they do not. The socket is created
/// non-blocking and close-on-exec, and it is registered with the runtime
/// only once it becomes a listener or a stream, so a `TcpSocket` may be
/// made and configured outside a runtime.
///
/// Dropping it closes the socket.
///
/// # Examples
///
/// Two listeners sharing a port (`SO_REUSEPORT`: the kernel spreads new
/// connections between them), and a client connecting from a port of its
/// choosing:
///
/// ```
/// use ioloop::net::TcpSocket;
///
/// ioloop::block_on(async {
///     let first = TcpSocket::new_v4()?;
///     first.set_reuseport(true)?;
///     first.bind("127.0.0.1:0".parse().unwrap())?;
///     let addr = first.local_addr()?;
///     let first = first.listen(128)?;
///
///     let second = TcpSocket::new_v4()?;
///     second.set_reuseport(true)?;
///     second.bind(addr)?;
///     let _second = second.listen(128)?;
///
///     let client = TcpSocket::new_v4()?;
///     client.set_nodelay(true)?;
///     let stream = client.connect(addr).await?;
///     assert_eq!(stream.peer_addr()?, addr);
///     # drop(first);
///     Ok::<_, std::io::Error>(())
/// })
/// .unwrap();
/// ```
pub struct TcpSocket {
    inner: Socket,
}

impl TcpSocket {
    /// A new IPv4 TCP socket.
    ///
    /// # Errors
    ///
    /// The OS's error from `socket(2)` (`EMFILE` when out of file
    /// descriptors, ...).
    pub fn new_v4() -> io::Result<TcpSocket> {
        TcpSocket::new(Domain::IPV4)
    }

    /// A new IPv6 TCP socket.
    ///
    /// # Errors
    ///
    /// As [`new_v4`](Self::new_v4); `EAFNOSUPPORT` on a machine without
    /// IPv6.
    pub fn new_v6() -> io::Result<TcpSocket> {
        TcpSocket::new(Domain::IPV6)
    }

    fn new(domain: Domain) -> io::Result<TcpSocket> {
        // socket2 sets close-on-exec in `socket(2)` itself where the OS
        // takes the flag, so no concurrent `fork` + `exec` inherits it.
        let inner = Socket::new(domain, Type::STREAM, Some(Protocol::TCP))?;
        inner.set_nonblocking(true)?;
        Ok(TcpSocket { inner })
    }

    /// Sets `SO_REUSEADDR`: with `true`, `bind` succeeds on a port that
    /// connections of an earlier socket still hold in `TIME_WAIT` (a
    /// restarted server gets its port back at once).
    /// [`TcpListener::bind`] sets it; a new `TcpSocket` does not.
    ///
    /// # Errors
    ///
    /// The OS's error from `setsockopt(2)`.
    pub fn set_reuseaddr(&self, reuseaddr: bool) -> io::Result<()> {
        self.inner.set_reuse_address(reuseaddr)
    }

    /// Whether `SO_REUSEADDR` is set; see
    /// [`set_reuseaddr`](Self::set_reuseaddr).
    ///
    /// # Errors
    ///
    /// The OS's error from `getsockopt(2)`.
    pub fn reuseaddr(&self) -> io::Result<bool> {
        self.inner.reuse_address()
    }

    /// Sets `SO_REUSEPORT`: with `true` on every one of them, several
    /// sockets may bind the same address and port. For listeners, Linux
    /// then spreads incoming connections between them (one listener per
    /// loop thread, say).
    ///
    /// Unix systems other than Solaris and illumos.
    ///
    /// # Errors
    ///
    /// The OS's error from `setsockopt(2)`.
    #[cfg(all(unix, not(any(target_os = "solaris", target_os = "illumos"))))]
    pub fn set_reuseport(&self, reuseport: bool) -> io::Result<()> {
        self.inner.set_reuse_port(reuseport)
    }

    /// Whether `SO_REUSEPORT` is set; see
    /// [`set_reuseport`](Self::set_reuseport).
    ///
    /// # Errors
    ///
    /// The OS's error from `getsockopt(2)`.
    #[cfg(all(unix, not(any(target_os = "solaris", target_os = "illumos"))))]
    pub fn reuseport(&self) -> io::Result<bool> {
        self.inner.reuse_port()
    }

    /// Sets `SO_SNDBUF`, the size of the kernel's send buffer. Linux doubles
    /// the value (the other half is its bookkeeping) and clamps it to
    /// `net.core.wmem_max`, so [`send_buffer_size`](Self::send_buffer_size)
    /// rarely returns what was set.
    ///
    /// # Errors
    ///
    /// The OS's error from `setsockopt(2)`.
    pub fn set_send_buffer_size(&self, size: u32) -> io::Result<()> {
        self.inner.set_send_buffer_size(size as usize)
    }

    /// The size of the kernel's send buffer (`SO_SNDBUF`).
    ///
    /// # Errors
    ///
    /// The OS's error from `getsockopt(2)`.
    pub fn send_buffer_size(&self) -> io::Result<u32> {
        self.inner.send_buffer_size().map(saturate)
    }

    /// Sets `SO_RCVBUF`, the size of the kernel's receive buffer (the most
    /// the peer may send ahead of reads). As with
    /// [`set_send_buffer_size`](Self::set_send_buffer_size), Linux doubles
    /// the value and clamps it, here to `net.core.rmem_max`. Set it before
    /// `listen` or `connect`: it decides the window scale the handshake
    /// announces.
    ///
    /// # Errors
    ///
    /// The OS's error from `setsockopt(2)`.
    pub fn set_recv_buffer_size(&self, size: u32) -> io::Result<()> {
        self.inner.set_recv_buffer_size(size as usize)
    }

    /// The size of the kernel's receive buffer (`SO_RCVBUF`).
    ///
    /// # Errors
    ///
    /// The OS's error from `getsockopt(2)`.
    pub fn recv_buffer_size(&self) -> io::Result<u32> {
        self.inner.recv_buffer_size().map(saturate)
    }

    /// Sets `SO_LINGER`. `None` (the default): closing returns at once and
    /// the kernel sends what is left in the background. `Some(d)`: on a
    /// blocking socket, closing waits up to `d` for that. `Some(ZERO)`:
    /// closing drops unsent data and resets the connection (the peer reads
    /// `ConnectionReset`), and leaves no `TIME_WAIT` behind.
    ///
    /// The socket is non-blocking, so a non-zero linger never makes a close
    /// wait here; only the zero case changes what closing does.
    ///
    /// The OS counts whole seconds in a C `int`: a fraction of a second is
    /// rounded up (only `ZERO` is an abortive close), and a duration past
    /// `i32::MAX` seconds is taken as that.
    ///
    /// # Errors
    ///
    /// The OS's error from `setsockopt(2)`.
    pub fn set_linger(&self, linger: Option<Duration>) -> io::Result<()> {
        self.inner.set_linger(crate::options::linger(linger))
    }

    /// `SO_LINGER`; see [`set_linger`](Self::set_linger).
    ///
    /// # Errors
    ///
    /// The OS's error from `getsockopt(2)`.
    pub fn linger(&self) -> io::Result<Option<Duration>> {
        self.inner.linger()
    }

    /// Sets `TCP_NODELAY` on the stream this socket will become; see
    /// [`TcpStream::set_nodelay`].
    ///
    /// # Errors
    ///
    /// The OS's error from `setsockopt(2)`.
    pub fn set_nodelay(&self, nodelay: bool) -> io::Result<()> {
        self.inner.set_tcp_nodelay(nodelay)
    }

    /// Whether `TCP_NODELAY` is set.
    ///
    /// # Errors
    ///
    /// The OS's error from `getsockopt(2)`.
    pub fn nodelay(&self) -> io::Result<bool> {
        self.inner.tcp_nodelay()
    }

    /// Binds the socket to `addr`: for a listener, the address it listens
    /// on; for a client, the local address it connects from. Port 0 picks
    /// a free port (see [`local_addr`](Self::local_addr)).
    ///
    /// Takes a [`SocketAddr`], not a host name: resolve one with
    /// [`lookup_host`](crate::lookup_host) first.
    ///
    /// # Errors
    ///
    /// The OS's error from `bind(2)`: `AddrInUse` (a port taken without
    /// `SO_REUSEPORT` on both sides), `AddrNotAvailable` (an address of no
    /// interface here), `InvalidInput` (an address of the other family).
    pub fn bind(&self, addr: SocketAddr) -> io::Result<()> {
        self.inner.bind(&addr.into())
    }

    /// The address this socket is bound to.
    ///
    /// # Errors
    ///
    /// The OS's error from `getsockname(2)`.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.inner.local_addr()?.as_socket().ok_or_else(|| {
            io::Error::new(io::ErrorKind::InvalidData, "the socket has no IP address")
        })
    }

    /// Listens for connections, with a queue of at most `backlog`
    /// connections the handshake has completed and no `accept` has taken
    /// yet (the kernel caps it at `net.core.somaxconn`);
    /// [`TcpListener::bind`] uses 1024. Binds to a free port of the
    /// wildcard address first if the socket is not bound.
    ///
    /// # Errors
    ///
    /// The OS's error from `listen(2)`; an error if no ioloop runtime runs
    /// on this thread.
    pub fn listen(self, backlog: u32) -> io::Result<TcpListener> {
        self.inner
            .listen(i32::try_from(backlog).unwrap_or(i32::MAX))?;
        TcpListener::from_socket(self.inner)
    }

    /// Connects to `addr`, with the options set on this socket (and from
    /// the address it was bound to, if it was). As
    /// [`TcpStream::connect`], without the host names: one address, one
    /// attempt.
    ///
    /// # Errors
    ///
    /// The connect error (`ConnectionRefused`, `TimedOut`, ...); an error if
    /// no ioloop runtime runs on this thread.
    ///
    /// # Cancellation
    ///
    /// Dropping the future closes the half-open socket.
    pub async fn connect(self, addr: SocketAddr) -> io::Result<TcpStream> {
        match self.inner.connect(&addr.into()) {
            Ok(()) => {}
            #[cfg(unix)]
            Err(err) if err.raw_os_error() == Some(libc::EINPROGRESS) => {}
            Err(err) => return Err(err),
        }
        let stream = mio::net::TcpStream::from_std(self.inner.into());
        TcpStream::connected(stream).await
    }

    /// Turns a `std::net::TcpStream` that is neither connected nor
    /// listening (made with socket2, say, for an option this type lacks)
    /// into a `TcpSocket`, switching it to non-blocking mode.
    ///
    /// # Errors
    ///
    /// If the socket cannot be made non-blocking.
    pub fn from_std_stream(stream: std::net::TcpStream) -> io::Result<TcpSocket> {
        stream.set_nonblocking(true)?;
        Ok(TcpSocket {
            inner: Socket::from(stream),
        })
    }
}

/// A buffer size from `getsockopt` as the `u32` the setters take.
fn saturate(size: usize) -> u32 {
    u32::try_from(size).unwrap_or(u32::MAX)
}

crate::impls::debug_and_fd!(@debug TcpSocket: local_addr);

#[cfg(unix)]
impl std::os::fd::AsFd for TcpSocket {
    fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        self.inner.as_fd()
    }
}

#[cfg(unix)]
impl std::os::fd::AsRawFd for TcpSocket {
    fn as_raw_fd(&self) -> std::os::fd::RawFd {
        self.inner.as_raw_fd()
    }
}
