//! The sockets under `TcpStream`, `TcpListener` and `UdpSocket`: the OS's
//! (mio's), or, inside a simulation, the simulated network's
//! (`seam::Socket`). This file, with `syscall.rs` and `unix/sys.rs` (the
//! Unix streams and listeners, the same enum), is where they are told
//! apart: each call is a `match` there, and no socket type knows which
//! kind it holds. A new socket is simulated if it is opened on a thread
//! running a simulation. (Unix datagram sockets are always the OS's.)

use std::io::{self, IoSliceMut, Read};
use std::net::{Shutdown, SocketAddr};
#[cfg(unix)]
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, RawFd};

use mio::event::Source;
use mio::{Interest, Registry, Token};
use socket2::SockRef;

use crate::seam::{Network, Open, Socket};
use crate::syscall::{self, Simulated, Target};

/// An OS socket (mio's `O`), or a simulated one. Each method is one
/// `match`, written as a call of [`on`](Either::on) with both arms.
#[derive(Debug)]
pub enum Either<O> {
    /// The OS's.
    Os(O),
    /// The simulated network's.
    Sim(Socket),
}

/// A TCP connection.
pub type TcpStream = Either<mio::net::TcpStream>;
/// A TCP listener.
pub type TcpListener = Either<mio::net::TcpListener>;
/// A UDP socket.
pub type UdpSocket = Either<mio::net::UdpSocket>;

impl<O> Either<O> {
    /// `os` on the OS socket, or `sim` on this thread's simulated network
    /// with the socket's number.
    #[inline(always)]
    pub(crate) fn on<R>(
        &self,
        os: impl FnOnce(&O) -> io::Result<R>,
        sim: impl FnOnce(&dyn Network, u32) -> io::Result<R>,
    ) -> io::Result<R> {
        match self {
            Either::Os(socket) => os(socket),
            Either::Sim(socket) => socket.call(sim),
        }
    }
}

impl<O: Source> Source for Either<O> {
    fn register(&mut self, r: &Registry, t: Token, i: Interest) -> io::Result<()> {
        match self {
            Either::Os(os) => os.register(r, t, i),
            Either::Sim(sim) => sim.register(Some(t)),
        }
    }

    fn reregister(&mut self, r: &Registry, t: Token, i: Interest) -> io::Result<()> {
        match self {
            Either::Os(os) => os.reregister(r, t, i),
            Either::Sim(sim) => sim.register(Some(t)),
        }
    }

    fn deregister(&mut self, r: &Registry) -> io::Result<()> {
        match self {
            Either::Os(os) => os.deregister(r),
            Either::Sim(sim) => sim.register(None),
        }
    }
}

/// A simulated socket has no file descriptor: asking for one panics.
#[cfg(unix)]
impl<O: AsFd> AsFd for Either<O> {
    #[track_caller]
    fn as_fd(&self) -> BorrowedFd<'_> {
        match self {
            Either::Os(os) => os.as_fd(),
            Either::Sim(_) => panic!("ioloop: a simulated socket has no file descriptor"),
        }
    }
}

#[cfg(unix)]
impl<O: AsFd> AsRawFd for Either<O> {
    fn as_raw_fd(&self) -> RawFd {
        self.as_fd().as_raw_fd()
    }
}

impl<O: AsFd> Simulated for Either<O> {
    #[inline(always)]
    fn target(&self) -> Target<'_> {
        match self {
            Either::Os(os) => Target::Os(os.as_fd()),
            Either::Sim(sim) => Target::Sim(sim),
        }
    }

    fn os(&self) -> Option<SockRef<'_>> {
        match self {
            Either::Os(os) => Some(SockRef::from(os)),
            Either::Sim(_) => None,
        }
    }
}

impl TcpStream {
    /// Begins a non-blocking connect to `addr`.
    pub(crate) fn connect(addr: SocketAddr) -> io::Result<TcpStream> {
        match Socket::open(Open::Connect(addr)) {
            Some(sim) => sim.map(TcpStream::Sim),
            None => mio::net::TcpStream::connect(addr).map(TcpStream::Os),
        }
    }

    pub(crate) fn from_std(stream: std::net::TcpStream) -> TcpStream {
        TcpStream::Os(mio::net::TcpStream::from_std(stream))
    }

    pub(crate) fn local_addr(&self) -> io::Result<SocketAddr> {
        self.on(|os| os.local_addr(), |net, id| net.addr(id, false))
    }

    pub(crate) fn peer_addr(&self) -> io::Result<SocketAddr> {
        self.on(|os| os.peer_addr(), |net, id| net.addr(id, true))
    }

    pub(crate) fn take_error(&self) -> io::Result<Option<io::Error>> {
        self.on(|os| os.take_error(), |net, id| net.take_error(id))
    }

    pub(crate) fn shutdown(&self, how: Shutdown) -> io::Result<()> {
        self.on(|os| os.shutdown(how), |net, id| net.shutdown(id, how))
    }

    /// `recv` with `MSG_PEEK`.
    pub(crate) fn peek(&self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            TcpStream::Os(os) => os.peek(buf),
            TcpStream::Sim(sim) => sim.call(|net, id| net.recv(id, buf, true)),
        }
    }
}

/// Reads through `std::io::Read`, as the vectored read takes them.
impl<O: AsFd> Read for &Either<O>
where
    for<'a> &'a O: Read,
{
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        syscall::recv(*self, buf)
    }

    fn read_vectored(&mut self, bufs: &mut [IoSliceMut<'_>]) -> io::Result<usize> {
        match self {
            Either::Os(os) => (&*os).read_vectored(bufs),
            // One buffer at a time: each read is a `recv`.
            Either::Sim(sim) => match bufs.iter_mut().find(|buf| !buf.is_empty()) {
                Some(buf) => sim.call(|net, id| net.recv(id, buf, false)),
                None => Ok(0),
            },
        }
    }
}

impl TcpListener {
    /// A simulated listener on `addr`, if this thread runs a simulation.
    pub(crate) fn simulated(addr: SocketAddr) -> Option<io::Result<TcpListener>> {
        Socket::open(Open::Listen(addr)).map(|sim| sim.map(TcpListener::Sim))
    }

    pub(crate) fn from_std(listener: std::net::TcpListener) -> TcpListener {
        TcpListener::Os(mio::net::TcpListener::from_std(listener))
    }

    pub(crate) fn local_addr(&self) -> io::Result<SocketAddr> {
        self.on(|os| os.local_addr(), |net, id| net.addr(id, false))
    }

    pub(crate) fn accept(&self) -> io::Result<(TcpStream, SocketAddr)> {
        match self {
            TcpListener::Os(os) => os.accept().map(|(s, addr)| (TcpStream::Os(s), addr)),
            TcpListener::Sim(sim) => sim.accept().map(|(s, addr)| (TcpStream::Sim(s), addr)),
        }
    }
}

impl UdpSocket {
    pub(crate) fn bind(addr: SocketAddr) -> io::Result<UdpSocket> {
        match Socket::open(Open::Udp(addr)) {
            Some(sim) => sim.map(UdpSocket::Sim),
            None => mio::net::UdpSocket::bind(addr).map(UdpSocket::Os),
        }
    }

    pub(crate) fn from_std(socket: std::net::UdpSocket) -> UdpSocket {
        UdpSocket::Os(mio::net::UdpSocket::from_std(socket))
    }

    pub(crate) fn local_addr(&self) -> io::Result<SocketAddr> {
        self.on(|os| os.local_addr(), |net, id| net.addr(id, false))
    }

    pub(crate) fn connect(&self, addr: SocketAddr) -> io::Result<()> {
        self.on(|os| os.connect(addr), |net, id| net.connect_udp(id, addr))
    }

    pub(crate) fn peer_addr(&self) -> io::Result<SocketAddr> {
        self.on(|os| os.peer_addr(), |net, id| net.addr(id, true))
    }

    pub(crate) fn recv_from(&self, buf: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        match self {
            UdpSocket::Os(os) => syscall::recv_from(os, buf),
            UdpSocket::Sim(sim) => sim.call(|net, id| net.recv_from(id, buf, false)),
        }
    }

    pub(crate) fn send_to(&self, buf: &[u8], to: SocketAddr) -> io::Result<usize> {
        self.on(
            |os| syscall::send_to(os, buf, to),
            |net, id| net.send_to(id, buf, to),
        )
    }

    /// One datagram from the connected peer.
    pub(crate) fn recv(&self, buf: &mut [u8]) -> io::Result<usize> {
        syscall::recv(self, buf)
    }

    /// One datagram to the connected peer.
    pub(crate) fn send(&self, buf: &[u8]) -> io::Result<usize> {
        syscall::send(self, buf)
    }

    /// `recv_from` with `MSG_PEEK`.
    pub(crate) fn peek_from(&self, buf: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        match self {
            UdpSocket::Os(os) => os.peek_from(buf),
            UdpSocket::Sim(sim) => sim.call(|net, id| net.recv_from(id, buf, true)),
        }
    }
}

#[cfg(test)]
mod tests {
    /// A socket type's field is one of these: a simulated socket must not
    /// make every OS socket bigger than mio's and a tag, so that a socket's
    /// registration (two `Arc`s and this) and an idle connection cost what
    /// they did before the simulation.
    #[test]
    fn an_os_or_simulated_socket_is_two_words_at_most() {
        assert!(
            std::mem::size_of::<super::TcpStream>()
                <= 8 + std::mem::size_of::<mio::net::TcpStream>()
        );
        assert_eq!(std::mem::size_of::<super::Socket>(), 4);
    }
}
