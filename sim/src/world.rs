//! A simulation's world, on the thread that runs it: the network, which
//! of its sockets has which reactor token, and the two seams it fills:
//! the loop's ([`Seam`], the runtime's `Backend`) and the sockets'
//! ([`Sockets`], net's `seam::Network`).

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::io::{self, IoSlice};
use std::net::{IpAddr, Shutdown, SocketAddr};
use std::os::unix::net::SocketAddr as UnixAddr;
use std::rc::Rc;
use std::sync::Arc;
use std::task::Waker;
use std::time::Duration;

use ioloop_net::seam::{self, Open};
use ioloop_runtime::lock::Mutex;
use ioloop_runtime::seam::{self as rt_seam, Backend, RareHook, RarePoint, Ready};
use mio::Token;

use super::errno::{EAGAIN, ECONNABORTED, ECONNREFUSED, EMFILE, os};
use super::network::{HostId, Network, SockId};
use super::rare::{Point, RARE_POINTS, Rare};
use super::unix::Names;

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
    /// The run's rare paths, enabled and counted.
    pub(crate) rare: Rare,
    /// The Unix sockets' names.
    unix: Names,
}

impl World {
    pub(crate) fn new(net: Network, rare: Rare) -> Self {
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
            rare,
            unix: Names::default(),
        }
    }

    /// Whether `point` fires now; if it does, the trace says so, on `sock`
    /// if it is one's, and with `again` its readiness is reported again at
    /// the next poll.
    fn rare(&mut self, point: Point, sock: Option<SockId>, again: bool) -> bool {
        let fires = self.rare.fire(point);
        if fires {
            self.net.rare(RARE_POINTS[point as usize], sock, again);
        }
        fires
    }

    /// If `point` fires, `most` cut short (1 to `most - 1`), traced and
    /// reported again as [`rare`](Self::rare) does.
    fn short(&mut self, point: Point, sock: SockId, most: usize) -> Option<usize> {
        let n = self.rare.short(point, most)?;
        self.net.rare(RARE_POINTS[point as usize], Some(sock), true);
        Some(n)
    }
}

thread_local! {
    /// The world running on this thread, for the core's rare points.
    static RUNNING: RefCell<Option<Arc<Mutex<World>>>> = const { RefCell::new(None) };
}

/// The core's rare points, answered by the world running on this thread.
fn core_hook(point: RarePoint) -> bool {
    RUNNING.with_borrow(|world| {
        world
            .as_ref()
            .is_some_and(|world| world.lock().rare(point.into(), None, false))
    })
}

/// What [`enter`] replaced, put back when it drops.
struct Entered<G> {
    _sockets: G,
    hook: Option<RareHook>,
    world: Option<Arc<Mutex<World>>>,
}

impl<G> Drop for Entered<G> {
    fn drop(&mut self) {
        rt_seam::set_rare_hook(self.hook.take());
        RUNNING.set(self.world.take());
    }
}

/// Makes `world`'s network where this thread's new sockets go, and `world`
/// the one that answers the core's rare points, until the guard drops.
pub(crate) fn enter(world: Arc<Mutex<World>>) -> impl Drop {
    Entered {
        _sockets: seam::enter(Rc::new(Sockets(world.clone()))),
        hook: rt_seam::set_rare_hook(Some(core_hook)),
        world: RUNNING.replace(Some(world)),
    }
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
        world.spurious(events);
        drop(guard);
        if let Some(waker) = waker {
            waker.wake();
        }
    }

    /// Now, if readiness waits to be reported (a rare answer's `again`):
    /// the loop must poll for it before it may find itself stuck.
    fn next_deadline(&self) -> Option<Duration> {
        let world = self.0.lock();
        let due = world.net.next_deadline();
        let due = if world.net.has_changed() {
            Some(world.now)
        } else {
            due
        };
        due.map(Duration::from_nanos)
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

impl World {
    /// The spurious events a kernel may report (as epoll's documentation
    /// warns): one for a registered socket with a bit that its state does
    /// not justify (the library's call then meets a genuine `WouldBlock`
    /// and waits again), and one with no change at all.
    fn spurious(&mut self, events: &mut Vec<(Token, Ready)>) {
        for point in [Point::SpuriousReadiness, Point::SpuriousWake] {
            if self.tokens.is_empty() || !self.rare.fire(point) {
                continue;
            }
            let nth = self.rare.below(self.tokens.len());
            let (&id, &token) = self.tokens.iter().nth(nth).expect("a registered socket");
            let mut ready = self.net.readiness(id);
            if point == Point::SpuriousReadiness {
                let readable = self.rare.below(2) == 0;
                ready.readable |= readable;
                ready.writable |= !readable;
            }
            self.net.rare(RARE_POINTS[point as usize], Some(id), false);
            events.push((token, ready));
        }
    }
}

/// The host whose task is running: the one a new socket belongs to.
fn host(world: &World) -> io::Result<HostId> {
    let tag = crate::seeded::tag() as usize;
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

// The rare answers below are a kernel's too. A `WouldBlock` with bytes,
// datagrams or connections queued, or a read or write cut short, hides
// what the socket still holds or has room for; with edge-triggered
// readiness, a real kernel leaves a correct program waiting only if no new
// edge comes, and one would (the next segment, the next ACK). So the
// world reports the socket's readiness again at the next poll (`again`):
// the library must wait for it, and not spin nor hang.

impl seam::Network for Sockets {
    fn lookup(&self, name: &str) -> Option<IpAddr> {
        self.0.lock().net.lookup(name)
    }

    fn open(&self, open: Open) -> io::Result<u32> {
        let mut world = self.0.lock();
        let host = host(&world)?;
        // Fault-like: the caller sees the refusal, as from a port with no one.
        if matches!(open, Open::Connect(_)) && world.rare(Point::ConnectRefused, None, false) {
            return Err(os(ECONNREFUSED));
        }
        let World { net, unix, .. } = &mut *world;
        let listen = |net: &mut Network, addr| {
            let id = net.tcp_bind(host, addr)?;
            net.listen(id, BACKLOG)?;
            Ok(id)
        };
        let id = match open {
            Open::Connect(to) => net.connect(host, to)?,
            Open::Listen(addr) => listen(net, addr)?,
            Open::Udp(addr) => net.udp_bind(host, addr)?,
            // Bound to a port no one is told: reached by its path alone.
            Open::UnixListen(addr) => {
                let ip = net.ip(host);
                unix.listen(host, addr, || listen(net, SocketAddr::new(ip, 0)))?
            }
            Open::UnixConnect(addr) => {
                let listener = unix.listener(host, addr)?;
                let (client, server) = net.connect_local(host, Some(listener))?;
                unix.connected(client, server, Some(listener));
                client
            }
        };
        Ok(id.0)
    }

    fn unix_pair(&self) -> io::Result<(u32, u32)> {
        let mut world = self.0.lock();
        let host = host(&world)?;
        let (a, b) = world.net.connect_local(host, None)?;
        world.unix.connected(a, b, None);
        Ok((a.0, b.0))
    }

    fn unix_addr(&self, id: u32, peer: bool) -> io::Result<UnixAddr> {
        self.0.lock().unix.addr(SockId(id), peer)
    }

    fn recv(&self, id: u32, buf: &mut [u8], peek: bool) -> io::Result<usize> {
        let (world, id) = (&mut *self.0.lock(), SockId(id));
        if peek {
            return world.net.peek(id, buf);
        }
        let (waiting, stream) = world.net.waiting(id);
        if waiting > 0 && world.rare(Point::RecvWouldBlock, Some(id), true) {
            return Err(os(EAGAIN));
        }
        let most = if stream { waiting.min(buf.len()) } else { 0 };
        let n = world.short(Point::RecvShort, id, most).unwrap_or(buf.len());
        world.net.recv(id, &mut buf[..n])
    }

    fn send(&self, id: u32, buf: &[u8]) -> io::Result<usize> {
        let (world, id) = (&mut *self.0.lock(), SockId(id));
        let room = world.net.room(id).min(buf.len());
        if room > 0 && world.rare(Point::SendWouldBlock, Some(id), true) {
            return Err(os(EAGAIN));
        }
        let n = world.short(Point::SendShort, id, room).unwrap_or(buf.len());
        world.net.send(id, &buf[..n])
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
        let (world, id) = (&mut *self.0.lock(), SockId(id));
        if peek {
            return world.net.peek_from(id, buf);
        }
        if world.net.waiting(id).0 > 0 && world.rare(Point::RecvWouldBlock, Some(id), true) {
            return Err(os(EAGAIN));
        }
        world.net.recv_from(id, buf)
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

    /// Besides `WouldBlock`, `accept`'s two errors that leave the queue as
    /// it was: `EMFILE` (out of descriptors: the connection stays queued)
    /// and `ECONNABORTED` (one that was aborted while queued; the real one
    /// stays). The library absorbs both (`net/src/tcp/accept.rs`), backing
    /// off or skipping, and readiness stays set, so no new edge is needed.
    fn accept(&self, id: u32) -> io::Result<(u32, SocketAddr)> {
        let (world, id) = (&mut *self.0.lock(), SockId(id));
        if world.net.waiting(id).0 > 0 {
            if world.rare(Point::AcceptWouldBlock, Some(id), true) {
                return Err(os(EAGAIN));
            }
            if world.rare(Point::AcceptEmfile, Some(id), false) {
                return Err(os(EMFILE));
            }
            if world.rare(Point::AcceptAborted, Some(id), false) {
                return Err(os(ECONNABORTED));
            }
        }
        let (id, from) = world.net.accept(id)?;
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

    /// A socket registered when it is ready already (an accepted one whose
    /// bytes and FIN came while it was queued) has its readiness reported
    /// at the next poll, as `epoll_ctl`'s `EPOLL_CTL_ADD` queues an event
    /// for a ready descriptor: a registration's first guess (readable and
    /// writable) knows nothing of a FIN.
    fn register(&self, id: u32, token: Option<Token>) {
        let (world, id) = (&mut *self.0.lock(), SockId(id));
        match token {
            Some(token) => {
                world.tokens.insert(id, token);
                if world.net.readiness(id) != Ready::default() {
                    world.net.report(id);
                }
            }
            None => {
                world.tokens.remove(&id);
            }
        }
    }

    fn close(&self, id: u32) {
        let mut world = self.0.lock();
        world.tokens.remove(&SockId(id));
        world.unix.close(SockId(id));
        // A socket the network already forgot (reset and reaped) is
        // closed already.
        let _ = world.net.close(SockId(id));
    }
}

#[cfg(test)]
mod tests {
    use std::io::{self, IoSlice};
    use std::sync::Arc;

    use crate::rng::Rng;
    use ioloop_net::seam::Network as _;
    use ioloop_runtime::lock::Mutex;

    use super::{IOV_MAX, Seam, Sockets, World};
    use crate::network::{NetConfig, Network};
    use crate::rare::Rare;
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
        let sockets = Sockets(Arc::new(Mutex::new(World::new(
            net,
            Rare::new(Rng::new(0), false, false, &[]),
        ))));
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
        let net = Network::new(Rng::new(0), NetConfig::default());
        let world = World::new(net, Rare::new(Rng::new(0), false, false, &[]));
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
