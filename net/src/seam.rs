//! The seam where a socket's system calls go when they do not go to the
//! kernel: a simulated network ([`Network`]), installed on a thread for as
//! long as a simulation runs there ([`enter`]). This crate holds no
//! simulated network: `ioloop-sim` implements the trait, and `sys.rs`'s
//! socket types hold a [`Socket`], a number the network gave, where they
//! would hold a descriptor.
//!
//! A socket opened on a thread with a network installed is that
//! network's; any other is the OS's. Unix streams and their listeners are
//! simulated as TCP's are; a Unix datagram socket is always the OS's, and
//! inside a simulation making one fails as not simulated.

use std::cell::RefCell;
use std::io::{self, IoSlice};
use std::net::{IpAddr, Shutdown, SocketAddr};
#[cfg(unix)]
use std::os::unix::net::SocketAddr as UnixAddr;
use std::rc::Rc;

use mio::Token;

/// A simulated network, as the sockets of one thread reach it. Each call
/// is the system call of the same name on the socket numbered `id`, and
/// fails as the kernel's would, kind and code.
pub trait Network {
    /// The address of the host named `name`; `None` if none has it.
    fn lookup(&self, name: &str) -> Option<IpAddr>;
    /// Opens a socket for the host whose task is running: a TCP connect
    /// begun, a TCP listener, a bound UDP socket, a Unix stream's connect
    /// begun or a Unix listener.
    fn open(&self, open: Open<'_>) -> io::Result<u32>;
    /// Two connected Unix streams of the running host, as
    /// `socketpair(2)` makes.
    #[cfg(unix)]
    fn unix_pair(&self) -> io::Result<(u32, u32)>;
    /// A Unix stream's or listener's own address, or with `peer` its
    /// peer's (unnamed for a connecting stream's own, an accepted one's
    /// peer and both of a pair's, as the kernel's).
    #[cfg(unix)]
    fn unix_addr(&self, id: u32, peer: bool) -> io::Result<UnixAddr>;
    /// Reads bytes, or with `peek` copies them and leaves them.
    fn recv(&self, id: u32, buf: &mut [u8], peek: bool) -> io::Result<usize>;
    /// Sends bytes (a datagram, on a connected UDP socket).
    fn send(&self, id: u32, buf: &[u8]) -> io::Result<usize>;
    /// Sends from several buffers, as `sendmsg(2)` does.
    fn send_vectored(&self, id: u32, bufs: &[IoSlice<'_>]) -> io::Result<usize>;
    /// One datagram and its sender, or with `peek` a copy of it.
    fn recv_from(&self, id: u32, buf: &mut [u8], peek: bool) -> io::Result<(usize, SocketAddr)>;
    /// One datagram to `to`.
    fn send_to(&self, id: u32, buf: &[u8], to: SocketAddr) -> io::Result<usize>;
    /// Connects a UDP socket to `to`.
    fn connect_udp(&self, id: u32, to: SocketAddr) -> io::Result<()>;
    /// Shuts a stream down in one direction or both.
    fn shutdown(&self, id: u32, how: Shutdown) -> io::Result<()>;
    /// A connection taken from a listener's backlog, and its peer.
    fn accept(&self, id: u32) -> io::Result<(u32, SocketAddr)>;
    /// The socket's own address, or with `peer` its peer's.
    fn addr(&self, id: u32, peer: bool) -> io::Result<SocketAddr>;
    /// The error pending on the socket (`SO_ERROR`), taken.
    fn take_error(&self, id: u32) -> io::Result<Option<io::Error>>;
    /// Reports the socket's readiness under `token` from now on; `None`:
    /// no more.
    fn register(&self, id: u32, token: Option<Token>);
    /// Closes the socket.
    fn close(&self, id: u32);
}

/// What [`Network::open`] opens.
#[derive(Clone, Copy, Debug)]
pub enum Open<'a> {
    /// A TCP connect begun to this address.
    Connect(SocketAddr),
    /// A TCP listener on this address.
    Listen(SocketAddr),
    /// A UDP socket bound to this address.
    Udp(SocketAddr),
    /// A Unix stream's connect begun to the listener at this address.
    #[cfg(unix)]
    UnixConnect(&'a UnixAddr),
    /// A Unix stream listener at this address: a path, or on Linux an
    /// abstract name.
    #[cfg(unix)]
    UnixListen(&'a UnixAddr),
}

thread_local! {
    static CURRENT: RefCell<Option<Rc<dyn Network>>> = const { RefCell::new(None) };
}

/// Makes `network` where this thread's new sockets go until the guard
/// drops (then the one before it, if any).
pub fn enter(network: Rc<dyn Network>) -> impl Drop {
    struct Leave(Option<Rc<dyn Network>>);
    impl Drop for Leave {
        fn drop(&mut self) {
            CURRENT.set(self.0.take());
        }
    }
    Leave(CURRENT.replace(Some(network)))
}

/// This thread's network, if a simulation runs here.
fn current() -> Option<Rc<dyn Network>> {
    CURRENT.with_borrow(Clone::clone)
}

/// Whether a simulation runs on this thread.
pub(crate) fn running() -> bool {
    CURRENT.with_borrow(Option::is_some)
}

/// The address of the simulated host named `name`: `None` if no
/// simulation runs on this thread, `Some(None)` if no host has the name.
pub(crate) fn lookup(name: &str) -> Option<Option<IpAddr>> {
    let localhost = (name == "localhost").then_some(std::net::Ipv4Addr::LOCALHOST.into());
    current().map(|net| net.lookup(name).or(localhost))
}

/// The error of a call the simulated network does not model.
pub(crate) fn not_simulated(what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::Unsupported,
        format!("ioloop: {what} is not simulated"),
    )
}

/// A simulated socket: its number in the network of the thread that
/// opened it. Closed there when dropped.
///
/// Every call is `#[cold]` and out of line: a simulated socket's path is
/// kept out of the OS sockets' calls it shares a `match` with
/// (`syscall.rs`), which would otherwise pay for it in registers.
#[derive(Debug)]
pub struct Socket(u32);

impl Socket {
    /// Opens a socket in this thread's network, if a simulation runs here.
    #[cold]
    pub(crate) fn open(open: Open<'_>) -> Option<io::Result<Socket>> {
        current().map(|net| net.open(open).map(Socket))
    }

    /// Two connected Unix streams, if a simulation runs here.
    #[cfg(unix)]
    #[cold]
    pub(crate) fn unix_pair() -> Option<io::Result<(Socket, Socket)>> {
        current().map(|net| net.unix_pair().map(|(a, b)| (Socket(a), Socket(b))))
    }

    /// `f` on this thread's network, with this socket's number; fails as
    /// `NotConnected` once the simulation is gone (or on another thread).
    #[cold]
    #[inline(never)]
    pub(crate) fn call<R>(
        &self,
        f: impl FnOnce(&dyn Network, u32) -> io::Result<R>,
    ) -> io::Result<R> {
        match current() {
            Some(net) => f(&*net, self.0),
            None => Err(io::Error::new(
                io::ErrorKind::NotConnected,
                "ioloop: this simulated socket's simulation is not running on this thread",
            )),
        }
    }

    /// A connection accepted from this listener.
    #[cold]
    pub(crate) fn accept(&self) -> io::Result<(Socket, SocketAddr)> {
        let (id, from) = self.call(|net, id| net.accept(id))?;
        Ok((Socket(id), from))
    }

    /// Reports readiness under `token` (`None`: no more).
    #[cold]
    pub(crate) fn register(&self, token: Option<Token>) -> io::Result<()> {
        self.call(|net, id| {
            net.register(id, token);
            Ok(())
        })
    }
}

impl Drop for Socket {
    fn drop(&mut self) {
        if let Some(net) = current() {
            net.close(self.0);
        }
    }
}
