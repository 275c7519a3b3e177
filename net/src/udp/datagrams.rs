//! Sending and receiving datagrams: `UdpSocket`'s I/O, each method the one
//! pattern (try the syscall; on `WouldBlock` clear readiness and wait;
//! retry).

use std::future::poll_fn;
use std::io;
use std::net::SocketAddr;
use std::task::{Context, Poll};

use super::UdpSocket;
use crate::ToSocketAddr;

impl UdpSocket {
    /// Sends one datagram to `target`, waiting for room in the send buffer;
    /// returns the number of bytes sent (all of `buf`).
    ///
    /// # Errors
    ///
    /// `InvalidInput` if `target` is not a literal `ip:port`; the OS's error
    /// (a datagram too large for UDP is `EMSGSIZE`).
    ///
    /// # Cancellation
    ///
    /// Cancel-safe: the datagram is sent whole or not at all.
    ///
    /// # Examples
    ///
    /// ```
    /// use ioloop::net::UdpSocket;
    ///
    /// ioloop::block_on(async {
    ///     let a = UdpSocket::bind("127.0.0.1:0").await?;
    ///     let b = UdpSocket::bind("127.0.0.1:0").await?;
    ///     let sent = a.send_to(b"one datagram", b.local_addr()?).await?;
    ///     let mut buf = [0; 64];
    ///     let (n, _) = b.recv_from(&mut buf).await?;
    ///     assert_eq!((sent, n), (12, 12));
    ///     Ok::<_, std::io::Error>(())
    /// })
    /// .unwrap();
    /// ```
    #[doc(alias = "sendto")]
    pub async fn send_to(&self, buf: &[u8], target: impl ToSocketAddr) -> io::Result<usize> {
        let target = target.to_socket_addr()?;
        poll_fn(|cx| self.poll_send_to(cx, buf, target)).await
    }

    /// [`send_to`](Self::send_to) as a poll function, for hand-written
    /// futures.
    ///
    /// # Errors
    ///
    /// As [`send_to`](Self::send_to).
    ///
    /// # Examples
    ///
    /// ```
    /// ioloop::block_on(async {
    ///     let a = ioloop::net::UdpSocket::bind("127.0.0.1:0").await?;
    ///     let to = a.local_addr()?;
    ///     let n = std::future::poll_fn(|cx| a.poll_send_to(cx, b"hi", to)).await?;
    ///     let mut buf = [0; 8];
    ///     let (m, _) = std::future::poll_fn(|cx| a.poll_recv_from(cx, &mut buf)).await?;
    ///     assert_eq!((n, &buf[..m]), (2, &b"hi"[..]));
    ///     Ok::<_, std::io::Error>(())
    /// })
    /// .unwrap();
    /// ```
    pub fn poll_send_to(
        &self,
        cx: &mut Context<'_>,
        buf: &[u8],
        target: SocketAddr,
    ) -> Poll<io::Result<usize>> {
        self.io
            .poll_write_io(cx, |socket| socket.send_to(buf, target))
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
    ///
    /// # Examples
    ///
    /// A buffer shorter than the datagram keeps its first bytes only:
    ///
    /// ```
    /// use ioloop::net::UdpSocket;
    ///
    /// ioloop::block_on(async {
    ///     let a = UdpSocket::bind("127.0.0.1:0").await?;
    ///     let b = UdpSocket::bind("127.0.0.1:0").await?;
    ///     a.send_to(b"0123456789", b.local_addr()?).await?;
    ///     let mut small = [0; 4];
    ///     let (n, from) = b.recv_from(&mut small).await?;
    ///     assert_eq!((&small[..n], from), (&b"0123"[..], a.local_addr()?));
    ///     Ok::<_, std::io::Error>(())
    /// })
    /// .unwrap();
    /// ```
    #[doc(alias = "recvfrom")]
    pub async fn recv_from(&self, buf: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        poll_fn(|cx| self.poll_recv_from(cx, buf)).await
    }

    /// [`recv_from`](Self::recv_from) as a poll function, for hand-written
    /// futures.
    ///
    /// # Errors
    ///
    /// As [`recv_from`](Self::recv_from).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::future::poll_fn;
    /// use ioloop::net::UdpSocket;
    ///
    /// ioloop::block_on(async {
    ///     let a = UdpSocket::bind("127.0.0.1:0").await?;
    ///     a.send_to(b"to myself", a.local_addr()?).await?;
    ///     let mut buf = [0; 16];
    ///     let (n, from) = poll_fn(|cx| a.poll_recv_from(cx, &mut buf)).await?;
    ///     assert_eq!((&buf[..n], from), (&b"to myself"[..], a.local_addr()?));
    ///     Ok::<_, std::io::Error>(())
    /// })
    /// .unwrap();
    /// ```
    pub fn poll_recv_from(
        &self,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<(usize, SocketAddr)>> {
        self.io.poll_read_io(cx, |socket| socket.recv_from(buf))
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
    ///
    /// # Examples
    ///
    /// ```
    /// use ioloop::net::UdpSocket;
    ///
    /// ioloop::block_on(async {
    ///     let a = UdpSocket::bind("127.0.0.1:0").await?;
    ///     let b = UdpSocket::bind("127.0.0.1:0").await?;
    ///     a.connect(b.local_addr()?).await?;
    ///     b.connect(a.local_addr()?).await?;
    ///     a.send(b"ping").await?;
    ///     let mut buf = [0; 16];
    ///     let n = b.recv(&mut buf).await?;
    ///     assert_eq!(&buf[..n], b"ping");
    ///     Ok::<_, std::io::Error>(())
    /// })
    /// .unwrap();
    /// ```
    pub async fn send(&self, buf: &[u8]) -> io::Result<usize> {
        poll_fn(|cx| self.io.poll_write_io(cx, |socket| socket.send(buf))).await
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
    ///
    /// # Examples
    ///
    /// ```
    /// use ioloop::net::UdpSocket;
    ///
    /// ioloop::block_on(async {
    ///     let a = UdpSocket::bind("127.0.0.1:0").await?;
    ///     let b = UdpSocket::bind("127.0.0.1:0").await?;
    ///     b.connect(a.local_addr()?).await?;
    ///     a.send_to(b"for b", b.local_addr()?).await?;
    ///     let mut buf = [0; 16];
    ///     let n = b.recv(&mut buf).await?;
    ///     assert_eq!(&buf[..n], b"for b");
    ///     Ok::<_, std::io::Error>(())
    /// })
    /// .unwrap();
    /// ```
    pub async fn recv(&self, buf: &mut [u8]) -> io::Result<usize> {
        poll_fn(|cx| self.io.poll_read_io(cx, |socket| socket.recv(buf))).await
    }
}
