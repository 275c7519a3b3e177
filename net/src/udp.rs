//! UDP: [`UdpSocket`], whole: binding, addresses, and sending and receiving
//! datagrams.

use std::io;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};
use std::task::{Context, Poll};

use ioloop_runtime::io::Registration;
use socket2::SockRef;

use crate::addr::{self, ToSocketAddrs};
use crate::{impls, options, syscall};

/// A UDP socket registered with the reactor.
///
/// Unconnected, it sends to and receives from anyone
/// ([`send_to`](Self::send_to), [`recv_from`](Self::recv_from));
/// [`connect`](Self::connect)ed, it talks to one peer
/// ([`send`](Self::send), [`recv`](Self::recv)) and drops datagrams from
/// others. Each send is one datagram, each receive takes one whole
/// datagram: a receive buffer shorter than the datagram gets its first
/// bytes and the rest is discarded (65,507 bytes holds any UDP datagram
/// over IPv4).
///
/// Shared through an `Arc`, several tasks may receive (or send) at once:
/// each datagram goes to one of them, and none waits forever.
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
///
///     client.connect(server.local_addr()?).await?;
///     client.send(b"hi").await?;
///     let mut small = [0; 1];
///     let (n, _) = server.recv_from(&mut small).await?;
///     assert_eq!(&small[..n], b"h", "the rest of the datagram is discarded");
///     Ok::<_, std::io::Error>(())
/// })
/// .unwrap();
/// ```
#[doc(alias = "create_datagram_endpoint", alias = "DatagramTransport")]
pub struct UdpSocket {
    io: Registration<mio::net::UdpSocket>,
}

impls::addresses!(UdpSocket: SocketAddr, peer_addr);

impls::readiness!(UdpSocket);

impl UdpSocket {
    /// Binds a UDP socket to `addr`; port 0 picks a free port.
    ///
    /// `addr` is any [`ToSocketAddrs`]: a host name is resolved on the
    /// blocking pool (the only time this waits), and the first address that
    /// binds is used.
    ///
    /// # Errors
    ///
    /// The OS's error (`AddrInUse`, ...), the last address's if none binds;
    /// the lookup's error for a name that does not resolve; `InvalidInput`
    /// for a malformed address string or an empty slice; an error if no
    /// ioloop runtime runs on this thread.
    pub async fn bind(addr: impl ToSocketAddrs) -> io::Result<UdpSocket> {
        let socket = addr::each_addr(addr::resolve(&addr).await?, mio::net::UdpSocket::bind)?;
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
    pub fn from_std(socket: std::net::UdpSocket) -> io::Result<UdpSocket> {
        socket.set_nonblocking(true)?;
        Ok(UdpSocket {
            io: Registration::new(mio::net::UdpSocket::from_std(socket))?,
        })
    }

    /// Sets the socket's default peer: [`send`](Self::send) goes there,
    /// and [`recv`](Self::recv) takes datagrams from there only. Sends no
    /// packet. A host name is resolved on the blocking pool first; of
    /// several addresses, the first the socket can connect to is used (one
    /// of the other family cannot be).
    ///
    /// # Errors
    ///
    /// The OS's error, the last address's if none will do; the lookup's
    /// error for a name that does not resolve; `InvalidInput` for a
    /// malformed address string or an empty slice.
    pub async fn connect(&self, addr: impl ToSocketAddrs) -> io::Result<()> {
        let socket = self.io.get_ref();
        addr::each_addr(addr::resolve(&addr).await?, |addr| socket.connect(addr))
    }

    /// Sends one datagram to `target`, waiting for room in the send buffer;
    /// returns the number of bytes sent (all of `buf`).
    ///
    /// A literal `target` (a [`SocketAddr`], say, as a server replying to
    /// [`recv_from`](Self::recv_from)'s sender passes) costs no lookup and
    /// no allocation. A host name is resolved on the blocking pool for each
    /// call, and the datagram goes to its first address: to send many, look
    /// the name up once with [`lookup_host`](crate::lookup_host) or
    /// [`connect`](Self::connect).
    ///
    /// # Errors
    ///
    /// The OS's error (a datagram too large for UDP is `EMSGSIZE`); the
    /// lookup's error for a name that does not resolve; `InvalidInput` for a
    /// malformed address string or an empty slice.
    ///
    /// # Cancellation
    ///
    /// Cancel-safe: the datagram is sent whole or not at all.
    #[doc(alias = "sendto")]
    pub async fn send_to(&self, buf: &[u8], target: impl ToSocketAddrs) -> io::Result<usize> {
        let target = addr::resolve(&target)
            .await?
            .next()
            .ok_or_else(addr::no_addresses)?;
        self.io
            .write_io(|socket| syscall::send_to(socket, buf, target))
            .await
    }

    /// [`send_to`](Self::send_to) as a poll function; a poll function
    /// keeps its waker as [`poll_read_ready`](Self::poll_read_ready) does.
    ///
    /// # Errors
    ///
    /// As [`send_to`](Self::send_to).
    pub fn poll_send_to(
        &self,
        cx: &mut Context<'_>,
        buf: &[u8],
        target: SocketAddr,
    ) -> Poll<io::Result<usize>> {
        self.io
            .poll_write_io(cx, |socket| syscall::send_to(socket, buf, target))
    }

    /// Receives one datagram into `buf`, waiting for one to arrive; returns
    /// its length (at most `buf.len()`: the rest of a longer datagram is
    /// discarded) and its sender.
    ///
    /// # Errors
    ///
    /// The OS's error; on a connected socket, `ConnectionRefused` after an
    /// earlier datagram found no one listening at the peer.
    ///
    /// # Cancellation
    ///
    /// Cancel-safe: a datagram is either returned or left queued.
    #[doc(alias = "recvfrom")]
    pub async fn recv_from(&self, buf: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        self.io
            .read_io(|socket| syscall::recv_from(socket, buf))
            .await
    }

    /// [`recv_from`](Self::recv_from) as a poll function; a poll function
    /// keeps its waker as [`poll_read_ready`](Self::poll_read_ready) does.
    ///
    /// # Errors
    ///
    /// As [`recv_from`](Self::recv_from).
    pub fn poll_recv_from(
        &self,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<(usize, SocketAddr)>> {
        self.io
            .poll_read_io(cx, |socket| syscall::recv_from(socket, buf))
    }

    /// Sends one datagram to the connected peer.
    ///
    /// # Errors
    ///
    /// `NotConnected` before [`connect`](Self::connect); `ConnectionRefused`
    /// after an earlier datagram found no one listening at the peer; the
    /// OS's error.
    ///
    /// # Cancellation
    ///
    /// Cancel-safe: the datagram is sent whole or not at all.
    pub async fn send(&self, buf: &[u8]) -> io::Result<usize> {
        self.io
            .write_io(|socket| syscall::send_datagram(socket, buf))
            .await
    }

    /// Receives one datagram from the connected peer into `buf`; as
    /// [`recv_from`](Self::recv_from), a longer datagram is truncated.
    ///
    /// # Errors
    ///
    /// As [`send`](Self::send).
    ///
    /// # Cancellation
    ///
    /// Cancel-safe: a datagram is either returned or left queued.
    pub async fn recv(&self, buf: &mut [u8]) -> io::Result<usize> {
        self.io
            .read_io(|socket| syscall::recv_datagram(socket, buf))
            .await
    }

    /// Receives a datagram if one is queued, without waiting.
    ///
    /// # Errors
    ///
    /// `WouldBlock` if none is; as [`recv_from`](Self::recv_from).
    pub fn try_recv_from(&self, buf: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        self.io
            .try_read_io(|socket| syscall::recv_from(socket, buf))
    }

    /// Sends a datagram to `target` if there is room now, without waiting.
    ///
    /// # Errors
    ///
    /// `WouldBlock` if the send buffer is full; the OS's error.
    pub fn try_send_to(&self, buf: &[u8], target: SocketAddr) -> io::Result<usize> {
        self.io
            .try_write_io(|socket| syscall::send_to(socket, buf, target))
    }

    /// Receives a datagram from the connected peer if one is queued.
    ///
    /// # Errors
    ///
    /// `WouldBlock` if none is; as [`recv`](Self::recv).
    pub fn try_recv(&self, buf: &mut [u8]) -> io::Result<usize> {
        self.io
            .try_read_io(|socket| syscall::recv_datagram(socket, buf))
    }

    /// Sends a datagram to the connected peer if there is room now.
    ///
    /// # Errors
    ///
    /// `WouldBlock` if the send buffer is full; as [`send`](Self::send).
    pub fn try_send(&self, buf: &[u8]) -> io::Result<usize> {
        self.io
            .try_write_io(|socket| syscall::send_datagram(socket, buf))
    }

    /// Waits for a datagram and copies it into `buf` without taking it off
    /// the queue: the next receive returns it again.
    ///
    /// # Errors
    ///
    /// As [`recv_from`](Self::recv_from).
    ///
    /// # Cancellation
    ///
    /// Cancel-safe: nothing is consumed.
    pub async fn peek_from(&self, buf: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        self.io.read_io(|socket| socket.peek_from(buf)).await
    }
}

impls::debug_and_fd!(@debug UdpSocket: local_addr);

#[cfg(unix)]
impl std::os::fd::AsFd for UdpSocket {
    fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        self.io.get_ref().as_fd()
    }
}

/// Socket options, through `socket2::SockRef`.
impl UdpSocket {
    options::ip_options!();

    options::sockopt! {
        /// Sets `SO_BROADCAST`: with `true`, the socket may send to a
        /// broadcast address (`255.255.255.255`, a subnet's); without it
        /// such a send fails with `PermissionDenied`.
        ///
        /// # Errors
        ///
        /// The OS's error from `setsockopt(2)`.
        set_broadcast(on: bool) => set_broadcast(on);
        broadcast -> bool => broadcast;
    }

    options::sockopt! {
        /// Sets `IP_MULTICAST_TTL`, the time-to-live of the IPv4 multicast
        /// datagrams this socket sends (default 1: the local network).
        ///
        /// # Errors
        ///
        /// `InvalidInput` above 255 (checked here); else the OS's error.
        set_multicast_ttl_v4(ttl: u32) =>
            set_multicast_ttl_v4(options::byte(ttl, "IP_MULTICAST_TTL")?);
        multicast_ttl_v4 -> u32 => multicast_ttl_v4;
    }

    options::sockopt! {
        /// Sets `IP_MULTICAST_LOOP`: with `true` (the default), the IPv4
        /// multicast datagrams this socket sends also reach this host's
        /// members of the group, this socket included.
        ///
        /// # Errors
        ///
        /// The OS's error from `setsockopt(2)`.
        set_multicast_loop_v4(on: bool) => set_multicast_loop_v4(on);
        multicast_loop_v4 -> bool => multicast_loop_v4;
    }

    options::sockopt! {
        /// Sets `IPV6_MULTICAST_LOOP`, `IP_MULTICAST_LOOP` for an IPv6
        /// socket.
        ///
        /// # Errors
        ///
        /// The OS's error from `setsockopt(2)` (on an IPv4 socket, say).
        set_multicast_loop_v6(on: bool) => set_multicast_loop_v6(on);
        multicast_loop_v6 -> bool => multicast_loop_v6;
    }

    options::sockopt! {
        /// Sets `IP_MULTICAST_IF`, the interface (named by one of its IPv4
        /// addresses) IPv4 multicast datagrams leave by; `UNSPECIFIED`, the
        /// default, lets the routing table choose.
        ///
        /// # Errors
        ///
        /// The OS's error (`AddrNotAvailable` for an address no interface
        /// has).
        set_multicast_if_v4(interface: Ipv4Addr) => set_multicast_if_v4(&interface);
        multicast_if_v4 -> Ipv4Addr => multicast_if_v4;
    }

    /// Joins the IPv4 multicast group `multiaddr` on the interface whose
    /// address is `interface` (`UNSPECIFIED`: the routing table's pick).
    ///
    /// # Errors
    ///
    /// The OS's error (`InvalidInput` for an address that is not
    /// multicast, `AddrInUse` for a group already joined, `ENODEV` for an
    /// interface without a route to it).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::net::Ipv4Addr;
    /// use ioloop::net::UdpSocket;
    ///
    /// ioloop::block_on(async {
    ///     let socket = UdpSocket::bind("0.0.0.0:0").await?;
    ///     let group = Ipv4Addr::new(239, 255, 0, 1);
    ///     socket.join_multicast_v4(group, Ipv4Addr::LOCALHOST)?;
    ///     socket.leave_multicast_v4(group, Ipv4Addr::LOCALHOST)?;
    ///     Ok::<_, std::io::Error>(())
    /// })
    /// .unwrap();
    /// ```
    pub fn join_multicast_v4(&self, multiaddr: Ipv4Addr, interface: Ipv4Addr) -> io::Result<()> {
        SockRef::from(self.io.get_ref()).join_multicast_v4(&multiaddr, &interface)
    }

    /// Leaves a group joined with
    /// [`join_multicast_v4`](Self::join_multicast_v4).
    ///
    /// # Errors
    ///
    /// The OS's error (`AddrNotAvailable` for a group not joined).
    pub fn leave_multicast_v4(&self, multiaddr: Ipv4Addr, interface: Ipv4Addr) -> io::Result<()> {
        SockRef::from(self.io.get_ref()).leave_multicast_v4(&multiaddr, &interface)
    }

    /// Joins the IPv6 multicast group `multiaddr` on the interface with
    /// index `interface` (0: the routing table's pick).
    ///
    /// # Errors
    ///
    /// The OS's error from `setsockopt(2)`.
    pub fn join_multicast_v6(&self, multiaddr: &Ipv6Addr, interface: u32) -> io::Result<()> {
        SockRef::from(self.io.get_ref()).join_multicast_v6(multiaddr, interface)
    }

    /// Leaves a group joined with
    /// [`join_multicast_v6`](Self::join_multicast_v6).
    ///
    /// # Errors
    ///
    /// The OS's error from `setsockopt(2)`.
    pub fn leave_multicast_v6(&self, multiaddr: &Ipv6Addr, interface: u32) -> io::Result<()> {
        SockRef::from(self.io.get_ref()).leave_multicast_v6(multiaddr, interface)
    }
}
