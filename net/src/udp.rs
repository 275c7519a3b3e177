//! UDP: `UdpSocket`, the cookbook's time and echo servers' socket.
//!
//! UDP is message-oriented: each send is one datagram, each receive takes
//! one whole datagram. A receive buffer shorter than the datagram gets its
//! first bytes and the rest is discarded by the kernel: the buffer size is
//! the caller's choice of the largest message it accepts (65,507 bytes
//! holds any UDP datagram over IPv4).

use std::fmt;
use std::io;
use std::net::SocketAddr;

use ioloop_runtime::io::Registration;

use crate::ToSocketAddr;

mod datagrams;

/// A UDP socket registered with the reactor.
///
/// Unconnected, it sends to and receives from anyone
/// ([`send_to`](Self::send_to), [`recv_from`](Self::recv_from));
/// [`connect`](Self::connect)ed, it talks to one peer
/// ([`send`](Self::send), [`recv`](Self::recv)) and drops datagrams from
/// others. Each method is the one pattern: try the syscall; on
/// `WouldBlock` clear readiness and wait; retry.
///
/// The reactor keeps one waiting task per direction: one task receiving
/// and one sending at a time. If two tasks sharing the socket (through an
/// `Arc`) wait in the same direction at once, the earlier is displaced and
/// never woken by the socket (a warning is logged). Receive from one task
/// and hand the datagrams on; a send waits only when the send buffer is
/// full, so light senders may share, and a heavy one should own the socket.
///
/// # Examples
///
/// ```
/// use ioloop::net::UdpSocket;
///
/// ioloop::block_on(async {
///     let server = UdpSocket::bind("127.0.0.1:0").await?;
///     let client = UdpSocket::bind("127.0.0.1:0").await?;
///     client.send_to(b"what time is it?", server.local_addr()?).await?;
///     let mut buf = [0; 64];
///     let (n, from) = server.recv_from(&mut buf).await?;
///     assert_eq!((&buf[..n], from), (&b"what time is it?"[..], client.local_addr()?));
///     Ok::<_, std::io::Error>(())
/// })
/// .unwrap();
/// ```
#[doc(alias = "create_datagram_endpoint", alias = "DatagramTransport")]
pub struct UdpSocket {
    io: Registration<mio::net::UdpSocket>,
}

impl UdpSocket {
    /// Binds a UDP socket to `addr`; port 0 picks a free port. `async` to
    /// match the rest of the API; binding never waits.
    ///
    /// # Errors
    ///
    /// `InvalidInput` if `addr` is not a literal `ip:port`; the OS's error
    /// (`AddrInUse`, ...); an error if no ioloop runtime runs on this thread.
    ///
    /// # Examples
    ///
    /// ```
    /// ioloop::block_on(async {
    ///     let socket = ioloop::net::UdpSocket::bind("127.0.0.1:0").await?;
    ///     assert_ne!(socket.local_addr()?.port(), 0);
    ///     Ok::<_, std::io::Error>(())
    /// })
    /// .unwrap();
    /// ```
    pub async fn bind(addr: impl ToSocketAddr) -> io::Result<UdpSocket> {
        let socket = mio::net::UdpSocket::bind(addr.to_socket_addr()?)?;
        Ok(UdpSocket {
            io: Registration::new(socket)?,
        })
    }

    /// Wraps a socket made elsewhere, switching it to non-blocking mode and
    /// registering it with the runtime running on this thread.
    ///
    /// # Errors
    ///
    /// If the socket cannot be made non-blocking, or no runtime runs here.
    ///
    /// # Examples
    ///
    /// ```
    /// ioloop::block_on(async {
    ///     let std_socket = std::net::UdpSocket::bind("127.0.0.1:0")?;
    ///     let addr = std_socket.local_addr()?;
    ///     let socket = ioloop::net::UdpSocket::from_std(std_socket)?;
    ///     assert_eq!(socket.local_addr()?, addr);
    ///     Ok::<_, std::io::Error>(())
    /// })
    /// .unwrap();
    /// ```
    pub fn from_std(socket: std::net::UdpSocket) -> io::Result<UdpSocket> {
        socket.set_nonblocking(true)?;
        Ok(UdpSocket {
            io: Registration::new(mio::net::UdpSocket::from_std(socket))?,
        })
    }

    /// The address this socket is bound to.
    ///
    /// # Errors
    ///
    /// The OS's error from `getsockname(2)` (rare).
    ///
    /// # Examples
    ///
    /// ```
    /// ioloop::block_on(async {
    ///     let socket = ioloop::net::UdpSocket::bind("127.0.0.1:0").await?;
    ///     assert!(socket.local_addr()?.ip().is_loopback());
    ///     Ok::<_, std::io::Error>(())
    /// })
    /// .unwrap();
    /// ```
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.io.get_ref().local_addr()
    }

    /// The peer this socket is connected to.
    ///
    /// # Errors
    ///
    /// `NotConnected` before [`connect`](Self::connect).
    ///
    /// # Examples
    ///
    /// ```
    /// ioloop::block_on(async {
    ///     let socket = ioloop::net::UdpSocket::bind("127.0.0.1:0").await?;
    ///     let err = socket.peer_addr().unwrap_err();
    ///     assert_eq!(err.kind(), std::io::ErrorKind::NotConnected);
    ///     socket.connect("127.0.0.1:9").await?;
    ///     assert_eq!(socket.peer_addr()?, "127.0.0.1:9".parse().unwrap());
    ///     Ok::<_, std::io::Error>(())
    /// })
    /// .unwrap();
    /// ```
    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        self.io.get_ref().peer_addr()
    }

    /// Sets the socket's default peer: [`send`](Self::send) goes there,
    /// and [`recv`](Self::recv) takes datagrams from there only. Sends no
    /// packet; `async` to match the rest of the API.
    ///
    /// # Errors
    ///
    /// `InvalidInput` if `addr` is not a literal `ip:port`; the OS's error.
    ///
    /// # Examples
    ///
    /// ```
    /// use ioloop::net::UdpSocket;
    ///
    /// ioloop::block_on(async {
    ///     let server = UdpSocket::bind("127.0.0.1:0").await?;
    ///     let client = UdpSocket::bind("127.0.0.1:0").await?;
    ///     client.connect(server.local_addr()?).await?;
    ///     assert_eq!(client.peer_addr()?, server.local_addr()?);
    ///     client.send(b"hi").await?;
    ///     let mut buf = [0; 8];
    ///     let (n, from) = server.recv_from(&mut buf).await?;
    ///     assert_eq!((&buf[..n], from), (&b"hi"[..], client.local_addr()?));
    ///     Ok::<_, std::io::Error>(())
    /// })
    /// .unwrap();
    /// ```
    pub async fn connect(&self, addr: impl ToSocketAddr) -> io::Result<()> {
        self.io.get_ref().connect(addr.to_socket_addr()?)
    }
}

impl fmt::Debug for UdpSocket {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UdpSocket")
            .field("local_addr", &self.local_addr().ok())
            .finish()
    }
}

#[cfg(unix)]
impl std::os::fd::AsFd for UdpSocket {
    fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        self.io.get_ref().as_fd()
    }
}
