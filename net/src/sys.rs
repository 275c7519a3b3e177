//! The sockets under `TcpStream`, `TcpListener` and `UdpSocket`: the OS's
//! (mio's), or, inside a simulation, the simulated network's
//! (`seam::Socket`). This is the one place that tells them apart:
//! each call is a `match` here or in `syscall.rs`, and no socket type
//! knows which kind it holds. A new socket is simulated if it is opened
//! on a thread running a simulation. (Unix sockets are always the OS's.)

use std::io::{self, IoSliceMut, Read};
use std::net::{Shutdown, SocketAddr};
#[cfg(unix)]
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, RawFd};

use mio::event::Source;
use mio::{Interest, Registry, Token};
use socket2::SockRef;

use crate::seam::{Open, Socket};
use crate::syscall::{self, Simulated, Target};

/// What a simulated socket answers where the OS's would give its
/// descriptor: it has none.
#[cfg(unix)]
#[track_caller]
fn no_fd() -> ! {
    panic!("ioloop: a simulated socket has no file descriptor")
}

/// `Source`, `AsFd`, `AsRawFd` and `Simulated` for an enum of an OS
/// socket and a simulated one.
macro_rules! either {
    ($T:ident) => {
        impl Source for $T {
            fn register(&mut self, r: &Registry, t: Token, i: Interest) -> io::Result<()> {
                match self {
                    $T::Os(os) => os.register(r, t, i),
                    $T::Sim(sim) => sim.register(Some(t)),
                }
            }

            fn reregister(&mut self, r: &Registry, t: Token, i: Interest) -> io::Result<()> {
                match self {
                    $T::Os(os) => os.reregister(r, t, i),
                    $T::Sim(sim) => sim.register(Some(t)),
                }
            }

            fn deregister(&mut self, r: &Registry) -> io::Result<()> {
                match self {
                    $T::Os(os) => os.deregister(r),
                    $T::Sim(sim) => sim.register(None),
                }
            }
        }

        #[cfg(unix)]
        impl AsFd for $T {
            fn as_fd(&self) -> BorrowedFd<'_> {
                match self {
                    $T::Os(os) => os.as_fd(),
                    $T::Sim(_) => no_fd(),
                }
            }
        }

        #[cfg(unix)]
        impl AsRawFd for $T {
            fn as_raw_fd(&self) -> RawFd {
                self.as_fd().as_raw_fd()
            }
        }

        impl Simulated for $T {
            #[inline(always)]
            fn target(&self) -> Target<'_> {
                match self {
                    $T::Os(os) => Target::Os(os.as_fd()),
                    $T::Sim(sim) => Target::Sim(sim),
                }
            }
        }

        impl $T {
            /// The OS socket, for its options; `None` if simulated.
            pub(crate) fn os(&self) -> Option<SockRef<'_>> {
                match self {
                    $T::Os(os) => Some(SockRef::from(os)),
                    $T::Sim(_) => None,
                }
            }

            pub(crate) fn local_addr(&self) -> io::Result<SocketAddr> {
                match self {
                    $T::Os(os) => os.local_addr(),
                    $T::Sim(sim) => sim.call(|net, id| net.addr(id, false)),
                }
            }
        }
    };
}

/// A TCP connection.
#[derive(Debug)]
pub enum TcpStream {
    /// The OS's.
    Os(mio::net::TcpStream),
    /// The simulated network's.
    Sim(Socket),
}

either!(TcpStream);

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

    pub(crate) fn peer_addr(&self) -> io::Result<SocketAddr> {
        match self {
            TcpStream::Os(os) => os.peer_addr(),
            TcpStream::Sim(sim) => sim.call(|net, id| net.addr(id, true)),
        }
    }

    pub(crate) fn take_error(&self) -> io::Result<Option<io::Error>> {
        match self {
            TcpStream::Os(os) => os.take_error(),
            TcpStream::Sim(sim) => sim.call(|net, id| net.take_error(id)),
        }
    }

    pub(crate) fn shutdown(&self, how: Shutdown) -> io::Result<()> {
        match self {
            TcpStream::Os(os) => os.shutdown(how),
            TcpStream::Sim(sim) => sim.call(|net, id| net.shutdown(id, how)),
        }
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
impl Read for &TcpStream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        syscall::recv(*self, buf)
    }

    fn read_vectored(&mut self, bufs: &mut [IoSliceMut<'_>]) -> io::Result<usize> {
        match self {
            TcpStream::Os(os) => (&*os).read_vectored(bufs),
            // One buffer at a time: each read is a `recv`.
            TcpStream::Sim(sim) => match bufs.iter_mut().find(|buf| !buf.is_empty()) {
                Some(buf) => sim.call(|net, id| net.recv(id, buf, false)),
                None => Ok(0),
            },
        }
    }
}

/// A TCP listener.
#[derive(Debug)]
pub enum TcpListener {
    /// The OS's.
    Os(mio::net::TcpListener),
    /// The simulated network's.
    Sim(Socket),
}

either!(TcpListener);

impl TcpListener {
    /// A simulated listener on `addr`, if this thread runs a simulation.
    pub(crate) fn simulated(addr: SocketAddr) -> Option<io::Result<TcpListener>> {
        Socket::open(Open::Listen(addr)).map(|sim| sim.map(TcpListener::Sim))
    }

    pub(crate) fn from_std(listener: std::net::TcpListener) -> TcpListener {
        TcpListener::Os(mio::net::TcpListener::from_std(listener))
    }

    pub(crate) fn accept(&self) -> io::Result<(TcpStream, SocketAddr)> {
        match self {
            TcpListener::Os(os) => os.accept().map(|(s, addr)| (TcpStream::Os(s), addr)),
            TcpListener::Sim(sim) => sim.accept().map(|(s, addr)| (TcpStream::Sim(s), addr)),
        }
    }
}

/// A UDP socket.
#[derive(Debug)]
pub enum UdpSocket {
    /// The OS's.
    Os(mio::net::UdpSocket),
    /// The simulated network's.
    Sim(Socket),
}

either!(UdpSocket);

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

    pub(crate) fn connect(&self, addr: SocketAddr) -> io::Result<()> {
        match self {
            UdpSocket::Os(os) => os.connect(addr),
            UdpSocket::Sim(sim) => sim.call(|net, id| net.connect_udp(id, addr)),
        }
    }

    pub(crate) fn peer_addr(&self) -> io::Result<SocketAddr> {
        match self {
            UdpSocket::Os(os) => os.peer_addr(),
            UdpSocket::Sim(sim) => sim.call(|net, id| net.addr(id, true)),
        }
    }

    pub(crate) fn recv_from(&self, buf: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        match self {
            UdpSocket::Os(os) => syscall::recv_from(os, buf),
            UdpSocket::Sim(sim) => sim.call(|net, id| net.recv_from(id, buf, false)),
        }
    }

    pub(crate) fn send_to(&self, buf: &[u8], target: SocketAddr) -> io::Result<usize> {
        match self {
            UdpSocket::Os(os) => syscall::send_to(os, buf, target),
            UdpSocket::Sim(sim) => sim.call(|net, id| net.send_to(id, buf, target)),
        }
    }

    /// One datagram from the connected peer.
    pub(crate) fn recv(&self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            UdpSocket::Os(os) => syscall::recv_datagram(os, buf),
            UdpSocket::Sim(sim) => sim.call(|net, id| net.recv(id, buf, false)),
        }
    }

    /// One datagram to the connected peer.
    pub(crate) fn send(&self, buf: &[u8]) -> io::Result<usize> {
        match self {
            UdpSocket::Os(os) => syscall::send_datagram(os, buf),
            UdpSocket::Sim(sim) => sim.call(|net, id| net.send(id, buf)),
        }
    }

    /// `recv_from` with `MSG_PEEK`.
    pub(crate) fn peek_from(&self, buf: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        match self {
            UdpSocket::Os(os) => os.peek_from(buf),
            UdpSocket::Sim(sim) => sim.call(|net, id| net.recv_from(id, buf, true)),
        }
    }
}

macro_rules! os_socket {
    ($($T:ident),+) => {$(
        impl crate::options::OsSocket for $T {
            fn os_socket(&self) -> Option<SockRef<'_>> {
                self.os()
            }
        }
    )+};
}
os_socket!(TcpStream, TcpListener, UdpSocket);

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
