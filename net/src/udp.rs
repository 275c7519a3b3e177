//! UDP: [`UdpSocket`], whole: binding, addresses, and sending and receiving
//! datagrams.

use std::fmt;
use std::io;
use std::net::SocketAddr;
use std::task::{Context, Poll};

use ioloop_runtime::io::Registration;

use crate::addr::{self, ToSocketAddrs};
use crate::syscall;

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

    /// The address this socket is bound to.
    ///
    /// # Errors
    ///
    /// The OS's error from `getsockname(2)` (rare).
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.io.get_ref().local_addr()
    }

    /// The peer this socket is connected to.
    ///
    /// # Errors
    ///
    /// `NotConnected` before [`connect`](Self::connect).
    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        self.io.get_ref().peer_addr()
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

    /// [`send_to`](Self::send_to) as a poll function, for hand-written
    /// futures.
    ///
    /// A poll function has no place of its own among the waiters: per
    /// direction, the wakers of the latest 65 distinct tasks polling so are
    /// kept, the oldest woken to make room for one more (see
    /// [`Registration`]). Any number of
    /// tasks may wait in the async methods.
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

    /// [`recv_from`](Self::recv_from) as a poll function, for hand-written
    /// futures.
    ///
    /// A poll function has no place of its own among the waiters: per
    /// direction, the wakers of the latest 65 distinct tasks polling so are
    /// kept, the oldest woken to make room for one more (see
    /// [`Registration`]). Any number of
    /// tasks may wait in the async methods.
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

    /// Waits until a datagram can be received (or an error is pending).
    ///
    /// # Errors
    ///
    /// Fails once the runtime has shut down.
    pub async fn readable(&self) -> io::Result<()> {
        self.io.readable().await.map(drop)
    }

    /// Waits until a datagram can be sent.
    ///
    /// # Errors
    ///
    /// Fails once the runtime has shut down.
    pub async fn writable(&self) -> io::Result<()> {
        self.io.writable().await.map(drop)
    }

    /// Polls for read readiness, registering `cx` to be woken by it.
    ///
    /// As a poll function it keeps only the wakers of the latest 65
    /// distinct tasks polling a direction (see [`Registration`]); any
    /// number may wait in the async methods.
    ///
    /// # Errors
    ///
    /// Fails once the runtime has shut down.
    pub fn poll_read_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.io.poll_read_ready(cx).map_ok(drop)
    }

    /// Polls for write readiness, registering `cx` to be woken by it.
    ///
    /// As a poll function it keeps only the wakers of the latest 65
    /// distinct tasks polling a direction (see [`Registration`]); any
    /// number may wait in the async methods.
    ///
    /// # Errors
    ///
    /// Fails once the runtime has shut down.
    pub fn poll_write_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.io.poll_write_ready(cx).map_ok(drop)
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

// The options: their imports here, next to the one block that uses them.
use std::net::{Ipv4Addr, Ipv6Addr};

use socket2::SockRef;

/// Socket options, through `socket2::SockRef`.
impl UdpSocket {
    /// Sets `IP_TTL`, the time-to-live of the IPv4 packets this socket sends:
    /// how many routers they may cross.
    ///
    /// # Errors
    ///
    /// `InvalidInput` outside 1..=255, checked here: `u32::MAX` reaches the
    /// OS as -1, which Linux takes as "the default" rather than refuse.
    /// Else the OS's error from `setsockopt(2)`.
    pub fn set_ttl(&self, ttl: u32) -> io::Result<()> {
        SockRef::from(self.io.get_ref()).set_ttl_v4(crate::options::ttl(ttl)?)
    }

    /// `IP_TTL`; see [`set_ttl`](Self::set_ttl).
    ///
    /// # Errors
    ///
    /// The OS's error from `getsockopt(2)`.
    pub fn ttl(&self) -> io::Result<u32> {
        SockRef::from(self.io.get_ref()).ttl_v4()
    }

    /// Sets `SO_BROADCAST`: with `true`, the socket may send to a broadcast
    /// address (`255.255.255.255`, a subnet's); without it such a send
    /// fails with `PermissionDenied`.
    ///
    /// # Errors
    ///
    /// The OS's error from `setsockopt(2)`.
    pub fn set_broadcast(&self, broadcast: bool) -> io::Result<()> {
        SockRef::from(self.io.get_ref()).set_broadcast(broadcast)
    }

    /// `SO_BROADCAST`; see [`set_broadcast`](Self::set_broadcast).
    ///
    /// # Errors
    ///
    /// The OS's error from `getsockopt(2)`.
    pub fn broadcast(&self) -> io::Result<bool> {
        SockRef::from(self.io.get_ref()).broadcast()
    }

    /// Sets `IP_MULTICAST_TTL`, the time-to-live of the IPv4 multicast
    /// datagrams this socket sends (default 1: they stay on the local
    /// network).
    ///
    /// # Errors
    ///
    /// `InvalidInput` above 255, checked here: `u32::MAX` reaches the OS
    /// as -1, which Linux may read as "the default", or truncate, rather than
    /// refuse.
    /// Else the OS's error from `setsockopt(2)`.
    pub fn set_multicast_ttl_v4(&self, ttl: u32) -> io::Result<()> {
        SockRef::from(self.io.get_ref())
            .set_multicast_ttl_v4(crate::options::byte(ttl, "IP_MULTICAST_TTL")?)
    }

    /// `IP_MULTICAST_TTL`; see
    /// [`set_multicast_ttl_v4`](Self::set_multicast_ttl_v4).
    ///
    /// # Errors
    ///
    /// The OS's error from `getsockopt(2)`.
    pub fn multicast_ttl_v4(&self) -> io::Result<u32> {
        SockRef::from(self.io.get_ref()).multicast_ttl_v4()
    }

    /// Sets `IP_MULTICAST_LOOP`: with `true` (the default), IPv4 multicast
    /// datagrams this socket sends are also delivered to this host's
    /// members of the group, this socket included.
    ///
    /// # Errors
    ///
    /// The OS's error from `setsockopt(2)`.
    pub fn set_multicast_loop_v4(&self, on: bool) -> io::Result<()> {
        SockRef::from(self.io.get_ref()).set_multicast_loop_v4(on)
    }

    /// `IP_MULTICAST_LOOP`; see
    /// [`set_multicast_loop_v4`](Self::set_multicast_loop_v4).
    ///
    /// # Errors
    ///
    /// The OS's error from `getsockopt(2)`.
    pub fn multicast_loop_v4(&self) -> io::Result<bool> {
        SockRef::from(self.io.get_ref()).multicast_loop_v4()
    }

    /// Sets `IPV6_MULTICAST_LOOP`, [`set_multicast_loop_v4`]'s IPv6 twin,
    /// on an IPv6 socket.
    ///
    /// [`set_multicast_loop_v4`]: Self::set_multicast_loop_v4
    ///
    /// # Errors
    ///
    /// The OS's error from `setsockopt(2)` (on an IPv4 socket, say).
    pub fn set_multicast_loop_v6(&self, on: bool) -> io::Result<()> {
        SockRef::from(self.io.get_ref()).set_multicast_loop_v6(on)
    }

    /// `IPV6_MULTICAST_LOOP`; see
    /// [`set_multicast_loop_v6`](Self::set_multicast_loop_v6).
    ///
    /// # Errors
    ///
    /// The OS's error from `getsockopt(2)`.
    pub fn multicast_loop_v6(&self) -> io::Result<bool> {
        SockRef::from(self.io.get_ref()).multicast_loop_v6()
    }

    /// Sets `IP_MULTICAST_IF`, the interface (named by one of its IPv4
    /// addresses) IPv4 multicast datagrams leave by; `UNSPECIFIED`, the
    /// default, lets the routing table choose. `127.0.0.1` keeps them on
    /// this host.
    ///
    /// # Errors
    ///
    /// The OS's error from `setsockopt(2)` (`AddrNotAvailable` for an
    /// address no interface has).
    pub fn set_multicast_if_v4(&self, interface: Ipv4Addr) -> io::Result<()> {
        SockRef::from(self.io.get_ref()).set_multicast_if_v4(&interface)
    }

    /// `IP_MULTICAST_IF`; see
    /// [`set_multicast_if_v4`](Self::set_multicast_if_v4).
    ///
    /// # Errors
    ///
    /// The OS's error from `getsockopt(2)`.
    pub fn multicast_if_v4(&self) -> io::Result<Ipv4Addr> {
        SockRef::from(self.io.get_ref()).multicast_if_v4()
    }

    /// Joins the IPv4 multicast group `multiaddr` on the interface whose
    /// address is `interface` (`UNSPECIFIED`: the one the routing table
    /// picks for the group): datagrams sent to the group, at this socket's
    /// port, are delivered here too.
    ///
    /// # Errors
    ///
    /// The OS's error from `setsockopt(2)` (`InvalidInput` for an address
    /// that is not multicast, `AddrInUse` for a group already joined,
    /// `NoDevice` / `ENODEV` for an interface without a route to it).
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
    /// The OS's error from `setsockopt(2)` (`AddrNotAvailable` for a group
    /// not joined).
    pub fn leave_multicast_v4(&self, multiaddr: Ipv4Addr, interface: Ipv4Addr) -> io::Result<()> {
        SockRef::from(self.io.get_ref()).leave_multicast_v4(&multiaddr, &interface)
    }

    /// Joins the IPv6 multicast group `multiaddr` on the interface with
    /// index `interface` (0: the one the routing table picks).
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

    /// Sets `IP_TOS`, the type-of-service byte (DSCP and ECN bits) of the
    /// IPv4 packets this socket sends. Not on Fuchsia, Redox, Solaris or
    /// Haiku.
    ///
    /// # Errors
    ///
    /// `InvalidInput` above 255, checked here: `u32::MAX` reaches the OS
    /// as -1, which Linux may read as "the default", or truncate, rather than
    /// refuse.
    /// Else the OS's error from `setsockopt(2)`.
    #[cfg(not(any(
        target_os = "fuchsia",
        target_os = "redox",
        target_os = "solaris",
        target_os = "haiku"
    )))]
    pub fn set_tos(&self, tos: u32) -> io::Result<()> {
        SockRef::from(self.io.get_ref()).set_tos_v4(crate::options::byte(tos, "IP_TOS")?)
    }

    /// `IP_TOS`; see [`set_tos`](Self::set_tos).
    ///
    /// # Errors
    ///
    /// The OS's error from `getsockopt(2)`.
    #[cfg(not(any(
        target_os = "fuchsia",
        target_os = "redox",
        target_os = "solaris",
        target_os = "haiku"
    )))]
    pub fn tos(&self) -> io::Result<u32> {
        SockRef::from(self.io.get_ref()).tos_v4()
    }

    /// Sets `IPV6_TCLASS`, the traffic class byte of the IPv6 packets this
    /// socket sends (IPv6's `IP_TOS`). Linux, Android, the BSDs, macOS,
    /// illumos and Fuchsia.
    ///
    /// # Errors
    ///
    /// `InvalidInput` above 255, checked here: `u32::MAX` reaches the OS
    /// as -1, which Linux may read as "the default", or truncate, rather than
    /// refuse.
    /// Else the OS's error from `setsockopt(2)` (on an IPv4 socket, say).
    #[cfg(any(
        target_os = "android",
        target_os = "dragonfly",
        target_os = "freebsd",
        target_os = "fuchsia",
        target_os = "illumos",
        target_os = "linux",
        target_os = "macos",
        target_os = "netbsd",
        target_os = "openbsd",
    ))]
    pub fn set_tclass_v6(&self, tclass: u32) -> io::Result<()> {
        SockRef::from(self.io.get_ref()).set_tclass_v6(crate::options::byte(tclass, "IPV6_TCLASS")?)
    }

    /// `IPV6_TCLASS`; see [`set_tclass_v6`](Self::set_tclass_v6).
    ///
    /// # Errors
    ///
    /// The OS's error from `getsockopt(2)`.
    #[cfg(any(
        target_os = "android",
        target_os = "dragonfly",
        target_os = "freebsd",
        target_os = "fuchsia",
        target_os = "illumos",
        target_os = "linux",
        target_os = "macos",
        target_os = "netbsd",
        target_os = "openbsd",
    ))]
    pub fn tclass_v6(&self) -> io::Result<u32> {
        SockRef::from(self.io.get_ref()).tclass_v6()
    }

    /// Sets `SO_SNDBUF`, the size of the kernel's send buffer for this
    /// socket. Linux doubles the value (the other half is its bookkeeping)
    /// and clamps it to `net.core.wmem_max`, so
    /// [`send_buffer_size`](Self::send_buffer_size) rarely returns what was
    /// set.
    ///
    /// # Errors
    ///
    /// The OS's error from `setsockopt(2)`.
    pub fn set_send_buffer_size(&self, size: u32) -> io::Result<()> {
        SockRef::from(self.io.get_ref()).set_send_buffer_size(size as usize)
    }

    /// The size of the kernel's send buffer (`SO_SNDBUF`).
    ///
    /// # Errors
    ///
    /// The OS's error from `getsockopt(2)`.
    pub fn send_buffer_size(&self) -> io::Result<u32> {
        let size = SockRef::from(self.io.get_ref()).send_buffer_size()?;
        Ok(u32::try_from(size).unwrap_or(u32::MAX))
    }

    /// Sets `SO_RCVBUF`, the size of the kernel's receive buffer for this
    /// socket; Linux doubles and clamps it as for
    /// [`set_send_buffer_size`](Self::set_send_buffer_size), here to
    /// `net.core.rmem_max`.
    ///
    /// # Errors
    ///
    /// The OS's error from `setsockopt(2)`.
    pub fn set_recv_buffer_size(&self, size: u32) -> io::Result<()> {
        SockRef::from(self.io.get_ref()).set_recv_buffer_size(size as usize)
    }

    /// The size of the kernel's receive buffer (`SO_RCVBUF`).
    ///
    /// # Errors
    ///
    /// The OS's error from `getsockopt(2)`.
    pub fn recv_buffer_size(&self) -> io::Result<u32> {
        let size = SockRef::from(self.io.get_ref()).recv_buffer_size()?;
        Ok(u32::try_from(size).unwrap_or(u32::MAX))
    }
}
