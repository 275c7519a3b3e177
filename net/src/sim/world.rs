//! A simulation's world, on the thread that runs it: the network, which
//! of its sockets has which reactor token, and the loop's seam
//! ([`Seam`], the runtime's `Backend`). [`Socket`] is a simulated socket
//! as `sys.rs`'s socket types hold one.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::io::{self, IoSlice};
use std::net::{Shutdown, SocketAddr};
use std::sync::Arc;
use std::task::Waker;
use std::time::Duration;

use ioloop_runtime::lock::Mutex;
use ioloop_runtime::sim::{self, Backend, Ready};
use mio::Token;

use super::network::{HostId, Network, SockId};

/// The world of the simulation running on this thread.
pub(crate) struct World {
    pub(crate) net: Network,
    /// Host `i`'s id; its tasks carry the tag `i + 1`.
    pub(crate) hosts: Vec<HostId>,
    /// Each registered socket's token.
    tokens: BTreeMap<SockId, Token>,
    /// Kept between polls, so reporting readiness does not allocate.
    changed: Vec<SockId>,
    /// The loop found nothing left to do (`Backend::stuck`).
    pub(crate) stuck: bool,
    /// The virtual time by which the run must be over, in nanoseconds
    /// since it began, and whether it has passed.
    pub(crate) deadline: Option<u64>,
    pub(crate) expired: bool,
    /// Woken when the loop is stuck or the deadline passes.
    pub(crate) on_stuck: Option<Waker>,
    /// The virtual time of the latest poll, in nanoseconds since the start.
    pub(crate) now: u64,
}

impl World {
    pub(crate) fn new(net: Network) -> Self {
        World {
            net,
            hosts: Vec::new(),
            tokens: BTreeMap::new(),
            changed: Vec::new(),
            stuck: false,
            deadline: None,
            expired: false,
            on_stuck: None,
            now: 0,
        }
    }
}

thread_local! {
    static CURRENT: RefCell<Option<Arc<Mutex<World>>>> = const { RefCell::new(None) };
}

/// Makes `world` this thread's until the guard drops.
pub(crate) fn enter(world: Arc<Mutex<World>>) -> impl Drop {
    struct Leave(Option<Arc<Mutex<World>>>);
    impl Drop for Leave {
        fn drop(&mut self) {
            CURRENT.set(self.0.take());
        }
    }
    Leave(CURRENT.replace(Some(world)))
}

/// The address of the simulated host named `name`: `None` if no
/// simulation runs on this thread, `Some(None)` if no host has the name.
pub(crate) fn lookup(name: &str) -> Option<Option<std::net::IpAddr>> {
    with(|world| {
        let localhost = (name == "localhost").then_some(std::net::Ipv4Addr::LOCALHOST.into());
        world.net.lookup(name).or(localhost)
    })
}

/// Whether a simulation runs on this thread.
pub(crate) fn running() -> bool {
    CURRENT.with_borrow(Option::is_some)
}

/// `f` on this thread's world; `None` if no simulation runs here.
pub(crate) fn with<R>(f: impl FnOnce(&mut World) -> R) -> Option<R> {
    CURRENT.with_borrow(|world| world.as_ref().map(|world| f(&mut world.lock())))
}

/// The loop's seam: the network's deliveries as readiness events.
pub(crate) struct Seam(pub(crate) Arc<Mutex<World>>);

impl Backend for Seam {
    fn poll(&mut self, now: Duration, events: &mut Vec<(Token, Ready)>) {
        let mut guard = self.0.lock();
        let world = &mut *guard;
        world.now = u64::try_from(now.as_nanos()).unwrap_or(u64::MAX);
        world.net.advance(world.now);
        let expired = world.deadline.is_some_and(|deadline| world.now >= deadline);
        let mut waker = None;
        if expired && !world.expired {
            world.expired = true;
            waker = world.on_stuck.take();
        }
        world.net.take_changed(&mut world.changed);
        for id in world.changed.drain(..) {
            let Some(&token) = world.tokens.get(&id) else {
                continue;
            };
            events.push((token, world.net.readiness(id)));
        }
        drop(guard);
        if let Some(waker) = waker {
            waker.wake();
        }
    }

    fn next_deadline(&self) -> Option<Duration> {
        self.0.lock().net.next_deadline().map(Duration::from_nanos)
    }

    fn stuck(&mut self) {
        let waker = {
            let mut world = self.0.lock();
            world.stuck = true;
            world.on_stuck.take()
        };
        if let Some(waker) = waker {
            waker.wake();
        }
    }
}

/// A simulated socket: its id in the network of the world on this thread.
/// Closed in the network when dropped.
#[derive(Debug)]
pub struct Socket(SockId);

/// What a simulated socket's calls return once its world is gone (the
/// simulation ended, or the socket went to another thread).
fn gone() -> io::Error {
    io::Error::new(
        io::ErrorKind::NotConnected,
        "ioloop: this simulated socket's simulation is not running on this thread",
    )
}

/// The error of a call the simulated network does not model.
pub(crate) fn not_simulated(what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::Unsupported,
        format!("ioloop: {what} is not simulated"),
    )
}

/// The host whose task is running: the one a new socket belongs to.
fn host(world: &World) -> io::Result<HostId> {
    let tag = sim::tag() as usize;
    world
        .hosts
        .get(tag.wrapping_sub(1))
        .copied()
        .ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::Unsupported,
                "ioloop: inside a simulation, sockets are opened by a host's tasks",
            )
        })
}

/// The listen backlog of a simulated listener, as `TcpListener::bind`'s.
const BACKLOG: usize = 1024;

/// The most slices a simulated vectored send takes: Linux's `UIO_MAXIOV`.
/// The network's own, not `syscall.rs`'s cut, which it checks.
const IOV_MAX: usize = 1024;

/// Every call is `#[cold]`: a simulated socket's path is kept out of the
/// OS sockets' calls it shares a `match` with (`syscall.rs`), which would
/// otherwise pay for it in registers.
impl Socket {
    /// Runs `open` on this thread's world for the running host, if a
    /// simulation runs here.
    #[cold]
    fn open(
        open: impl FnOnce(&mut Network, HostId) -> io::Result<SockId>,
    ) -> Option<io::Result<Socket>> {
        with(|world| {
            let host = host(world)?;
            open(&mut world.net, host).map(Socket)
        })
    }

    /// A connect begun to `to`.
    #[cold]
    pub(crate) fn connect(to: SocketAddr) -> Option<io::Result<Socket>> {
        Self::open(|net, host| net.connect(host, to))
    }

    /// A TCP listener on `addr`.
    #[cold]
    pub(crate) fn listen(addr: SocketAddr) -> Option<io::Result<Socket>> {
        Self::open(|net, host| {
            let id = net.tcp_bind(host, addr)?;
            net.listen(id, BACKLOG)?;
            Ok(id)
        })
    }

    /// A UDP socket bound to `addr`.
    #[cold]
    pub(crate) fn bind_udp(addr: SocketAddr) -> Option<io::Result<Socket>> {
        Self::open(|net, host| net.udp_bind(host, addr))
    }

    /// `f` on the network, with this socket's id.
    #[cold]
    fn call<R>(&self, f: impl FnOnce(&mut Network, SockId) -> io::Result<R>) -> io::Result<R> {
        with(|world| f(&mut world.net, self.0)).unwrap_or_else(|| Err(gone()))
    }

    #[cold]
    pub(crate) fn recv(&self, buf: &mut [u8]) -> io::Result<usize> {
        self.call(|net, id| net.recv(id, buf))
    }

    /// `recv` with `MSG_PEEK`.
    #[cold]
    pub(crate) fn peek(&self, buf: &mut [u8]) -> io::Result<usize> {
        self.call(|net, id| net.peek(id, buf))
    }

    #[cold]
    pub(crate) fn send(&self, buf: &[u8]) -> io::Result<usize> {
        self.call(|net, id| net.send(id, buf))
    }

    /// One `send` per buffer, until one takes less than it was given.
    /// More than `IOV_MAX` slices is the kernel's `EMSGSIZE`, whatever the
    /// socket: a caller that does not cut them fails here as on Linux.
    #[cold]
    pub(crate) fn send_vectored(&self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        if bufs.len() > IOV_MAX {
            return Err(super::errno::os(super::errno::EMSGSIZE));
        }
        let mut sent = 0;
        for buf in bufs.iter().filter(|buf| !buf.is_empty()) {
            match self.send(buf) {
                Ok(n) => {
                    sent += n;
                    if n < buf.len() {
                        break;
                    }
                }
                Err(err) if sent == 0 => return Err(err),
                Err(_) => break,
            }
        }
        Ok(sent)
    }

    #[cold]
    pub(crate) fn shutdown(&self, how: Shutdown) -> io::Result<()> {
        self.call(|net, id| net.shutdown(id, how))
    }

    #[cold]
    pub(crate) fn accept(&self) -> io::Result<(Socket, SocketAddr)> {
        self.call(|net, id| net.accept(id))
            .map(|(id, addr)| (Socket(id), addr))
    }

    #[cold]
    pub(crate) fn local_addr(&self) -> io::Result<SocketAddr> {
        self.call(|net, id| net.local_addr(id))
    }

    #[cold]
    pub(crate) fn peer_addr(&self) -> io::Result<SocketAddr> {
        self.call(|net, id| net.peer_addr(id))
    }

    #[cold]
    pub(crate) fn take_error(&self) -> io::Result<Option<io::Error>> {
        self.call(|net, id| net.take_error(id))
    }

    #[cold]
    pub(crate) fn connect_udp(&self, to: SocketAddr) -> io::Result<()> {
        self.call(|net, id| net.udp_connect(id, to))
    }

    #[cold]
    pub(crate) fn send_to(&self, buf: &[u8], to: SocketAddr) -> io::Result<usize> {
        self.call(|net, id| net.send_to(id, buf, to))
    }

    #[cold]
    pub(crate) fn recv_from(&self, buf: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        self.call(|net, id| net.recv_from(id, buf))
    }

    /// `recv_from` with `MSG_PEEK`.
    #[cold]
    pub(crate) fn peek_from(&self, buf: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
        self.call(|net, id| net.peek_from(id, buf))
    }

    /// Keeps the token the reactor gave this socket, for readiness.
    #[cold]
    pub(crate) fn register(&self, token: Token) -> io::Result<()> {
        with(|world| world.tokens.insert(self.0, token))
            .map(drop)
            .ok_or_else(gone)
    }

    #[cold]
    pub(crate) fn deregister(&self) -> io::Result<()> {
        with(|world| world.tokens.remove(&self.0))
            .map(drop)
            .ok_or_else(gone)
    }
}

impl Drop for Socket {
    fn drop(&mut self) {
        with(|world| {
            world.tokens.remove(&self.0);
            // A socket the network already forgot (reset and reaped) is
            // closed already.
            let _ = world.net.close(self.0);
        });
    }
}

#[cfg(test)]
mod tests {
    use std::io::{self, IoSlice};

    use ioloop_runtime::sim::Rng;

    use super::{IOV_MAX, Socket};
    use crate::sim::network::{NetConfig, Network};

    #[test]
    fn more_slices_than_iov_max_is_emsgsize_as_on_linux() -> io::Result<()> {
        // A socket of a world not running here: within the limit, the call
        // gets as far as the world (and finds it gone); past it, the
        // kernel's check comes first.
        let mut net = Network::new(Rng::new(0), NetConfig::default());
        let host = net.add_host("a")?;
        let socket = Socket(net.udp_bind(host, "0.0.0.0:9".parse().expect("an address"))?);
        for (count, emsgsize) in [(IOV_MAX - 1, false), (IOV_MAX, false), (IOV_MAX + 1, true)] {
            let err = socket
                .send_vectored(&vec![IoSlice::new(b"x"); count])
                .expect_err("no world runs here");
            assert_eq!(
                err.raw_os_error() == Some(libc::EMSGSIZE),
                emsgsize,
                "{count} slices: {err}"
            );
        }
        Ok(())
    }
}
