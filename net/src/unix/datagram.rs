//! [`UnixDatagram`] (what it shares with `UdpSocket` is `impls.rs`).

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

/// A Unix domain datagram socket: a [`UdpSocket`](crate::UdpSocket) for a
/// path, reliable and in order (a send waits while the receiver's queue is
/// full). Only a bound socket can be answered; binding makes a socket
/// file, which outlives the socket (abstract names leave none). Not
/// simulated: inside a simulation ([`seam`](crate::seam)), making one
/// fails with `Unsupported`.
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
///     assert_eq!(b.recv(&mut [0; 8]).await?, 3, "datagrams keep their bounds");
///     Ok::<_, std::io::Error>(())
/// })
/// .unwrap();
/// ```
pub struct UnixDatagram {
    io: Registration<mio::net::UnixDatagram>,
}

impls::datagram!(UnixDatagram: SocketAddr;
    recv: mio::net::UnixDatagram::recv,
    recv_from: mio::net::UnixDatagram::recv_from,
    peek_from: sys::peek_from,
    send: sys::send);
impls::debug_and_fd!(UnixDatagram: local_addr, peer_addr);

impl UnixDatagram {
    /// Binds a datagram socket to `path` (see [`ToUnixAddr`]).
    ///
    /// # Errors
    ///
    /// `AddrInUse` if a file is at `path`, `NotFound` without its
    /// directory, `InvalidInput` for a path too long; no runtime here.
    pub fn bind(path: impl ToUnixAddr) -> io::Result<UnixDatagram> {
        let addr = path.to_unix_addr()?;
        let socket = mio::net::UnixDatagram::bind_addr(&addr)?;
        Self::from_mio(socket).inspect_err(|_| sys::remove_socket_file(&addr))
    }

    /// A socket bound to no address: it sends, and receives only from a
    /// peer it is [`connect`](Self::connect)ed to.
    ///
    /// # Errors
    ///
    /// The OS's error from `socket(2)`; no ioloop runtime on this thread.
    pub fn unbound() -> io::Result<UnixDatagram> {
        Self::from_mio(mio::net::UnixDatagram::unbound()?)
    }

    /// A pair of connected, unnamed datagram sockets; fails as
    /// [`unbound`](Self::unbound), from `socketpair(2)`.
    pub fn pair() -> io::Result<(UnixDatagram, UnixDatagram)> {
        let (a, b) = mio::net::UnixDatagram::pair()?;
        Ok((Self::from_mio(a)?, Self::from_mio(b)?))
    }

    /// Wraps a socket made elsewhere, made non-blocking and registered:
    /// fails if it cannot be made non-blocking, or no runtime runs here.
    pub fn from_std(socket: std::os::unix::net::UnixDatagram) -> io::Result<UnixDatagram> {
        socket.set_nonblocking(true)?;
        Self::from_mio(mio::net::UnixDatagram::from_std(socket))
    }

    fn from_mio(socket: mio::net::UnixDatagram) -> io::Result<UnixDatagram> {
        // The OS's socket would wait forever on a simulated loop.
        if crate::seam::running() {
            return Err(crate::seam::not_simulated("a Unix datagram socket"));
        }
        sys::no_sigpipe(&socket)?;
        Registration::new(socket).map(|io| UnixDatagram { io })
    }

    /// Sets the default peer (sending nothing): [`send`](Self::send) goes
    /// there, and only its datagrams are received.
    ///
    /// # Errors
    ///
    /// `NotFound` if no socket is at `path`; `ConnectionRefused` if the
    /// socket there is closed; `InvalidInput` for a bad path.
    pub fn connect(&self, path: impl ToUnixAddr) -> io::Result<()> {
        let addr = sys::sock_addr(&path.to_unix_addr()?)?;
        SockRef::from(self.io.get_ref()).connect(&addr)
    }

    /// Shuts down one or both directions (a send then fails with
    /// `BrokenPipe`; a receive returns `Ok(0)` once the queue is empty).
    ///
    /// # Errors
    ///
    /// The OS's error from `shutdown(2)`.
    pub fn shutdown(&self, how: Shutdown) -> io::Result<()> {
        self.io.get_ref().shutdown(how)
    }

    /// Sends one datagram to `target`, waiting for room in its queue (no
    /// event says when: tried again after 1 ms, doubling up to 100 ms).
    ///
    /// # Errors
    ///
    /// `NotFound` or `ConnectionRefused` if no socket receives at
    /// `target`; `InvalidInput` for a bad path; the OS's error (`EMSGSIZE`).
    ///
    /// # Cancellation
    ///
    /// Cancel-safe: the datagram is sent whole or not at all.
    #[doc(alias = "sendto")]
    pub async fn send_to(&self, buf: &[u8], target: impl ToUnixAddr) -> io::Result<usize> {
        let target = sys::sock_addr(&target.to_unix_addr()?)?;
        // Write readiness says nothing about the receiver's queue (see the
        // docs above), so the first try waits for nothing; it only spends
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

    /// [`send_to`](Self::send_to) as a poll function, failing as it does.
    /// While the receiver's queue is full, a task it spawns wakes `cx` to
    /// try again 1 ms later (no event would).
    pub fn poll_send_to(
        &self,
        cx: &mut Context<'_>,
        buf: &[u8],
        target: impl ToUnixAddr,
    ) -> Poll<io::Result<usize>> {
        let target = sys::sock_addr(&target.to_unix_addr()?)?;
        loop {
            match sys::send_to(self.io.get_ref(), buf, &target) {
                Err(err) if err.kind() == io::ErrorKind::WouldBlock => {
                    let waker = cx.waker().clone();
                    drop(ioloop_runtime::spawn(async move {
                        sleep(sys::FIRST_RETRY).await;
                        waker.wake();
                    }));
                    return Poll::Pending;
                }
                Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                sent => return Poll::Ready(sent),
            }
        }
    }

    /// [`send_to`](Self::send_to) without waiting. A loop of `writable`
    /// and this spins while the receiver's queue is full (the socket stays
    /// writable): prefer `send_to`.
    ///
    /// # Errors
    ///
    /// `WouldBlock` if the receiver's queue is full; as `send_to`.
    pub fn try_send_to(&self, buf: &[u8], target: impl ToUnixAddr) -> io::Result<usize> {
        let target = sys::sock_addr(&target.to_unix_addr()?)?;
        self.io
            .try_write_io(|socket| sys::send_to(socket, buf, &target))
    }

    options::sockopt!(@buffer_sizes);
}
