//! A simulation's world, on the thread that runs it: the network, which
//! of its sockets has which reactor token, and the two seams it fills:
//! the loop's ([`Seam`], the runtime's `Backend`) and the sockets'
//! ([`Sockets`], net's `seam::Network`).

use std::collections::BTreeMap;
use std::io::{self, IoSlice};
use std::net::{IpAddr, Shutdown, SocketAddr};
use std::rc::Rc;
use std::sync::Arc;
use std::task::Waker;
use std::time::Duration;

use ioloop_net::seam::{self, Open};
use ioloop_runtime::lock::Mutex;
use ioloop_runtime::seam::{self as rt_seam, Backend, Ready};
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
    /// Polls in a row that found the clock where the one before left it.
    still: u64,
    /// How many such polls make a livelock, and whether there was one: the
    /// loop turns, its tasks run, and virtual time stands.
    pub(crate) progress_bound: u64,
    pub(crate) livelock: bool,
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
            still: 0,
            progress_bound: u64::MAX,
            livelock: false,
        }
    }
}

/// Makes `world`'s network where this thread's new sockets go, until the
/// guard drops.
pub(crate) fn enter(world: Arc<Mutex<World>>) -> impl Drop {
    seam::enter(Rc::new(Sockets(world)))
}

/// The loop's seam: the network's deliveries as readiness events.
pub(crate) struct Seam(pub(crate) Arc<Mutex<World>>);

impl Backend for Seam {
    fn poll(&mut self, now: Duration, events: &mut Vec<(Token, Ready)>) {
        let mut guard = self.0.lock();
        let world = &mut *guard;
        let now = u64::try_from(now.as_nanos()).unwrap_or(u64::MAX);
        world.still = if now == world.now { world.still + 1 } else { 0 };
        world.now = now;
        world.net.advance(world.now);
        let expired = world.deadline.is_some_and(|deadline| world.now >= deadline);
        let livelock = world.still > world.progress_bound;
        let mut waker = None;
        if expired && !world.expired || livelock && !world.livelock {
            world.expired |= expired;
            world.livelock |= livelock;
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

/// The host whose task is running: the one a new socket belongs to.
fn host(world: &World) -> io::Result<HostId> {
    let tag = rt_seam::tag() as usize;
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

/// The sockets' seam: each call on the network, with the socket's id.
pub(crate) struct Sockets(Arc<Mutex<World>>);

impl Sockets {
    /// `f` on the network, with the socket numbered `id`.
    fn on<R>(&self, id: u32, f: impl FnOnce(&mut Network, SockId) -> R) -> R {
        f(&mut self.0.lock().net, SockId(id))
    }
}

impl seam::Network for Sockets {
    fn lookup(&self, name: &str) -> Option<IpAddr> {
        self.0.lock().net.lookup(name)
    }

    fn open(&self, open: Open) -> io::Result<u32> {
        let mut world = self.0.lock();
        let host = host(&world)?;
        let net = &mut world.net;
        let id = match open {
            Open::Connect(to) => net.connect(host, to)?,
            Open::Listen(addr) => {
                let id = net.tcp_bind(host, addr)?;
                net.listen(id, BACKLOG)?;
                id
            }
            Open::Udp(addr) => net.udp_bind(host, addr)?,
        };
        Ok(id.0)
    }

    fn recv(&self, id: u32, buf: &mut [u8], peek: bool) -> io::Result<usize> {
        self.on(id, |net, id| {
            if peek {
                net.peek(id, buf)
            } else {
                net.recv(id, buf)
            }
        })
    }

    fn send(&self, id: u32, buf: &[u8]) -> io::Result<usize> {
        self.on(id, |net, id| net.send(id, buf))
    }

    /// One `send` per buffer, until one takes less than it was given.
    /// More than `IOV_MAX` slices is the kernel's `EMSGSIZE`, whatever the
    /// socket: a caller that does not cut them fails here as on Linux.
    fn send_vectored(&self, id: u32, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        if bufs.len() > IOV_MAX {
            return Err(super::errno::os(super::errno::EMSGSIZE));
        }
        let mut sent = 0;
        for buf in bufs.iter().filter(|buf| !buf.is_empty()) {
            match self.send(id, buf) {
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

    fn recv_from(&self, id: u32, buf: &mut [u8], peek: bool) -> io::Result<(usize, SocketAddr)> {
        self.on(id, |net, id| {
            if peek {
                net.peek_from(id, buf)
            } else {
                net.recv_from(id, buf)
            }
        })
    }

    fn send_to(&self, id: u32, buf: &[u8], to: SocketAddr) -> io::Result<usize> {
        self.on(id, |net, id| net.send_to(id, buf, to))
    }

    fn connect_udp(&self, id: u32, to: SocketAddr) -> io::Result<()> {
        self.on(id, |net, id| net.udp_connect(id, to))
    }

    fn shutdown(&self, id: u32, how: Shutdown) -> io::Result<()> {
        self.on(id, |net, id| net.shutdown(id, how))
    }

    fn accept(&self, id: u32) -> io::Result<(u32, SocketAddr)> {
        let (id, from) = self.on(id, |net, id| net.accept(id))?;
        Ok((id.0, from))
    }

    fn addr(&self, id: u32, peer: bool) -> io::Result<SocketAddr> {
        self.on(id, |net, id| {
            if peer {
                net.peer_addr(id)
            } else {
                net.local_addr(id)
            }
        })
    }

    fn take_error(&self, id: u32) -> io::Result<Option<io::Error>> {
        self.on(id, |net, id| net.take_error(id))
    }

    fn register(&self, id: u32, token: Option<Token>) {
        let tokens = &mut self.0.lock().tokens;
        match token {
            Some(token) => tokens.insert(SockId(id), token),
            None => tokens.remove(&SockId(id)),
        };
    }

    fn close(&self, id: u32) {
        let mut world = self.0.lock();
        world.tokens.remove(&SockId(id));
        // A socket the network already forgot (reset and reaped) is
        // closed already.
        let _ = world.net.close(SockId(id));
    }
}

#[cfg(test)]
mod tests {
    use std::io::{self, IoSlice};
    use std::sync::Arc;

    use ioloop_net::seam::Network as _;
    use ioloop_runtime::lock::Mutex;
    use ioloop_runtime::seam::Rng;

    use super::{IOV_MAX, Seam, Sockets, World};
    use crate::network::{NetConfig, Network};
    use ioloop_runtime::seam::Backend;
    use std::time::Duration;

    #[test]
    fn more_slices_than_iov_max_is_emsgsize_as_on_linux() -> io::Result<()> {
        // An unconnected UDP socket: within the limit, the first send
        // fails with "no destination"; past it, the kernel's check comes
        // first.
        let mut net = Network::new(Rng::new(0), NetConfig::default());
        let host = net.add_host("a")?;
        let id = net.udp_bind(host, "0.0.0.0:9".parse().expect("an address"))?;
        let sockets = Sockets(Arc::new(Mutex::new(World::new(net))));
        for (count, emsgsize) in [(IOV_MAX - 1, false), (IOV_MAX, false), (IOV_MAX + 1, true)] {
            let err = sockets
                .send_vectored(id.0, &vec![IoSlice::new(b"x"); count])
                .expect_err("an unconnected socket sends nowhere");
            assert_eq!(
                err.raw_os_error() == Some(libc::EMSGSIZE),
                emsgsize,
                "{count} slices: {err}"
            );
        }
        Ok(())
    }

    #[test]
    fn the_progress_bound_is_passed_at_its_count_plus_one_polls_at_one_instant() {
        let world = World::new(Network::new(Rng::new(0), NetConfig::default()));
        let world = Arc::new(Mutex::new(World {
            progress_bound: 3,
            ..world
        }));
        let mut seam = Seam(world.clone());
        let mut events = Vec::new();
        let mut livelock_after = |polls: u32, at: u64| {
            for _ in 0..polls {
                seam.poll(Duration::from_nanos(at), &mut events);
            }
            world.lock().livelock
        };
        // The clock starts at 0: each poll at 0 finds it standing.
        assert!(!livelock_after(2, 0), "2 polls (bound - 1)");
        assert!(!livelock_after(1, 0), "3 polls (the bound)");
        // Time moves: the count starts again.
        assert!(!livelock_after(1, 5), "a poll at a later instant");
        assert!(!livelock_after(3, 5), "3 more at that instant");
        assert!(livelock_after(1, 5), "4 (bound + 1)");
    }
}
