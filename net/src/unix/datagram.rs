//! [`UnixDatagram`], whole: binding, pairs, addresses, and sending and
//! receiving datagrams.

use std::io;
use std::net::Shutdown;
use std::os::unix::net::SocketAddr;
use std::task::{Context, Poll};

use ioloop_runtime::io::Registration;
use ioloop_runtime::time::sleep;
use socket2::SockRef;

use super::addr::ToUnixAddr;
use super::sys;
use crate::{impls, options};

/// A Unix domain datagram socket registered with the reactor:
/// [`UdpSocket`](crate::UdpSocket) between processes of one machine,
/// named by a path.
///
/// Unconnected, it sends to and receives from anyone
/// ([`send_to`](Self::send_to), [`recv_from`](Self::recv_from));
/// [`connect`](Self::connect)ed, it talks to one peer
/// ([`send`](Self::send), [`recv`](Self::recv)). Unlike UDP, delivery is
/// reliable and in order: a send waits while the receiver's queue is
/// full. Each send is one datagram, each receive takes one whole datagram;
/// a receive buffer shorter than the datagram gets its first bytes and the
/// rest is discarded.
///
/// A socket that is to receive replies must be bound: a datagram from an
/// [`unbound`](Self::unbound) socket comes from an unnamed address, which
/// cannot be answered. Binding creates a socket file, which stays after
/// the socket is dropped (remove it yourself); abstract names (Linux)
/// leave none. Sends never raise `SIGPIPE`.
///
/// # Examples
///
/// ```
/// use ioloop::net::UnixDatagram;
///
/// ioloop::block_on(async {
///     let dir = std::env::temp_dir().join(format!("ioloop-doc-datagram-{}", std::process::id()));
///     std::fs::create_dir_all(&dir)?;
///     let server = UnixDatagram::bind(dir.join("server.sock"))?;
///     let client = UnixDatagram::bind(dir.join("client.sock"))?;
///     client.send_to(b"what time is it?", dir.join("server.sock")).await?;
///     let mut buf = [0; 64];
///     let (n, from) = server.recv_from(&mut buf).await?;
///     assert_eq!(&buf[..n], b"what time is it?");
///     let reply_to = from.as_pathname().expect("the client is bound");
///     server.send_to(b"noon", reply_to).await?;
///     let n = client.recv(&mut buf).await?;
///     assert_eq!(&buf[..n], b"noon");
///     std::fs::remove_dir_all(&dir)?;
///     Ok::<_, std::io::Error>(())
/// })
/// .unwrap();
/// ```
pub struct UnixDatagram {
    io: Registration<mio::net::UnixDatagram>,
}

impls::addresses!(UnixDatagram: SocketAddr, peer_addr);

impls::readiness!(UnixDatagram);
impls::debug_and_fd!(UnixDatagram: local_addr, peer_addr);

impl UnixDatagram {
    /// Binds a datagram socket to `path` (on Linux, `"\0name"` or an
    /// abstract `SocketAddr` binds an abstract name: see [`ToUnixAddr`]).
    /// Not `async`, as in tokio: binding never waits.
    ///
    /// # Errors
    ///
    /// `AddrInUse` if a file is at `path`; `NotFound` if its directory
    /// does not exist; `InvalidInput` if the path is too long; an error if
    /// no ioloop runtime runs on this thread.
    pub fn bind(path: impl ToUnixAddr) -> io::Result<UnixDatagram> {
        let addr = path.to_unix_addr()?;
        let socket = mio::net::UnixDatagram::bind_addr(&addr)?;
        Self::from_mio(socket).inspect_err(|_| sys::remove_socket_file(&addr))
    }

    /// A socket bound to no address: it can send, and receive replies only
    /// from a peer it is [`connect`](Self::connect)ed to.
    ///
    /// # Errors
    ///
    /// The OS's error from `socket(2)`; an error if no ioloop runtime runs
    /// on this thread.
    pub fn unbound() -> io::Result<UnixDatagram> {
        Self::from_mio(mio::net::UnixDatagram::unbound()?)
    }

    /// A pair of connected, unnamed datagram sockets, each registered with
    /// the runtime running on this thread.
    ///
    /// # Errors
    ///
    /// The OS's error from `socketpair(2)`; an error if no ioloop runtime
    /// runs on this thread.
    ///
    /// # Examples
    ///
    /// ```
    /// use ioloop::net::UnixDatagram;
    ///
    /// ioloop::block_on(async {
    ///     let (a, b) = UnixDatagram::pair()?;
    ///     a.send(b"one").await?;
    ///     a.send(b"two").await?;
    ///     let mut buf = [0; 8];
    ///     let n = b.recv(&mut buf).await?;
    ///     assert_eq!(&buf[..n], b"one", "datagrams keep their bounds");
    ///     Ok::<_, std::io::Error>(())
    /// })
    /// .unwrap();
    /// ```
    pub fn pair() -> io::Result<(UnixDatagram, UnixDatagram)> {
        let (a, b) = mio::net::UnixDatagram::pair()?;
        Ok((Self::from_mio(a)?, Self::from_mio(b)?))
    }

    /// Wraps a socket made elsewhere, switching it to non-blocking mode and
    /// registering it with the runtime running on this thread.
    ///
    /// # Errors
    ///
    /// If the socket cannot be made non-blocking, or no runtime runs here.
    pub fn from_std(socket: std::os::unix::net::UnixDatagram) -> io::Result<UnixDatagram> {
        socket.set_nonblocking(true)?;
        Self::from_mio(mio::net::UnixDatagram::from_std(socket))
    }

    fn from_mio(socket: mio::net::UnixDatagram) -> io::Result<UnixDatagram> {
        sys::no_sigpipe(&socket)?;
        Ok(UnixDatagram {
            io: Registration::new(socket)?,
        })
    }

    /// Sets the socket's default peer: [`send`](Self::send) goes there,
    /// and only datagrams from there are received. Not `async`, as in
    /// tokio: it sends nothing.
    ///
    /// # Errors
    ///
    /// `NotFound` if no socket is at `path`; `ConnectionRefused` if the
    /// socket there is closed; `InvalidInput` for a bad path.
    pub fn connect(&self, path: impl ToUnixAddr) -> io::Result<()> {
        let addr = sys::sock_addr(&path.to_unix_addr()?)?;
        SockRef::from(self.io.get_ref()).connect(&addr)
    }

    /// Shuts down one or both directions: after `Shutdown::Write` a send
    /// fails with `BrokenPipe`; after `Shutdown::Read` a receive returns
    /// `Ok(0)` once the queue is empty.
    ///
    /// # Errors
    ///
    /// The OS's error from `shutdown(2)`.
    pub fn shutdown(&self, how: Shutdown) -> io::Result<()> {
        self.io.get_ref().shutdown(how)
    }

    /// Sends one datagram to `target`, waiting for room in the receiver's
    /// queue; returns the number of bytes sent (all of `buf`).
    ///
    /// Readiness cannot say when a receiver's full queue has room: an
    /// unconnected socket stays writable all along, and every failed send
    /// even raises a write event on it. So a send that finds the queue
    /// full is tried again on a timer, after 1 ms, doubling up to 100 ms,
    /// which never spins; [`send`](Self::send) on a connected socket
    /// waits for the kernel's event instead.
    ///
    /// # Errors
    ///
    /// `NotFound` or `ConnectionRefused` if no socket receives at
    /// `target`; `InvalidInput` for a bad path; the OS's error (a datagram
    /// larger than the send buffer is `EMSGSIZE`).
    ///
    /// # Cancellation
    ///
    /// Cancel-safe: the datagram is sent whole or not at all.
    #[doc(alias = "sendto")]
    pub async fn send_to(&self, buf: &[u8], target: impl ToUnixAddr) -> io::Result<usize> {
        let target = sys::sock_addr(&target.to_unix_addr()?)?;
        // Write readiness says nothing about the receiver's queue (see the
        // module docs), so the first try waits for nothing; it only spends
        // the task's budget, so that a loop of sends still yields.
        ioloop_runtime::task::consume_budget().await;
        let mut delay = sys::FIRST_RETRY;
        loop {
            match sys::send_to(self.io.get_ref(), buf, &target) {
                Err(err) if err.kind() == io::ErrorKind::WouldBlock => {
                    log::trace!("send_to: no room at the receiver; again in {delay:?}");
                    sleep(delay).await;
                    delay = (delay * 2).min(sys::MAX_RETRY);
                }
                Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                sent => return sent,
            }
        }
    }

    /// Receives one datagram into `buf`, waiting for one to arrive; returns
    /// its length (at most `buf.len()`: the rest of a longer datagram is
    /// discarded) and its sender (unnamed if the sender is not bound).
    ///
    /// # Errors
    ///
    /// The OS's error.
    ///
    /// # Cancellation
    ///
    /// Cancel-safe: a datagram is either returned or left queued.
    #[doc(alias = "recvfrom")]
    pub async fn recv_from(&self, buf: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        self.io.read_io(|socket| socket.recv_from(buf)).await
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
        self.io.poll_read_io(cx, |socket| socket.recv_from(buf))
    }

    /// Sends one datagram to the connected peer.
    ///
    /// # Errors
    ///
    /// `NotConnected` before [`connect`](Self::connect); `BrokenPipe`
    /// after [`shutdown`](Self::shutdown); `ConnectionRefused` once the
    /// peer has closed; the OS's error.
    ///
    /// # Cancellation
    ///
    /// Cancel-safe: the datagram is sent whole or not at all.
    pub async fn send(&self, buf: &[u8]) -> io::Result<usize> {
        self.io.write_io(|socket| sys::send(socket, buf)).await
    }

    /// Receives one datagram from the connected peer into `buf`; as
    /// [`recv_from`](Self::recv_from), a longer datagram is truncated.
    ///
    /// # Errors
    ///
    /// The OS's error.
    ///
    /// # Cancellation
    ///
    /// Cancel-safe: a datagram is either returned or left queued.
    pub async fn recv(&self, buf: &mut [u8]) -> io::Result<usize> {
        self.io.read_io(|socket| socket.recv(buf)).await
    }

    /// Receives a datagram if one is queued, without waiting.
    ///
    /// # Errors
    ///
    /// `WouldBlock` if none is; as [`recv_from`](Self::recv_from).
    pub fn try_recv_from(&self, buf: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        self.io.try_read_io(|socket| socket.recv_from(buf))
    }

    /// Sends a datagram to `target` if there is room now, without waiting.
    ///
    /// Prefer [`send_to`](Self::send_to): a `WouldBlock` here usually means
    /// the receiver's queue is full, which readiness does not show (this
    /// socket stays writable), so a loop of [`writable`](Self::writable)
    /// and `try_send_to` would spin until the receiver catches up.
    ///
    /// # Errors
    ///
    /// `WouldBlock` if the receiver's queue is full; as
    /// [`send_to`](Self::send_to).
    pub fn try_send_to(&self, buf: &[u8], target: impl ToUnixAddr) -> io::Result<usize> {
        let target = sys::sock_addr(&target.to_unix_addr()?)?;
        self.io
            .try_write_io(|socket| sys::send_to(socket, buf, &target))
    }

    /// Receives a datagram from the connected peer if one is queued.
    ///
    /// # Errors
    ///
    /// `WouldBlock` if none is; as [`recv`](Self::recv).
    pub fn try_recv(&self, buf: &mut [u8]) -> io::Result<usize> {
        self.io.try_read_io(|socket| socket.recv(buf))
    }

    /// Sends a datagram to the connected peer if there is room now.
    ///
    /// # Errors
    ///
    /// `WouldBlock` if the peer's queue is full; as [`send`](Self::send).
    pub fn try_send(&self, buf: &[u8]) -> io::Result<usize> {
        self.io.try_write_io(|socket| sys::send(socket, buf))
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
        self.io.read_io(|socket| sys::peek_from(socket, buf)).await
    }
}

/// Socket options, through `socket2::SockRef`.
impl UnixDatagram {
    options::buffer_sizes!();
}
