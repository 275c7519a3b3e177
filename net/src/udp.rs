//! UDP: [`UdpSocket`] (what it shares with `UnixDatagram` is `impls.rs`).

use std::future::ready;
use std::io;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};
use std::task::{Context, Poll};

use ioloop_runtime::io::Registration;
use socket2::SockRef;

use crate::addr::{self, ToSocketAddrs};
use crate::{impls, options, sys};

/// A UDP socket registered with the reactor: unconnected, it sends to and
/// receives from anyone; [`connect`](Self::connect)ed, it talks to one
/// peer. A receive takes one whole datagram, truncated to the buffer. Any
/// number of tasks may share it (each datagram goes to one).
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
    io: Registration<sys::UdpSocket>,
}

impls::datagram!(UdpSocket: SocketAddr;
    recv: sys::UdpSocket::recv,
    recv_from: sys::UdpSocket::recv_from,
    peek_from: sys::UdpSocket::peek_from,
    send: sys::UdpSocket::send);

impl UdpSocket {
    /// Binds a UDP socket to the first address of `addr` that binds (a
    /// host name is resolved on the blocking pool); port 0 picks a free one.
    ///
    /// # Errors
    ///
    /// The last address's error (`AddrInUse`, ...); the lookup's;
    /// `InvalidInput` for a malformed address or an empty slice; an error
    /// if no ioloop runtime runs on this thread.
    pub async fn bind(addr: impl ToSocketAddrs) -> io::Result<UdpSocket> {
        let socket = addr::each_addr(&addr, |addr| ready(sys::UdpSocket::bind(addr))).await?;
        Registration::new(socket).map(|io| UdpSocket { io })
    }

    /// Wraps a socket made elsewhere, made non-blocking and registered:
    /// fails if it cannot be made non-blocking, or no runtime runs here.
    pub fn from_std(socket: std::net::UdpSocket) -> io::Result<UdpSocket> {
        socket.set_nonblocking(true)?;
        Registration::new(sys::UdpSocket::from_std(socket)).map(|io| UdpSocket { io })
    }

    /// Sets the default peer (sending nothing), the first address of `addr`
    /// it can take: [`send`](Self::send) goes there, [`recv`](Self::recv)
    /// takes only its datagrams. Fails as [`bind`](Self::bind) does.
    pub async fn connect(&self, addr: impl ToSocketAddrs) -> io::Result<()> {
        let socket = self.io.get_ref();
        addr::each_addr(&addr, |addr| ready(socket.connect(addr))).await
    }

    /// Sends one datagram to `target`, waiting for room; returns its length.
    /// A host name is looked up at each call: [`connect`](Self::connect)
    /// once to send many.
    ///
    /// # Errors
    ///
    /// The OS's error (`EMSGSIZE` for a datagram too large); the lookup's;
    /// `InvalidInput` for a malformed address or an empty slice.
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
        self.io.write_io(|socket| socket.send_to(buf, target)).await
    }

    /// [`send_to`](Self::send_to) as a poll function, failing as it does.
    pub fn poll_send_to(
        &self,
        cx: &mut Context<'_>,
        buf: &[u8],
        target: SocketAddr,
    ) -> Poll<io::Result<usize>> {
        self.io
            .poll_write_io(cx, |socket| socket.send_to(buf, target))
    }

    /// [`send_to`](Self::send_to) without waiting.
    ///
    /// # Errors
    ///
    /// `WouldBlock` if the send buffer is full; the OS's error.
    pub fn try_send_to(&self, buf: &[u8], target: SocketAddr) -> io::Result<usize> {
        self.io.try_write_io(|socket| socket.send_to(buf, target))
    }
}

impls::debug_and_fd!(UdpSocket: local_addr);

impl UdpSocket {
    /// The OS socket, for an option; a simulated one has none.
    fn sock(&self) -> io::Result<SockRef<'_>> {
        options::Sock::sock(&self.io).ok_or_else(options::no_options)
    }
}

/// Socket options, through `socket2::SockRef`.
impl UdpSocket {
    options::sockopt!(@ip);

    options::sockopt! {
        /// Sets `SO_BROADCAST`, without which a send to a broadcast address
        /// fails with `PermissionDenied`.
        set_broadcast(on: bool) => set_broadcast(on);
        broadcast -> bool => broadcast;

        /// Sets `IP_MULTICAST_TTL`, the time-to-live of the IPv4 multicast
        /// datagrams this socket sends (default 1: the local network).
        set_multicast_ttl_v4(ttl: u32) =>
            set_multicast_ttl_v4(options::in_range(ttl, 0, "IP_MULTICAST_TTL")?), checks "0..=255";
        multicast_ttl_v4 -> u32 => multicast_ttl_v4;

        /// Sets `IP_MULTICAST_LOOP` (on by default): whether the IPv4
        /// multicast datagrams sent also reach this host's members.
        set_multicast_loop_v4(on: bool) => set_multicast_loop_v4(on);
        multicast_loop_v4 -> bool => multicast_loop_v4;

        /// Sets `IPV6_MULTICAST_LOOP`, `IP_MULTICAST_LOOP` for an IPv6
        /// socket (on an IPv4 one, an error).
        set_multicast_loop_v6(on: bool) => set_multicast_loop_v6(on);
        multicast_loop_v6 -> bool => multicast_loop_v6;

        /// Sets `IP_MULTICAST_IF`, the interface (one of its IPv4 addresses)
        /// multicast datagrams leave by; `UNSPECIFIED` lets routing choose.
        /// An address no interface has is `AddrNotAvailable`.
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
    pub fn join_multicast_v4(&self, multiaddr: Ipv4Addr, interface: Ipv4Addr) -> io::Result<()> {
        self.sock()?.join_multicast_v4(&multiaddr, &interface)
    }

    /// Leaves a group [`join_multicast_v4`](Self::join_multicast_v4) joined.
    ///
    /// # Errors
    ///
    /// The OS's error (`AddrNotAvailable` for a group not joined).
    pub fn leave_multicast_v4(&self, multiaddr: Ipv4Addr, interface: Ipv4Addr) -> io::Result<()> {
        self.sock()?.leave_multicast_v4(&multiaddr, &interface)
    }

    /// Joins the IPv6 multicast group `multiaddr` on the interface with
    /// index `interface` (0: the routing table's pick). Fails as
    /// [`join_multicast_v4`](Self::join_multicast_v4) does.
    pub fn join_multicast_v6(&self, multiaddr: &Ipv6Addr, interface: u32) -> io::Result<()> {
        self.sock()?.join_multicast_v6(multiaddr, interface)
    }

    /// Leaves a group [`join_multicast_v6`](Self::join_multicast_v6)
    /// joined; fails as [`leave_multicast_v4`](Self::leave_multicast_v4).
    pub fn leave_multicast_v6(&self, multiaddr: &Ipv6Addr, interface: u32) -> io::Result<()> {
        self.sock()?.leave_multicast_v6(multiaddr, interface)
    }
}
