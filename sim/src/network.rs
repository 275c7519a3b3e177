//! The simulated network: named hosts, TCP connections and UDP datagrams
//! as a plain, deterministic state machine. No runtime, no sockets, no
//! futures: the caller makes BSD-like calls (non-blocking, Linux's error
//! kinds), moves the virtual clock with [`Network::advance`], and learns
//! which sockets became ready from [`Network::take_changed`]. Every
//! choice (latency, how bytes are cut into segments, faults) is drawn
//! from one seeded [`Rng`], so the same seed and calls replay exactly.
//!
//! TCP is modelled as a byte stream per direction: a sender's buffer
//! holds its bytes until they reach the receiver's buffer; segments are
//! cut only while the receiver has room (flow control), travel one
//! latency, never overtake each other, and are held (retransmitted from
//! the first undelivered byte) while a partition or a stopped host cuts
//! the path. Window updates and acknowledgements are instant.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, Shutdown, SocketAddr};
use std::ops::Range;

use ioloop_runtime::seam as rt_seam;

use crate::rng::{Rng, TraceHash};

use super::errno::{
    EADDRINUSE, EADDRNOTAVAIL, EAGAIN, EBADF, ECONNREFUSED, ECONNRESET, EDESTADDRREQ, EINVAL,
    EMSGSIZE, ENOTCONN, EPIPE, Errno, os,
};

/// The first host's address; the next ones count up from it.
const FIRST_HOST: Ipv4Addr = Ipv4Addr::new(127, 0, 0, 2);
/// Ports handed out for port 0, per host: the IANA dynamic range.
const EPHEMERAL: Range<u16> = 49152..u16::MAX;
/// Linux's first SYN retransmission timeout (1 s), doubled on each retry.
const SYN_RTO: u64 = 1_000_000_000;
/// The most bytes a UDP datagram carries over IPv4.
const MAX_DATAGRAM: usize = 65_507;
/// A UDP socket's receive buffer: Linux's default (`net.core.rmem_default`).
const UDP_RECV_BUFFER: usize = 212_992;
/// Trace lines kept for a failure report (all are hashed).
const TRACE_LINES: usize = 256;

/// How the network behaves; times are virtual nanoseconds.
#[derive(Clone, Debug)]
pub(crate) struct NetConfig {
    /// One-way latency, drawn per segment or datagram.
    pub latency: Range<u64>,
    /// The largest TCP segment; each is cut at a random size up to it.
    pub max_segment: usize,
    /// A TCP socket's send buffer, in bytes.
    pub send_buffer: usize,
    /// A TCP socket's receive buffer, in bytes.
    pub recv_buffer: usize,
    /// A UDP socket's receive buffer, in bytes: what its queued datagrams
    /// may be charged ([`charge`]).
    pub udp_recv_buffer: usize,
    /// The faults drawn on their own (all off by default).
    pub faults: Faults,
}

impl Default for NetConfig {
    fn default() -> Self {
        NetConfig {
            latency: 50_000..2_000_000,
            max_segment: 1460,
            send_buffer: 64 * 1024,
            recv_buffer: 64 * 1024,
            udp_recv_buffer: UDP_RECV_BUFFER,
            faults: Faults::default(),
        }
    }
}

/// Chances of faults, each in `0.0..=1.0`.
#[derive(Clone, Debug, Default)]
pub(crate) struct Faults {
    /// That a delivered TCP segment resets its connection instead.
    pub reset: f64,
    /// That a UDP datagram is lost.
    pub udp_loss: f64,
    /// That a UDP datagram arrives twice.
    pub udp_duplicate: f64,
    /// That a UDP datagram's latency ignores the ones sent before it.
    pub udp_reorder: f64,
}

/// A host of the network.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct HostId(usize);

/// A socket of the network (never reused).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct SockId(pub(crate) u32);

/// A socket's readiness, as epoll reports it: the runtime's, which the
/// loop's seam takes as it is. Readable: bytes, a datagram, a connection,
/// end of stream or an error to read; writable: room to send (or a send
/// that would fail at once); read closed: the peer's FIN arrived, we shut
/// reading, or the connection broke; write closed: we shut writing, or
/// the connection broke; error: one waits for `take_error`.
pub(crate) use ioloop_runtime::seam::Ready;

struct Host {
    name: String,
    up: bool,
    next_port: u16,
}

struct Sock {
    host: HostId,
    /// The address it sends from: its host's, if it was bound to the
    /// unspecified address or to 127.0.0.1.
    local: SocketAddr,
    /// Bound to the unspecified address, which `local_addr` reports, as
    /// the kernel does.
    wildcard: bool,
    /// Closed by its user: kept only until its FIN is delivered.
    closed: bool,
    /// In `changed` since the last `take_changed`.
    flagged: bool,
    kind: Kind,
}

enum Kind {
    Bound,
    Listener {
        backlog: usize,
        queue: VecDeque<SockId>,
    },
    Stream(Box<Stream>),
    Udp(Udp),
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    Connecting,
    Connected,
    /// Refused or reset.
    Broken,
}

struct Stream {
    state: State,
    remote: SocketAddr,
    peer: Option<SockId>,
    /// The error pending (`SO_ERROR`), reported by the next call.
    err: Option<Errno>,
    /// Sent bytes not yet delivered; the first `in_flight` are on the wire.
    out: VecDeque<u8>,
    in_flight: usize,
    input: VecDeque<u8>,
    /// Our half of the handshake (SYN, or SYN-ACK) is on the wire / arrived.
    ctl_out: bool,
    ctl_done: bool,
    /// Writing is shut: a FIN follows the bytes.
    fin_queued: bool,
    fin_out: bool,
    fin_done: bool,
    peer_fin: bool,
    read_shut: bool,
    /// Bumped when what is on the wire is dropped: stale segments are ignored.
    epoch: u64,
    /// The due time of our last segment: the next is never earlier.
    last_due: u64,
    syn_rto: u64,
    /// Within one host, as a Unix stream is ([`Network::connect_local`]):
    /// no reset fault breaks it.
    local: bool,
}

impl Stream {
    fn new(state: State, remote: SocketAddr, peer: Option<SockId>) -> Box<Self> {
        Box::new(Stream {
            state,
            remote,
            peer,
            err: None,
            out: VecDeque::new(),
            in_flight: 0,
            input: VecDeque::new(),
            ctl_out: false,
            ctl_done: false,
            fin_queued: false,
            fin_out: false,
            fin_done: false,
            peer_fin: false,
            read_shut: false,
            epoch: 0,
            last_due: 0,
            syn_rto: SYN_RTO,
            local: false,
        })
    }

    /// Drops what is on the wire, to send it again when the path opens.
    fn rewind(&mut self) {
        self.in_flight = 0;
        self.ctl_out &= self.ctl_done;
        self.fin_out = self.fin_done;
        self.epoch += 1;
    }

    /// The connection is over for good: both FINs went through (the
    /// kernel's `TCP_CLOSE`, after `TIME_WAIT` or `LAST_ACK`).
    fn finished(&self) -> bool {
        self.fin_done && self.peer_fin
    }

    /// A reset came in: what we had to send is dropped, what we received
    /// stays.
    fn break_with(&mut self, err: Option<Errno>) {
        self.rewind();
        self.state = State::Broken;
        self.err = err;
        self.out.clear();
    }
}

#[derive(Default)]
struct Udp {
    queue: VecDeque<(SocketAddr, Vec<u8>)>,
    /// What the queued datagrams are charged ([`charge`]).
    queued: usize,
    connected: Option<SocketAddr>,
    /// The error pending: a refusal that came back to a connected socket.
    err: Option<Errno>,
    last_due: u64,
}

/// What a queued datagram of `len` bytes costs its socket's receive
/// buffer, as Linux charges it (its `sk_buff`'s truesize): the bytes and
/// 320 bytes of headroom in the smallest power-of-two allocation that
/// holds them (whole 4 KiB pages past 32 KiB), plus 256 bytes of
/// `sk_buff`. Measured on Linux 6.18's loopback with the default 212,992
/// bytes, a socket that reads nothing keeps 166 datagrams of 500 bytes,
/// 92 of 1,400, 48 of 2,000, 12 of 8,000 or 16,000, 6 of 32,000 and 3 of
/// 65,507, as this does; and 256 of 100 bytes or less, where this keeps
/// 277.
fn charge(len: usize) -> usize {
    let need = len + 320;
    let alloc = if need <= 32 * 1024 {
        need.next_power_of_two()
    } else {
        len.next_multiple_of(4096)
    };
    alloc + 256
}

#[derive(Clone, Copy)]
enum Seg {
    Syn,
    SynAck,
    Data(usize),
    Fin,
}

enum Event {
    Tcp {
        from: SockId,
        epoch: u64,
        seg: Seg,
    },
    Rst {
        from: SocketAddr,
        to: SockId,
    },
    SynRetry {
        sock: SockId,
        epoch: u64,
    },
    Udp {
        from: SocketAddr,
        to: SocketAddr,
        data: Vec<u8>,
    },
    /// A port unreachable: the datagram `from` sent to `to` found no one.
    Refused {
        from: SocketAddr,
        to: SocketAddr,
    },
}

/// The simulated network. See the module's documentation.
pub(crate) struct Network {
    rng: Rng,
    config: NetConfig,
    now: u64,
    hosts: Vec<Host>,
    partitions: BTreeSet<(HostId, HostId)>,
    socks: BTreeMap<SockId, Sock>,
    next_sock: u32,
    tcp_ports: BTreeMap<(HostId, u16), SockId>,
    udp_ports: BTreeMap<(HostId, u16), SockId>,
    /// In-flight deliveries by (due time, sequence number).
    events: BTreeMap<(u64, u64), Event>,
    /// Resets that met a cut path: sent again when a path opens, as the
    /// peer's retransmissions would draw them.
    held_rsts: Vec<(SocketAddr, SockId)>,
    seq: u64,
    changed: Vec<SockId>,
    trace: VecDeque<String>,
    hash: TraceHash,
    /// Every trace line so far, with the schedule's hash when it was
    /// traced, while the determinism check records a run (`steps`).
    steps: Option<Vec<Step>>,
}

/// One step of a run, as the determinism check compares two: a trace line
/// (`<virtual ns> <what>`) and the hash of the order the loop ran its jobs
/// in up to it, so a run whose tasks ran in another order between the
/// same two events diverges at the second.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Step {
    pub(crate) line: String,
    pub(crate) schedule: u64,
}

/// A socket the network does not know (already closed).
fn no_socket() -> io::Error {
    os(EBADF)
}

impl Network {
    /// An empty network at time 0 drawing every choice from `rng`.
    pub(crate) fn new(rng: Rng, config: NetConfig) -> Self {
        Network {
            rng,
            config,
            now: 0,
            hosts: Vec::new(),
            partitions: BTreeSet::new(),
            socks: BTreeMap::new(),
            next_sock: 0,
            tcp_ports: BTreeMap::new(),
            udp_ports: BTreeMap::new(),
            events: BTreeMap::new(),
            held_rsts: Vec::new(),
            seq: 0,
            changed: Vec::new(),
            trace: VecDeque::new(),
            hash: TraceHash::new(),
            steps: None,
        }
    }

    /// Keeps every step from now on, for [`take_steps`](Self::take_steps).
    pub(crate) fn record_steps(&mut self) {
        self.steps = Some(Vec::new());
    }

    /// The steps kept since `record_steps` (none if it was not called).
    pub(crate) fn take_steps(&mut self) -> Vec<Step> {
        self.steps.take().unwrap_or_default()
    }

    // ---- hosts and faults -------------------------------------------------

    /// Adds a host; hosts get 127.0.0.2, 127.0.0.3, ... in order.
    pub(crate) fn add_host(&mut self, name: &str) -> io::Result<HostId> {
        if self.lookup(name).is_some() {
            return Err(io::ErrorKind::AlreadyExists.into());
        }
        self.hosts.push(Host {
            name: name.to_owned(),
            up: true,
            next_port: EPHEMERAL.start,
        });
        Ok(HostId(self.hosts.len() - 1))
    }

    /// The address of `host`.
    pub(crate) fn ip(&self, host: HostId) -> IpAddr {
        Ipv4Addr::from(u32::from(FIRST_HOST) + host.0 as u32).into()
    }

    /// The address of the host named `name`.
    pub(crate) fn lookup(&self, name: &str) -> Option<IpAddr> {
        let i = self.hosts.iter().position(|h| h.name == name)?;
        Some(self.ip(HostId(i)))
    }

    /// Cuts the path between `a` and `b` until [`heal`](Self::heal).
    pub(crate) fn partition(&mut self, a: HostId, b: HostId) {
        self.trace(format!("partition {} {}", self.name(a), self.name(b)));
        self.partitions.insert((a.min(b), a.max(b)));
    }

    /// Restores the path between `a` and `b`; held TCP bytes flow again.
    pub(crate) fn heal(&mut self, a: HostId, b: HostId) {
        self.trace(format!("heal {} {}", self.name(a), self.name(b)));
        self.partitions.remove(&(a.min(b), a.max(b)));
        self.pump_all();
    }

    /// Notes in the trace that `host` crashed (its tasks are aborted, and
    /// its sockets close as they drop) or restarted.
    pub(crate) fn note_host(&mut self, host: HostId, what: &str) {
        self.trace(format!("{what} {}", self.name(host)));
    }

    /// Stops `host`: nothing reaches it and it sends nothing.
    pub(crate) fn stop_host(&mut self, host: HostId) {
        self.trace(format!("stop {}", self.name(host)));
        self.hosts[host.0].up = false;
    }

    /// Starts a stopped `host` again; held TCP bytes flow again.
    pub(crate) fn start_host(&mut self, host: HostId) {
        self.trace(format!("start {}", self.name(host)));
        self.hosts[host.0].up = true;
        self.pump_all();
    }

    /// Breaks `sock`'s connection abortively: both ends see
    /// `ConnectionReset` (the peer once the RST arrives).
    #[cfg_attr(
        not(test),
        allow(dead_code, reason = "the harness resets by chance, per segment")
    )]
    pub(crate) fn reset(&mut self, sock: SockId) {
        self.abort(sock, Some(ECONNRESET));
    }

    // ---- time, readiness and trace ----------------------------------------

    /// When the earliest in-flight delivery is due.
    pub(crate) fn next_deadline(&self) -> Option<u64> {
        self.events.first_key_value().map(|(&(due, _), _)| due)
    }

    /// Delivers everything due at or before `now`, in (due, sequence)
    /// order, and sets the network's clock to `now`.
    pub(crate) fn advance(&mut self, now: u64) {
        while let Some(entry) = self.events.first_entry() {
            if entry.key().0 > now {
                break;
            }
            let ((due, _), event) = entry.remove_entry();
            self.now = due;
            match event {
                Event::Tcp { from, epoch, seg } => self.deliver(from, epoch, seg),
                Event::Rst { from, to } => self.deliver_rst(from, to),
                Event::SynRetry { sock, epoch } => {
                    if let Some(s) = self.stream_mut(sock).filter(|s| s.epoch == epoch) {
                        s.ctl_out = s.ctl_done;
                        self.pump(sock);
                    }
                }
                Event::Udp { from, to, data } => self.deliver_udp(from, to, data),
                Event::Refused { from, to } => self.deliver_refusal(from, to),
            }
        }
        self.now = self.now.max(now);
    }

    /// `sock`'s readiness now (nothing for an unknown socket).
    pub(crate) fn readiness(&self, sock: SockId) -> Ready {
        match self.socks.get(&sock).map(|s| &s.kind) {
            Some(Kind::Listener { queue, .. }) => Ready {
                readable: !queue.is_empty(),
                ..Ready::default()
            },
            Some(Kind::Udp(u)) => Ready {
                readable: !u.queue.is_empty() || u.err.is_some(),
                writable: true,
                error: u.err.is_some(),
                ..Ready::default()
            },
            Some(Kind::Stream(s)) => {
                let broken = s.state == State::Broken;
                let read_closed = s.peer_fin || s.read_shut || broken;
                let room = s.out.len() < self.config.send_buffer;
                Ready {
                    readable: !s.input.is_empty() || read_closed,
                    writable: (s.state == State::Connected && room) || s.fin_queued || broken,
                    read_closed,
                    write_closed: s.fin_queued || broken,
                    error: s.err.is_some(),
                }
            }
            _ => Ready::default(),
        }
    }

    /// Appends the sockets whose readiness went up since the last call
    /// (new bytes, room, a connection, connected, FIN, reset, an error),
    /// each once, in the order it happened.
    pub(crate) fn take_changed(&mut self, out: &mut Vec<SockId>) {
        for id in self.changed.drain(..) {
            if let Some(sock) = self.socks.get_mut(&id) {
                sock.flagged = false;
                out.push(id);
            }
        }
    }

    /// Reports `sock`'s readiness at the next `take_changed`.
    pub(crate) fn report(&mut self, sock: SockId) {
        self.notify(sock);
    }

    /// Whether a socket's readiness waits for `take_changed`.
    pub(crate) fn has_changed(&self) -> bool {
        !self.changed.is_empty()
    }

    /// The running FNV-1a hash of every trace line so far.
    pub(crate) fn trace_hash(&self) -> TraceHash {
        self.hash
    }

    /// The last `n` trace lines (at most 256 are kept), oldest first.
    pub(crate) fn recent(&self, n: usize) -> impl Iterator<Item = &str> {
        let skip = self.trace.len().saturating_sub(n);
        self.trace.iter().skip(skip).map(String::as_str)
    }

    // ---- rare paths (`rare.rs`) --------------------------------------------

    /// What `sock` holds for its user to take: a stream's bytes (`true`), or
    /// the datagrams, connections or pending error of another (`false`).
    pub(crate) fn waiting(&self, sock: SockId) -> (usize, bool) {
        match self.socks.get(&sock).map(|s| &s.kind) {
            Some(Kind::Stream(s)) => (s.input.len(), true),
            Some(Kind::Udp(u)) => (u.queue.len() + usize::from(u.err.is_some()), false),
            Some(Kind::Listener { queue, .. }) => (queue.len(), false),
            _ => (0, false),
        }
    }

    /// The bytes a `send` on `sock` would take now: 0 unless it is a
    /// stream whose send would succeed.
    pub(crate) fn room(&self, sock: SockId) -> usize {
        match self.conn(sock) {
            Some((_, s)) if s.state == State::Connected && s.err.is_none() && !s.fin_queued => {
                self.config.send_buffer.saturating_sub(s.out.len())
            }
            _ => 0,
        }
    }

    /// Records in the trace that the rare path `name` was taken on `sock`,
    /// and, if `again`, reports its readiness at the next poll, as a new
    /// edge would (the rare answer hid what the socket still holds).
    pub(crate) fn rare(&mut self, name: &str, sock: Option<SockId>, again: bool) {
        match sock {
            Some(id) => self.trace(format!("rare {name} #{}", id.0)),
            None => self.trace(format!("rare {name}")),
        }
        if let Some(id) = sock.filter(|_| again) {
            self.notify(id);
        }
    }

    // ---- TCP --------------------------------------------------------------

    /// Binds a TCP socket on `host` (port 0: an ephemeral one).
    pub(crate) fn tcp_bind(&mut self, host: HostId, addr: SocketAddr) -> io::Result<SockId> {
        let local = self.bind_addr(host, addr, false)?;
        let id = self.insert(host, local, Kind::Bound);
        self.tcp_ports.insert((host, local.port()), id);
        self.mark_wildcard(id, addr);
        Ok(id)
    }

    /// Makes a bound socket listen; like Linux, `backlog + 1` connections
    /// may wait for `accept`, and SYNs past that are dropped.
    pub(crate) fn listen(&mut self, sock: SockId, backlog: usize) -> io::Result<()> {
        let s = self.socks.get_mut(&sock).ok_or_else(no_socket)?;
        match &mut s.kind {
            Kind::Bound => {
                let queue = VecDeque::new();
                s.kind = Kind::Listener { backlog, queue };
            }
            Kind::Listener { backlog: b, .. } => *b = backlog,
            _ => return Err(os(EINVAL)),
        }
        Ok(())
    }

    /// Starts connecting a new socket on `host` to `to`; it becomes
    /// writable once connected, or reports `ConnectionRefused`.
    pub(crate) fn connect(&mut self, host: HostId, to: SocketAddr) -> io::Result<SockId> {
        let local = self.bind_addr(host, SocketAddr::new(self.ip(host), 0), false)?;
        let remote = SocketAddr::new(self.resolve(host, to.ip()), to.port());
        let stream = Stream::new(State::Connecting, remote, None);
        let id = self.insert(host, local, Kind::Stream(stream));
        self.tcp_ports.insert((host, local.port()), id);
        self.trace(format!("connect {} > {}", self.at(local), self.at(remote)));
        self.pump(id);
        Ok(id)
    }

    /// A connection within `host` made at once, as a Unix stream's
    /// `connect(2)` makes one: two connected sockets, the second queued
    /// on `listener`, or with `None` a pair, as `socketpair(2)` makes;
    /// `EAGAIN` if the listener's backlog is full, as Linux's.
    pub(crate) fn connect_local(
        &mut self,
        host: HostId,
        listener: Option<SockId>,
    ) -> io::Result<(SockId, SockId)> {
        if let Some(l) = listener {
            match &self.socks.get(&l).ok_or_else(no_socket)?.kind {
                Kind::Listener { backlog, queue } if queue.len() > *backlog => {
                    return Err(os(EAGAIN));
                }
                Kind::Listener { .. } => {}
                _ => return Err(os(ECONNREFUSED)),
            }
        }
        let mut ends = [(SockId(0), SocketAddr::new(self.ip(host), 0)); 2];
        for end in &mut ends {
            let at = self.bind_addr(host, SocketAddr::new(self.ip(host), 0), false)?;
            *end = (self.insert(host, at, Kind::Bound), at);
            self.tcp_ports.insert((host, at.port()), end.0);
        }
        let [(a, a_at), (b, b_at)] = ends;
        for (id, remote, peer) in [(a, b_at, b), (b, a_at, a)] {
            let mut s = Stream::new(State::Connected, remote, Some(peer));
            (s.ctl_out, s.ctl_done, s.local) = (true, true, true);
            self.socks.get_mut(&id).expect("inserted").kind = Kind::Stream(s);
        }
        if let Some(Kind::Listener { queue, .. }) = listener
            .and_then(|l| self.socks.get_mut(&l))
            .map(|s| &mut s.kind)
        {
            queue.push_back(b);
        }
        self.trace(format!(
            "connect local {} > {}",
            self.at(a_at),
            self.at(b_at)
        ));
        if let Some(l) = listener {
            self.notify(l);
        }
        Ok((a, b))
    }

    /// Takes a queued connection and its peer's address.
    pub(crate) fn accept(&mut self, sock: SockId) -> io::Result<(SockId, SocketAddr)> {
        let s = self.socks.get_mut(&sock).ok_or_else(no_socket)?;
        let Kind::Listener { queue, .. } = &mut s.kind else {
            return Err(os(EINVAL));
        };
        let (id, local) = (queue.pop_front().ok_or_else(|| os(EAGAIN))?, s.local);
        let remote = self.conn(id).map_or(local, |(_, s)| s.remote);
        self.trace(format!("accept {} < {}", self.at(local), self.at(remote)));
        Ok((id, remote))
    }

    /// Copies what fits of `buf` into the send buffer (a connected UDP
    /// socket sends it as one datagram; an unconnected one has nowhere to
    /// send it, `EDESTADDRREQ`).
    pub(crate) fn send(&mut self, sock: SockId, buf: &[u8]) -> io::Result<usize> {
        // A Unix stream's peer that closed is gone at once: no reset to
        // wait for, as a TCP writer does.
        let gone = |p: &SockId| self.socks.get(p).is_none_or(|p| p.closed);
        if self
            .conn(sock)
            .is_some_and(|(_, s)| s.local && s.peer.is_none_or(|p| gone(&p)))
        {
            return Err(os(EPIPE));
        }
        let s = self.socks.get_mut(&sock).ok_or_else(no_socket)?;
        let s = match &mut s.kind {
            Kind::Stream(s) => s,
            Kind::Udp(u) => {
                let to = u.connected.ok_or_else(|| os(EDESTADDRREQ))?;
                return self.send_datagram(sock, buf, to);
            }
            _ => return Err(os(ENOTCONN)),
        };
        if let Some(err) = s.err.take() {
            return Err(os(err));
        }
        match s.state {
            State::Broken => return Err(os(EPIPE)),
            _ if s.fin_queued => return Err(os(EPIPE)),
            State::Connecting => return Err(os(EAGAIN)),
            State::Connected => {}
        }
        let n = buf
            .len()
            .min(self.config.send_buffer.saturating_sub(s.out.len()));
        if n == 0 && !buf.is_empty() {
            return Err(os(EAGAIN));
        }
        s.out.extend(&buf[..n]);
        self.pump(sock);
        Ok(n)
    }

    /// Reads received bytes; 0 at end of stream (a connected UDP socket
    /// reads one datagram).
    pub(crate) fn recv(&mut self, sock: SockId, buf: &mut [u8]) -> io::Result<usize> {
        self.read(sock, buf, false)
    }

    /// Copies received bytes without taking them (`MSG_PEEK`): what the
    /// next `recv` would return (a UDP socket's next datagram).
    pub(crate) fn peek(&mut self, sock: SockId, buf: &mut [u8]) -> io::Result<usize> {
        self.read(sock, buf, true)
    }

    /// `recv`, or with `peek`, `recv` with `MSG_PEEK`.
    fn read(&mut self, sock: SockId, buf: &mut [u8], peek: bool) -> io::Result<usize> {
        let s = self.socks.get_mut(&sock).ok_or_else(no_socket)?;
        let s = match &mut s.kind {
            Kind::Stream(s) => s,
            Kind::Udp(_) => return self.datagram(sock, buf, peek).map(|(n, _)| n),
            _ => return Err(os(ENOTCONN)),
        };
        // Like Linux (`tcp_recvmsg`): bytes received before a reset stay
        // readable; then, after the peer's FIN, the end (the error is left
        // for a write, or `SO_ERROR`); else the error, once; then the end.
        // A peek takes the error too, as the kernel's does.
        if s.input.is_empty() {
            if s.peer_fin {
                return Ok(0);
            }
            if let Some(err) = s.err.take() {
                return Err(os(err));
            }
            let end = s.read_shut || s.state == State::Broken;
            return if end { Ok(0) } else { Err(os(EAGAIN)) };
        }
        let n = buf.len().min(s.input.len());
        for (to, from) in buf.iter_mut().zip(s.input.range(..n)) {
            *to = *from;
        }
        if peek {
            return Ok(n);
        }
        s.input.drain(..n);
        // The room made lets the peer send more (window updates are instant).
        if let Some(peer) = s.peer {
            self.pump(peer);
        }
        Ok(n)
    }

    /// Shuts reading, writing (a FIN after the queued bytes) or both;
    /// `ENOTCONN` once the connection is over (reset, or both FINs went
    /// through).
    pub(crate) fn shutdown(&mut self, sock: SockId, how: Shutdown) -> io::Result<()> {
        let s = self
            .stream_mut(sock)
            .filter(|s| s.state == State::Connected && !s.finished());
        let s = s.ok_or_else(|| os(ENOTCONN))?;
        s.read_shut |= how != Shutdown::Write;
        s.fin_queued |= how != Shutdown::Read;
        self.notify(sock);
        self.pump(sock);
        Ok(())
    }

    /// Closes `sock`. A connection sends its FIN after the queued bytes,
    /// or, like Linux, a reset if received bytes were left unread.
    pub(crate) fn close(&mut self, sock: SockId) -> io::Result<()> {
        let s = self.socks.get_mut(&sock).ok_or_else(no_socket)?;
        s.closed = true;
        match &mut s.kind {
            Kind::Stream(s) if s.state == State::Connected && !s.input.is_empty() => {
                self.abort(sock, None)
            }
            Kind::Stream(s) if s.state == State::Connected && !s.fin_done => {
                s.fin_queued = true;
                self.pump(sock);
            }
            Kind::Listener { queue, .. } => {
                let queue = std::mem::take(queue);
                self.remove(sock);
                for id in queue {
                    if let Some(s) = self.socks.get_mut(&id) {
                        s.closed = true;
                    }
                    self.abort(id, None);
                }
            }
            _ => self.remove(sock),
        }
        Ok(())
    }

    /// The address `sock` is bound to (the unspecified address if it was
    /// bound to it, as the kernel reports).
    pub(crate) fn local_addr(&self, sock: SockId) -> io::Result<SocketAddr> {
        let s = self.socks.get(&sock).ok_or_else(no_socket)?;
        Ok(if s.wildcard {
            SocketAddr::new(Ipv4Addr::UNSPECIFIED.into(), s.local.port())
        } else {
            s.local
        })
    }

    /// The address of a connected socket's peer: `ENOTCONN` before the
    /// connection is made and once it is over, as the kernel's
    /// `getpeername`.
    pub(crate) fn peer_addr(&self, sock: SockId) -> io::Result<SocketAddr> {
        match &self.socks.get(&sock).ok_or_else(no_socket)?.kind {
            Kind::Stream(s) if s.state == State::Connected && !s.finished() => Ok(s.remote),
            Kind::Udp(Udp {
                connected: Some(to),
                ..
            }) => Ok(*to),
            _ => Err(os(ENOTCONN)),
        }
    }

    /// Takes `sock`'s pending error (SO_ERROR).
    pub(crate) fn take_error(&mut self, sock: SockId) -> io::Result<Option<io::Error>> {
        let err = match &mut self.socks.get_mut(&sock).ok_or_else(no_socket)?.kind {
            Kind::Stream(s) => s.err.take(),
            Kind::Udp(u) => u.err.take(),
            _ => None,
        };
        Ok(err.map(os))
    }

    // ---- UDP --------------------------------------------------------------

    /// Binds a UDP socket on `host` (port 0: an ephemeral one).
    pub(crate) fn udp_bind(&mut self, host: HostId, addr: SocketAddr) -> io::Result<SockId> {
        let local = self.bind_addr(host, addr, true)?;
        let id = self.insert(host, local, Kind::Udp(Udp::default()));
        self.udp_ports.insert((host, local.port()), id);
        self.mark_wildcard(id, addr);
        Ok(id)
    }

    /// Notes that `id` was bound to `addr`, if that is the unspecified
    /// address.
    fn mark_wildcard(&mut self, id: SockId, addr: SocketAddr) {
        if let Some(s) = self.socks.get_mut(&id) {
            s.wildcard = addr.ip().is_unspecified();
        }
    }

    /// Sets the UDP socket's default destination, and receives only from it.
    pub(crate) fn udp_connect(&mut self, sock: SockId, to: SocketAddr) -> io::Result<()> {
        let s = self.socks.get(&sock).ok_or_else(no_socket)?;
        let to = SocketAddr::new(self.resolve(s.host, to.ip()), to.port());
        match &mut self.socks.get_mut(&sock).ok_or_else(no_socket)?.kind {
            Kind::Udp(u) => u.connected = Some(to),
            _ => return Err(os(EINVAL)),
        }
        Ok(())
    }

    /// Sends `buf` to `to`: as on Linux, port 0 is `EINVAL` (a socket
    /// connected to port 0 sends there, into the void).
    pub(crate) fn send_to(
        &mut self,
        sock: SockId,
        buf: &[u8],
        to: SocketAddr,
    ) -> io::Result<usize> {
        if to.port() == 0 {
            return Err(os(EINVAL));
        }
        self.send_datagram(sock, buf, to)
    }

    /// Sends `buf` as one datagram: accepted, then delivered after a
    /// latency, or lost or duplicated as the faults say. As on Linux, a
    /// datagram too long for IPv4 is `EMSGSIZE`, and a refusal pending on
    /// the socket fails this send (which sends nothing).
    fn send_datagram(&mut self, sock: SockId, buf: &[u8], to: SocketAddr) -> io::Result<usize> {
        let s = self.socks.get_mut(&sock).ok_or_else(no_socket)?;
        let (host, from) = (s.host, s.local);
        let Kind::Udp(u) = &mut s.kind else {
            return Err(os(EINVAL));
        };
        if buf.len() > MAX_DATAGRAM {
            return Err(os(EMSGSIZE));
        }
        if let Some(err) = u.err.take() {
            return Err(os(err));
        }
        let to = SocketAddr::new(self.resolve(host, to.ip()), to.port());
        let faults = &self.config.faults;
        let copies = if !self.open(from.ip(), to.ip()) || self.rng.chance(faults.udp_loss) {
            0
        } else if self.rng.chance(faults.udp_duplicate) {
            2
        } else {
            1
        };
        let fate = ["lost", "sent", "duplicated"][copies];
        self.trace(format!(
            "udp {} > {} {} {fate}",
            self.at(from),
            self.at(to),
            buf.len()
        ));
        for _ in 0..copies {
            let mut due = self.now + self.latency();
            let in_order = !self.rng.chance(self.config.faults.udp_reorder);
            if let Some(Kind::Udp(u)) = self.socks.get_mut(&sock).map(|s| &mut s.kind)
                && in_order
            {
                due = due.max(u.last_due);
                u.last_due = due;
            }
            let data = buf.to_vec();
            self.push(due, Event::Udp { from, to, data });
        }
        Ok(buf.len())
    }

    /// Takes the next datagram, truncated to `buf` like Linux, and its
    /// sender; a refusal pending on the socket is reported first.
    pub(crate) fn recv_from(
        &mut self,
        sock: SockId,
        buf: &mut [u8],
    ) -> io::Result<(usize, SocketAddr)> {
        self.datagram(sock, buf, false)
    }

    /// `recv_from` with `MSG_PEEK`: the datagram stays queued.
    pub(crate) fn peek_from(
        &mut self,
        sock: SockId,
        buf: &mut [u8],
    ) -> io::Result<(usize, SocketAddr)> {
        self.datagram(sock, buf, true)
    }

    /// `recv_from`, or with `peek`, `recv_from` with `MSG_PEEK`.
    fn datagram(
        &mut self,
        sock: SockId,
        buf: &mut [u8],
        peek: bool,
    ) -> io::Result<(usize, SocketAddr)> {
        let s = self.socks.get_mut(&sock).ok_or_else(no_socket)?;
        let Kind::Udp(u) = &mut s.kind else {
            return Err(os(EINVAL));
        };
        if let Some(err) = u.err.take() {
            return Err(os(err));
        }
        let (from, data) = u.queue.front().ok_or_else(|| os(EAGAIN))?;
        let (from, n) = (*from, buf.len().min(data.len()));
        buf[..n].copy_from_slice(&data[..n]);
        if !peek {
            let (_, data) = u.queue.pop_front().expect("a datagram");
            u.queued -= charge(data.len());
        }
        Ok((n, from))
    }

    // ---- the machine ------------------------------------------------------

    fn insert(&mut self, host: HostId, local: SocketAddr, kind: Kind) -> SockId {
        let id = SockId(self.next_sock);
        self.next_sock += 1;
        let (closed, flagged, wildcard) = (false, false, false);
        self.socks.insert(
            id,
            Sock {
                host,
                local,
                wildcard,
                closed,
                flagged,
                kind,
            },
        );
        id
    }

    fn remove(&mut self, id: SockId) {
        let Some(s) = self.socks.remove(&id) else {
            return;
        };
        let ports = match s.kind {
            Kind::Udp(_) => &mut self.udp_ports,
            _ => &mut self.tcp_ports,
        };
        let key = (s.host, s.local.port());
        if ports.get(&key) == Some(&id) {
            ports.remove(&key);
        }
    }

    /// A stream socket and its connection state.
    fn conn(&self, id: SockId) -> Option<(&Sock, &Stream)> {
        let sock = self.socks.get(&id)?;
        match &sock.kind {
            Kind::Stream(s) => Some((sock, s)),
            _ => None,
        }
    }

    fn stream_mut(&mut self, id: SockId) -> Option<&mut Stream> {
        match &mut self.socks.get_mut(&id)?.kind {
            Kind::Stream(s) => Some(s),
            _ => None,
        }
    }

    fn host_of(&self, ip: IpAddr) -> Option<HostId> {
        let IpAddr::V4(ip) = ip else { return None };
        let i = u32::from(ip).checked_sub(u32::from(FIRST_HOST))? as usize;
        (i < self.hosts.len()).then_some(HostId(i))
    }

    /// 127.0.0.1, ::1 and the unspecified address mean the calling host.
    fn resolve(&self, host: HostId, ip: IpAddr) -> IpAddr {
        let own = ip.is_unspecified() || ip == Ipv4Addr::LOCALHOST || ip == Ipv6Addr::LOCALHOST;
        if own { self.ip(host) } else { ip }
    }

    fn bind_addr(&mut self, host: HostId, addr: SocketAddr, udp: bool) -> io::Result<SocketAddr> {
        let ip = self.resolve(host, addr.ip());
        if ip != self.ip(host) {
            return Err(os(EADDRNOTAVAIL));
        }
        let ports = if udp {
            &self.udp_ports
        } else {
            &self.tcp_ports
        };
        if addr.port() != 0 {
            if ports.contains_key(&(host, addr.port())) {
                return Err(os(EADDRINUSE));
            }
            return Ok(SocketAddr::new(ip, addr.port()));
        }
        let h = &mut self.hosts[host.0];
        for _ in EPHEMERAL {
            let port = h.next_port;
            h.next_port = if port + 1 < EPHEMERAL.end {
                port + 1
            } else {
                EPHEMERAL.start
            };
            if !ports.contains_key(&(host, port)) {
                return Ok(SocketAddr::new(ip, port));
            }
        }
        Err(os(EADDRNOTAVAIL))
    }

    /// Whether packets pass between `a` and `b`: both up, no partition.
    fn open(&self, a: IpAddr, b: IpAddr) -> bool {
        let (Some(a), Some(b)) = (self.host_of(a), self.host_of(b)) else {
            return false;
        };
        self.hosts[a.0].up && self.hosts[b.0].up && !self.partitions.contains(&(a.min(b), a.max(b)))
    }

    fn latency(&mut self) -> u64 {
        self.rng.range(self.config.latency.clone())
    }

    fn push(&mut self, due: u64, event: Event) {
        self.seq += 1;
        self.events.insert((due, self.seq), event);
    }

    fn notify(&mut self, id: SockId) {
        if let Some(s) = self.socks.get_mut(&id).filter(|s| !s.closed && !s.flagged) {
            s.flagged = true;
            self.changed.push(id);
        }
    }

    fn name(&self, host: HostId) -> &str {
        &self.hosts[host.0].name
    }

    /// `name:port`, or the address if no host has it.
    fn at(&self, addr: SocketAddr) -> String {
        match self.host_of(addr.ip()) {
            Some(h) => format!("{}:{}", self.name(h), addr.port()),
            None => addr.to_string(),
        }
    }

    fn trace(&mut self, what: String) {
        let line = format!("{} {what}", self.now);
        log::trace!("sim: {line}");
        self.hash.add(line.as_bytes());
        self.hash.add(b"\n");
        if let Some(steps) = &mut self.steps {
            let schedule = rt_seam::schedule_hash().unwrap_or(0);
            steps.push(Step {
                line: line.clone(),
                schedule,
            });
        }
        if self.trace.len() == TRACE_LINES {
            self.trace.pop_front();
        }
        self.trace.push_back(line);
    }

    fn pump_all(&mut self) {
        for (from, to) in std::mem::take(&mut self.held_rsts) {
            self.send_rst(from, to, 0);
        }
        let ids: Vec<SockId> = self.socks.keys().copied().collect();
        for id in ids {
            self.pump(id);
        }
    }

    /// Puts on the wire what `id` may send now: its SYN or SYN-ACK, bytes
    /// while the receiver has room, then its FIN.
    fn pump(&mut self, id: SockId) {
        loop {
            let Some((sock, s)) = self.conn(id) else {
                return;
            };
            if s.state == State::Broken || !self.open(sock.local.ip(), s.remote.ip()) {
                return;
            }
            let queued = s
                .peer
                .and_then(|p| self.conn(p))
                .map_or(0, |(_, p)| p.input.len());
            let room = self.config.recv_buffer.saturating_sub(queued + s.in_flight);
            let unsent = s.out.len() - s.in_flight;
            let seg = if !s.ctl_done && !s.ctl_out {
                if s.state == State::Connecting {
                    Seg::Syn
                } else {
                    Seg::SynAck
                }
            } else if s.state != State::Connected {
                return;
            } else if unsent > 0 && room > 0 {
                let cut = self.rng.range(1..self.config.max_segment as u64 + 1) as usize;
                Seg::Data(cut.min(unsent).min(room))
            } else if s.fin_queued && unsent == 0 && !s.fin_out {
                Seg::Fin
            } else {
                return;
            };
            let at = self.now + self.latency();
            let s = self.stream_mut(id).expect("pumped a stream");
            match seg {
                Seg::Syn | Seg::SynAck => s.ctl_out = true,
                Seg::Data(n) => s.in_flight += n,
                Seg::Fin => s.fin_out = true,
            }
            let due = at.max(s.last_due);
            s.last_due = due;
            let epoch = s.epoch;
            self.push(
                due,
                Event::Tcp {
                    from: id,
                    epoch,
                    seg,
                },
            );
        }
    }

    fn deliver(&mut self, from: SockId, epoch: u64, seg: Seg) {
        let Some((sock, s)) = self.conn(from) else {
            return;
        };
        let (src, dst, peer, sender_closed, local) =
            (sock.local, s.remote, s.peer, sock.closed, s.local);
        if s.epoch != epoch {
            return;
        }
        if !self.open(src.ip(), dst.ip()) {
            // Held: sent again from the first undelivered byte once the path
            // opens; an aborted socket sends nothing again.
            let s = self.stream_mut(from).expect("a stream");
            s.rewind();
            if s.state == State::Broken {
                s.out.clear();
            }
            return self.reap(from);
        }
        let (src_at, dst_at) = (self.at(src), self.at(dst));
        let receiver_closed = peer
            .and_then(|p| self.socks.get(&p))
            .is_some_and(|r| r.closed);
        let live = peer.filter(|&p| {
            !receiver_closed && self.conn(p).is_some_and(|(_, r)| r.state != State::Broken)
        });
        match (seg, live) {
            (Seg::Syn, _) => self.syn(from, src, dst),
            (Seg::Fin, Some(to)) => {
                self.stream_mut(to).expect("a stream").peer_fin = true;
                self.trace(format!("fin {src_at} > {dst_at}"));
                self.notify(to);
            }
            (Seg::Fin, None) => {}
            (Seg::SynAck, Some(to)) => {
                self.stream_mut(to).expect("a stream").state = State::Connected;
                self.stream_mut(from).expect("a stream").ctl_done = true;
                self.trace(format!("connected {dst_at} > {src_at}"));
                self.notify(to);
            }
            (Seg::Data(_), Some(to)) if !local && self.rng.chance(self.config.faults.reset) => {
                self.trace(format!("reset fault {src_at} > {dst_at}"));
                self.abort(to, Some(ECONNRESET));
            }
            (Seg::Data(n), Some(to)) => {
                let s = self.stream_mut(from).expect("a stream");
                s.in_flight -= n;
                let bytes: Vec<u8> = s.out.drain(..n).collect();
                self.stream_mut(to).expect("a stream").input.extend(bytes);
                self.trace(format!("data {src_at} > {dst_at} {n}"));
                self.notify(to);
                self.notify(from);
            }
            // Bytes for a socket closed by its user: like Linux, it resets.
            (_, None) if receiver_closed => {
                self.abort(peer.expect("a peer"), None);
            }
            (_, None) => self.send_rst(dst, from, 0),
        }
        if let (Seg::Fin, Some(s)) = (seg, self.stream_mut(from)) {
            s.fin_done = true;
            if sender_closed {
                self.remove(from);
            }
        }
        self.reap(from);
    }

    /// A SYN from `from` (at `src`) reaches `dst`.
    fn syn(&mut self, from: SockId, src: SocketAddr, dst: SocketAddr) {
        let key = self.host_of(dst.ip()).map(|h| (h, dst.port()));
        let listener = key.and_then(|k| self.tcp_ports.get(&k)).copied();
        let (src_at, dst_at) = (self.at(src), self.at(dst));
        let Some((
            l,
            Sock {
                host,
                kind: Kind::Listener { backlog, queue },
                ..
            },
        )) = listener.and_then(|l| Some((l, self.socks.get(&l)?)))
        else {
            self.trace(format!("refused {src_at} > {dst_at}"));
            return self.send_rst(dst, from, 0);
        };
        if queue.len() > *backlog {
            // Dropped, as Linux does; the client tries again after its RTO.
            self.trace(format!("syn {src_at} > {dst_at} dropped"));
            let now = self.now;
            let s = self.stream_mut(from).expect("a stream");
            let (due, epoch) = (now + s.syn_rto, s.epoch);
            s.syn_rto = (s.syn_rto * 2).min(64 * SYN_RTO);
            return self.push(due, Event::SynRetry { sock: from, epoch });
        }
        let host = *host;
        let server = self.insert(
            host,
            dst,
            Kind::Stream(Stream::new(State::Connected, src, Some(from))),
        );
        if let Some(Kind::Listener { queue, .. }) = self.socks.get_mut(&l).map(|s| &mut s.kind) {
            queue.push_back(server);
        }
        let s = self.stream_mut(from).expect("a stream");
        s.peer = Some(server);
        s.ctl_done = true;
        self.trace(format!("syn {src_at} > {dst_at}"));
        self.notify(l);
        self.pump(server);
    }

    /// Sends a reset from `from` to `to`, due no earlier than `after`
    /// (the last segment its sender put on the wire).
    fn send_rst(&mut self, from: SocketAddr, to: SockId, after: u64) {
        let due = (self.now + self.latency()).max(after);
        self.push(due, Event::Rst { from, to });
    }

    fn deliver_rst(&mut self, from: SocketAddr, to: SockId) {
        let Some((sock, s)) = self.conn(to).filter(|(_, s)| s.state != State::Broken) else {
            return;
        };
        let (local, closed) = (sock.local, sock.closed);
        // Linux's errors: refused while connecting, EPIPE after the peer's FIN.
        let err = match s.state {
            State::Connecting => ECONNREFUSED,
            _ if s.peer_fin => EPIPE,
            _ => ECONNRESET,
        };
        if !self.open(from.ip(), local.ip()) {
            return self.held_rsts.push((from, to));
        }
        self.stream_mut(to).expect("a stream").break_with(Some(err));
        self.trace(format!("rst {} > {}", self.at(from), self.at(local)));
        self.notify(to);
        if closed {
            self.remove(to);
        }
    }

    /// Breaks `id`'s connection now and sends its peer a reset.
    /// What is already on the wire still arrives, and the reset after it
    /// (TCP keeps a direction's order): only what was not sent is dropped.
    fn abort(&mut self, id: SockId, err: Option<Errno>) {
        let Some((sock, s)) = self.conn(id) else {
            return;
        };
        let (local, peer, broken) = (sock.local, s.peer, s.state == State::Broken);
        if !broken {
            let s = self.stream_mut(id).expect("a stream");
            s.state = State::Broken;
            s.err = err;
            s.out.truncate(s.in_flight);
            let after = s.last_due;
            self.trace(format!("reset {}", self.at(local)));
            if let Some(peer) = peer {
                self.send_rst(local, peer, after);
            }
            self.notify(id);
        }
        self.reap(id);
    }

    /// Forgets `id` if its user closed it and nothing of it is left on the
    /// wire.
    fn reap(&mut self, id: SockId) {
        let Some((sock, s)) = self.conn(id) else {
            return;
        };
        let on_wire = s.in_flight > 0 || (s.fin_out && !s.fin_done);
        if sock.closed && s.state == State::Broken && !on_wire {
            self.remove(id);
        }
    }

    /// A datagram reaches `to`: queued if its receive buffer has room for
    /// it, or holds nothing (Linux takes one datagram into an empty queue
    /// whatever its size); else dropped. No socket there: the host answers
    /// with a port unreachable.
    fn deliver_udp(&mut self, from: SocketAddr, to: SocketAddr, data: Vec<u8>) {
        let line = format!("udp {} > {} {}", self.at(from), self.at(to), data.len());
        if !self.open(from.ip(), to.ip()) {
            return self.trace(format!("{line} dropped"));
        }
        let Some(id) = self.udp_socket(to) else {
            self.trace(format!("{line} dropped"));
            let due = self.now + self.latency();
            return self.push(due, Event::Refused { from, to });
        };
        let (cap, cost) = (self.config.udp_recv_buffer, charge(data.len()));
        let Some(Kind::Udp(u)) = self.socks.get_mut(&id).map(|s| &mut s.kind) else {
            unreachable!("a UDP port names a UDP socket");
        };
        let room = u.queue.is_empty() || u.queued + cost <= cap;
        if u.connected.is_some_and(|c| c != from) || !room {
            return self.trace(format!("{line} dropped"));
        }
        u.queued += cost;
        u.queue.push_back((from, data));
        self.trace(format!("{line} delivered"));
        self.notify(id);
    }

    /// The UDP socket bound at `addr`, if any.
    fn udp_socket(&self, addr: SocketAddr) -> Option<SockId> {
        let host = self.host_of(addr.ip())?;
        self.udp_ports.get(&(host, addr.port())).copied()
    }

    /// A port unreachable for the datagram `from` sent to `to` comes
    /// back: as on Linux, only a socket connected to `to` hears of it, as
    /// `ECONNREFUSED` from its next call.
    fn deliver_refusal(&mut self, from: SocketAddr, to: SocketAddr) {
        if !self.open(to.ip(), from.ip()) {
            return;
        }
        let Some(id) = self.udp_socket(from) else {
            return;
        };
        let Some(Kind::Udp(u)) = self.socks.get_mut(&id).map(|s| &mut s.kind) else {
            return;
        };
        if u.connected != Some(to) {
            return;
        }
        u.err = Some(ECONNREFUSED);
        self.trace(format!("unreachable {} > {}", self.at(to), self.at(from)));
        self.notify(id);
    }
}

#[cfg(test)]
mod tests {
    use std::io::ErrorKind;

    use super::*;

    const MS: u64 = 1_000_000;

    fn world(seed: u64, config: NetConfig) -> (Network, HostId, HostId) {
        let mut net = Network::new(Rng::new(seed), config);
        let a = net.add_host("client").unwrap();
        let b = net.add_host("server").unwrap();
        (net, a, b)
    }

    fn settle(net: &mut Network) {
        while let Some(t) = net.next_deadline() {
            net.advance(t);
        }
    }

    fn at(net: &Network, host: HostId, port: u16) -> SocketAddr {
        SocketAddr::new(net.ip(host), port)
    }

    fn kind<T>(r: io::Result<T>) -> ErrorKind {
        r.err().expect("an error").kind()
    }

    fn changed(net: &mut Network) -> Vec<SockId> {
        let mut out = Vec::new();
        net.take_changed(&mut out);
        out
    }

    /// A connection from `a` to a listener on `b`:80: (client, server).
    fn pair(net: &mut Network, a: HostId, b: HostId) -> io::Result<(SockId, SockId)> {
        let listener = net.tcp_bind(b, "0.0.0.0:80".parse().unwrap())?;
        net.listen(listener, 16)?;
        let c = net.connect(a, at(net, b, 80))?;
        assert_eq!(kind(net.peer_addr(c)), ErrorKind::NotConnected);
        settle(net);
        let (s, peer) = net.accept(listener)?;
        assert_eq!(peer, net.local_addr(c)?);
        assert_eq!(net.peer_addr(c)?, at(net, b, 80));
        changed(net);
        Ok((c, s))
    }

    /// Reads what `s` has into `got`; true at end of stream.
    fn drain(net: &mut Network, s: SockId, got: &mut Vec<u8>, most: usize) -> io::Result<bool> {
        let mut buf = vec![0; most];
        loop {
            match net.recv(s, &mut buf) {
                Ok(0) => return Ok(true),
                Ok(n) => got.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == ErrorKind::WouldBlock => return Ok(false),
                Err(e) => return Err(e),
            }
        }
    }

    fn bytes(seed: u64, n: usize) -> Vec<u8> {
        let mut rng = Rng::new(seed);
        (0..n).map(|_| rng.next_u64() as u8).collect()
    }

    #[test]
    fn bytes_arrive_whole_and_in_order_however_they_are_split() -> io::Result<()> {
        for seed in 0..12 {
            let config = NetConfig {
                recv_buffer: 4096,
                send_buffer: 8192,
                ..Default::default()
            };
            let (mut net, a, b) = world(seed, config);
            let (c, s) = pair(&mut net, a, b)?;
            let mut rng = Rng::new(seed + 100);
            let data = bytes(seed, 300_000);
            let (mut sent, mut got, mut now, mut buf) = (0, Vec::new(), net.now, [0; 5000]);
            for _ in 0..1_000_000 {
                if sent < data.len() {
                    let end = (sent + rng.range(1..9000) as usize).min(data.len());
                    match net.send(c, &data[sent..end]) {
                        Ok(n) => sent += n,
                        Err(e) => assert_eq!(e.kind(), ErrorKind::WouldBlock),
                    }
                    if sent == data.len() {
                        net.close(c)?;
                    }
                }
                now += rng.range(0..3 * MS);
                net.advance(now);
                match net.recv(s, &mut buf[..rng.range(1..5000) as usize]) {
                    Ok(0) => break,
                    Ok(n) => got.extend_from_slice(&buf[..n]),
                    Err(e) => assert_eq!(e.kind(), ErrorKind::WouldBlock),
                }
            }
            assert_eq!(got.len(), data.len(), "seed {seed}");
            assert!(got == data, "seed {seed}: the bytes differ");
            assert_eq!(net.recv(s, &mut buf)?, 0);
            // The closed client is gone once its FIN arrived.
            assert!(!net.socks.contains_key(&c));
        }
        Ok(())
    }

    #[test]
    fn a_reader_that_reads_nothing_blocks_the_writer_and_reading_frees_it() -> io::Result<()> {
        let (mut net, a, b) = world(1, NetConfig::default());
        let (c, s) = pair(&mut net, a, b)?;
        let mut sent = 0;
        while let Ok(n) = net.send(c, &[7; 1000]) {
            sent += n;
            settle(&mut net);
        }
        // Both buffers are full: the receiver's, then the sender's.
        assert_eq!(sent, 2 * 64 * 1024);
        settle(&mut net);
        assert_eq!(kind(net.send(c, b"x")), ErrorKind::WouldBlock);
        assert!(!net.readiness(c).writable);
        changed(&mut net);
        let mut got = Vec::new();
        drain(&mut net, s, &mut got, 10_000)?;
        settle(&mut net);
        assert!(changed(&mut net).contains(&c));
        assert!(net.readiness(c).writable);
        assert!(net.send(c, &[7; 1000])? > 0);
        Ok(())
    }

    #[test]
    fn a_fin_after_data_reads_zero_only_after_the_data() -> io::Result<()> {
        let (mut net, a, b) = world(2, NetConfig::default());
        let (c, s) = pair(&mut net, a, b)?;
        net.send(c, b"hello")?;
        net.shutdown(c, Shutdown::Write)?;
        assert_eq!(kind(net.send(c, b"more")), ErrorKind::BrokenPipe);
        settle(&mut net);
        assert!(net.readiness(s).read_closed);
        let mut buf = [0; 3];
        assert_eq!(net.recv(s, &mut buf)?, 3);
        assert_eq!(net.recv(s, &mut buf)?, 2);
        assert_eq!(&buf[..2], b"lo");
        assert_eq!(net.recv(s, &mut buf)?, 0);
        // The other direction still works.
        net.send(s, b"bye")?;
        settle(&mut net);
        assert_eq!(net.recv(c, &mut buf)?, 3);
        Ok(())
    }

    #[test]
    fn closing_with_unread_bytes_resets_the_peer() -> io::Result<()> {
        let (mut net, a, b) = world(3, NetConfig::default());
        let (c, s) = pair(&mut net, a, b)?;
        net.send(c, b"unread")?;
        net.send(s, b"last")?;
        settle(&mut net);
        changed(&mut net);
        net.close(s)?;
        settle(&mut net);
        assert!(net.readiness(c).error && net.readiness(c).read_closed);
        assert_eq!(changed(&mut net), [c]);
        // Linux: bytes that came before the reset, the reset once, then the
        // end for reads and a broken pipe for writes.
        let mut buf = [0; 8];
        assert_eq!(net.recv(c, &mut buf)?, 4);
        assert_eq!(&buf[..4], b"last");
        assert_eq!(kind(net.recv(c, &mut buf)), ErrorKind::ConnectionReset);
        assert_eq!(net.recv(c, &mut buf)?, 0);
        assert_eq!(kind(net.send(c, b"x")), ErrorKind::BrokenPipe);
        assert!(
            net.trace
                .iter()
                .any(|l| l.ends_with("rst server:80 > client:49152"))
        );
        Ok(())
    }

    #[test]
    fn a_reset_by_the_harness_or_a_fault_reaches_both_ends() -> io::Result<()> {
        let (mut net, a, b) = world(4, NetConfig::default());
        let (c, s) = pair(&mut net, a, b)?;
        net.reset(c);
        assert_eq!(kind(net.recv(c, &mut [0; 8])), ErrorKind::ConnectionReset);
        // A reset that meets a partition arrives once it heals.
        net.partition(a, b);
        settle(&mut net);
        assert_eq!(kind(net.recv(s, &mut [0; 8])), ErrorKind::WouldBlock);
        net.heal(a, b);
        settle(&mut net);
        // A write is the first to see it, then writes see a broken pipe.
        assert_eq!(kind(net.send(s, b"x")), ErrorKind::ConnectionReset);
        assert_eq!(kind(net.send(s, b"x")), ErrorKind::BrokenPipe);
        assert_eq!(net.recv(s, &mut [0; 8])?, 0);

        let mut config = NetConfig::default();
        config.faults.reset = 1.0;
        let (mut net, a, b) = world(4, config);
        let (c, s) = pair(&mut net, a, b)?;
        net.send(c, b"doomed")?;
        settle(&mut net);
        assert_eq!(
            net.take_error(s)?.map(|e| e.kind()),
            Some(ErrorKind::ConnectionReset)
        );
        assert_eq!(kind(net.send(c, b"x")), ErrorKind::ConnectionReset);
        Ok(())
    }

    #[test]
    fn connecting_to_nobody_is_refused() -> io::Result<()> {
        let (mut net, a, b) = world(5, NetConfig::default());
        let c = net.connect(a, at(&net, b, 81))?;
        settle(&mut net);
        assert_eq!(changed(&mut net), [c]);
        let ready = net.readiness(c);
        assert!(ready.error && ready.writable);
        assert_eq!(
            net.take_error(c)?.map(|e| e.kind()),
            Some(ErrorKind::ConnectionRefused)
        );
        assert!(net.take_error(c)?.is_none());
        assert_eq!(kind(net.peer_addr(c)), ErrorKind::NotConnected);
        Ok(())
    }

    #[test]
    fn a_partition_or_a_stopped_host_holds_connects_and_bytes_until_it_ends() -> io::Result<()> {
        let (mut net, a, b) = world(
            6,
            NetConfig {
                recv_buffer: 8192,
                ..Default::default()
            },
        );
        let listener = net.tcp_bind(b, "127.0.0.1:80".parse().unwrap())?;
        net.listen(listener, 4)?;
        net.partition(a, b);
        let c = net.connect(a, at(&net, b, 80))?;
        net.advance(10_000 * MS);
        assert_eq!(kind(net.peer_addr(c)), ErrorKind::NotConnected);
        net.heal(a, b);
        settle(&mut net);
        let (s, _) = net.accept(listener)?;
        assert!(net.peer_addr(c).is_ok());

        let data = bytes(6, 100_000);
        let (mut sent, mut got, mut now) = (0, Vec::new(), net.now);
        for round in 0..10_000 {
            match round {
                20 => net.partition(b, a),
                40 => net.heal(a, b),
                60 => net.stop_host(b),
                80 => net.stop_host(a),
                100 => net.start_host(b),
                120 => net.start_host(a),
                _ => {}
            }
            let cut = (20..40).contains(&round) || (60..120).contains(&round);
            if sent < data.len() {
                sent += net
                    .send(c, &data[sent..(sent + 3000).min(data.len())])
                    .unwrap_or(0);
            }
            now += MS;
            net.advance(now);
            let before = got.len();
            drain(&mut net, s, &mut got, 700)?;
            // While cut off, only what was already delivered can be read.
            if cut && (22..40).contains(&round) {
                assert_eq!(got.len(), before, "round {round}");
            }
            if got.len() == data.len() {
                break;
            }
        }
        assert!(got == data);
        settle(&mut net);
        drain(&mut net, s, &mut got, 700)?;
        assert_eq!(got.len(), data.len());
        Ok(())
    }

    #[test]
    fn connecting_to_a_stopped_host_or_an_unknown_address_gets_no_answer() -> io::Result<()> {
        let (mut net, a, b) = world(7, NetConfig::default());
        let listener = net.tcp_bind(b, at(&net, b, 80))?;
        net.listen(listener, 4)?;
        net.stop_host(b);
        let c = net.connect(a, at(&net, b, 80))?;
        let lost = net.connect(a, "127.0.0.99:80".parse().unwrap())?;
        net.advance(10_000 * MS);
        assert!(changed(&mut net).is_empty());
        net.start_host(b);
        settle(&mut net);
        assert!(net.peer_addr(c).is_ok());
        assert_eq!(kind(net.peer_addr(lost)), ErrorKind::NotConnected);
        assert!(net.take_error(lost)?.is_none());
        Ok(())
    }

    #[test]
    fn a_full_backlog_drops_the_syn_and_the_client_keeps_connecting() -> io::Result<()> {
        let (mut net, a, b) = world(8, NetConfig::default());
        let listener = net.tcp_bind(b, at(&net, b, 80))?;
        net.listen(listener, 0)?;
        let first = net.connect(a, at(&net, b, 80))?;
        net.advance(10 * MS);
        let second = net.connect(a, at(&net, b, 80))?;
        net.advance(100 * MS);
        assert!(net.peer_addr(first).is_ok());
        assert_eq!(kind(net.peer_addr(second)), ErrorKind::NotConnected);
        assert!(net.take_error(second)?.is_none());
        assert!(net.trace.iter().any(|l| l.ends_with("dropped")));
        net.accept(listener)?;
        net.advance(1_200 * MS);
        assert!(net.peer_addr(second).is_ok());
        assert_eq!(net.accept(listener)?.1, net.local_addr(second)?);
        assert_eq!(kind(net.accept(listener)), ErrorKind::WouldBlock);
        Ok(())
    }

    /// The bytes of every test stream repeat with this (prime) period.
    const PERIOD: usize = 65_521;

    /// Stream bytes `from..from + n` (for `n` up to `PERIOD`).
    fn pattern(table: &[u8], from: usize, n: usize) -> &[u8] {
        &table[from % PERIOD..][..n]
    }

    /// Reads into `buf` from `s`, checking the bytes against the pattern;
    /// `Ok(true)` at end of stream.
    fn read_checked(
        net: &mut Network,
        table: &[u8],
        s: SockId,
        got: &mut usize,
        buf: &mut [u8],
    ) -> io::Result<bool> {
        let n = net.recv(s, buf)?;
        assert!(buf[..n] == *pattern(table, *got, n));
        *got += n;
        Ok(n == 0)
    }

    #[test]
    fn no_byte_is_lost_duplicated_or_reordered_whatever_the_faults() -> io::Result<()> {
        struct Conn {
            client: SockId,
            server: Option<SockId>,
            sent: usize,
            got: usize,
            broken: bool,
            eof: bool,
        }
        let (table, mut buf) = (bytes(0, PERIOD).repeat(2), vec![0; 4096]);
        for seed in 0..24 {
            let mut config = NetConfig {
                recv_buffer: 3000,
                send_buffer: 5000,
                ..Default::default()
            };
            config.faults.reset = 0.001;
            let (mut net, a, b) = world(seed, config);
            let listener = net.tcp_bind(b, at(&net, b, 80))?;
            net.listen(listener, 2)?;
            let mut rng = Rng::new(seed);
            let (mut conns, mut cut) = (Vec::<Conn>::new(), false);
            let accept = |net: &mut Network, conns: &mut Vec<Conn>| {
                while let Ok((s, peer)) = net.accept(listener) {
                    let conn = conns
                        .iter_mut()
                        .find(|c| net.local_addr(c.client).ok() == Some(peer));
                    conn.expect("a client").server = Some(s);
                }
            };
            for _ in 0..3000 {
                let i = rng.below(conns.len() as u64) as usize;
                match rng.below(10) {
                    0 if conns.len() < 6 => {
                        let client = net.connect(a, at(&net, b, 80))?;
                        conns.push(Conn {
                            client,
                            server: None,
                            sent: 0,
                            got: 0,
                            broken: false,
                            eof: false,
                        });
                    }
                    1..=3 if !conns.is_empty() => {
                        let c = &mut conns[i];
                        let bytes = pattern(&table, c.sent, rng.range(1..4000) as usize);
                        match net.send(c.client, bytes) {
                            Ok(n) => c.sent += n,
                            Err(e) => c.broken |= e.kind() != ErrorKind::WouldBlock,
                        }
                    }
                    4..=6 if !conns.is_empty() => {
                        let c = &mut conns[i];
                        if let Some(s) = c.server.filter(|_| !c.broken) {
                            match read_checked(
                                &mut net,
                                &table,
                                s,
                                &mut c.got,
                                &mut buf[..rng.range(1..4000) as usize],
                            ) {
                                Ok(eof) => {
                                    assert!(!eof, "seed {seed}: an end of stream before close")
                                }
                                Err(e) => c.broken |= e.kind() != ErrorKind::WouldBlock,
                            }
                        }
                    }
                    7 => net.advance(net.now + rng.range(0..5 * MS)),
                    8 if rng.chance(0.2) => {
                        cut = !cut;
                        match (cut, rng.chance(0.5)) {
                            (true, true) => net.partition(a, b),
                            (true, false) => net.stop_host(b),
                            (false, _) => {
                                net.heal(a, b);
                                net.start_host(b);
                            }
                        }
                    }
                    9 => accept(&mut net, &mut conns),
                    _ => {}
                }
            }
            // Heal everything, close every client, and read every stream to its end.
            net.heal(a, b);
            net.start_host(b);
            for c in &conns {
                net.close(c.client)?;
            }
            loop {
                accept(&mut net, &mut conns);
                for c in conns.iter_mut().filter(|c| !c.broken && !c.eof) {
                    let Some(s) = c.server else { continue };
                    loop {
                        match read_checked(&mut net, &table, s, &mut c.got, &mut buf) {
                            Ok(false) => continue,
                            Ok(true) => c.eof = true,
                            Err(e) => c.broken |= e.kind() != ErrorKind::WouldBlock,
                        }
                        break;
                    }
                }
                let Some(t) = net.next_deadline() else { break };
                net.advance(t);
            }
            for c in conns.iter().filter(|c| !c.broken && c.server.is_some()) {
                assert!(
                    c.eof && c.got == c.sent,
                    "seed {seed}: {} of {} bytes",
                    c.got,
                    c.sent
                );
            }
            assert!(
                conns.iter().any(|c| !c.broken && c.sent > 0),
                "seed {seed}: nothing tested"
            );
        }
        Ok(())
    }

    /// Sends 2000 numbered datagrams, 100 µs apart: (lost, duplicated,
    /// arrivals after a later one).
    fn udp_run(faults: Faults) -> io::Result<(usize, usize, usize)> {
        let (mut net, a, b) = world(
            9,
            NetConfig {
                faults,
                ..Default::default()
            },
        );
        let tx = net.udp_bind(a, "0.0.0.0:0".parse().unwrap())?;
        let rx = net.udp_bind(b, "0.0.0.0:53".parse().unwrap())?;
        let mut seen = vec![0; 2000];
        let (mut overtaken, mut last, mut buf) = (0, 0, [0; 8]);
        for i in 0..2000u32 {
            net.send_to(tx, &i.to_le_bytes(), at(&net, b, 53))?;
            net.advance(net.now + MS / 10);
            if i == 1999 {
                settle(&mut net);
            }
            while let Ok((n, from)) = net.recv_from(rx, &mut buf) {
                assert_eq!((n, from), (4, at(&net, a, net.local_addr(tx)?.port())));
                let j = u32::from_le_bytes(buf[..4].try_into().unwrap());
                seen[j as usize] += 1;
                overtaken += usize::from(j < last);
                last = j;
            }
        }
        let lost = seen.iter().filter(|&&n| n == 0).count();
        Ok((lost, seen.iter().filter(|&&n| n == 2).count(), overtaken))
    }

    #[test]
    fn udp_faults_happen_at_about_their_rates_and_never_when_off() -> io::Result<()> {
        assert_eq!(udp_run(Faults::default())?, (0, 0, 0));
        let (lost, dup, _) = udp_run(Faults {
            udp_loss: 0.1,
            udp_duplicate: 0.1,
            ..Default::default()
        })?;
        assert!((140..260).contains(&lost), "{lost}");
        assert!((120..240).contains(&dup), "{dup}");
        let (lost, dup, overtaken) = udp_run(Faults {
            udp_reorder: 0.2,
            ..Default::default()
        })?;
        assert_eq!((lost, dup), (0, 0));
        assert!((150..400).contains(&overtaken), "{overtaken}");
        Ok(())
    }

    #[test]
    fn recv_from_truncates_and_what_nobody_can_take_is_dropped() -> io::Result<()> {
        let (mut net, a, b) = world(
            10,
            NetConfig {
                udp_recv_buffer: 1000,
                ..Default::default()
            },
        );
        let tx = net.udp_bind(a, at(&net, a, 0))?;
        let rx = net.udp_bind(b, at(&net, b, 53))?;
        assert_eq!(kind(net.udp_bind(b, at(&net, b, 53))), ErrorKind::AddrInUse);
        for _ in 0..3 {
            net.send_to(tx, &[1; 60], at(&net, b, 53))?;
        }
        net.send_to(tx, b"nobody", at(&net, b, 54))?;
        settle(&mut net);
        assert_eq!(changed(&mut net), [rx]);
        let mut buf = [0; 10];
        assert_eq!(net.recv_from(rx, &mut buf)?, (10, net.local_addr(tx)?));
        // The queue held one 60-byte datagram; the others did not fit.
        assert_eq!(kind(net.recv_from(rx, &mut buf)), ErrorKind::WouldBlock);
        assert_eq!(net.recent(3).filter(|l| l.ends_with("dropped")).count(), 3);
        // A connected socket sends to, and takes only from, its peer.
        net.udp_connect(rx, net.local_addr(tx)?)?;
        net.send(rx, b"pong")?;
        settle(&mut net);
        assert_eq!(net.recv(tx, &mut buf)?, 4);
        Ok(())
    }

    #[test]
    fn binding_checks_addresses_and_hands_out_ephemeral_ports_in_order() -> io::Result<()> {
        let (mut net, a, b) = world(11, NetConfig::default());
        assert_eq!(net.lookup("server"), Some("127.0.0.3".parse().unwrap()));
        assert_eq!(kind(net.add_host("server")), ErrorKind::AlreadyExists);
        let l = net.tcp_bind(a, "0.0.0.0:80".parse().unwrap())?;
        // As the kernel: bound to the unspecified address, it says so.
        assert_eq!(net.local_addr(l)?, "0.0.0.0:80".parse().unwrap());
        assert_eq!(kind(net.tcp_bind(a, at(&net, a, 80))), ErrorKind::AddrInUse);
        assert_eq!(
            kind(net.tcp_bind(a, at(&net, b, 81))),
            ErrorKind::AddrNotAvailable
        );
        let e1 = net.tcp_bind(a, at(&net, a, 0))?;
        let e2 = net.tcp_bind(a, at(&net, a, 0))?;
        assert_eq!(
            (net.local_addr(e1)?.port(), net.local_addr(e2)?.port()),
            (49152, 49153)
        );
        net.close(e1)?;
        assert!(net.tcp_bind(a, at(&net, a, 49152)).is_ok());
        Ok(())
    }

    /// A busy world with faults on; returns its trace hash.
    fn workload(seed: u64) -> io::Result<u64> {
        let mut config = NetConfig {
            recv_buffer: 2048,
            ..Default::default()
        };
        config.faults = Faults {
            reset: 0.01,
            udp_loss: 0.1,
            udp_duplicate: 0.1,
            udp_reorder: 0.1,
        };
        let (mut net, a, b) = world(seed, config);
        let (c, s) = pair(&mut net, a, b)?;
        let u = net.udp_bind(a, at(&net, a, 0))?;
        let data = bytes(seed, 20_000);
        let mut got = Vec::new();
        for i in 0..200 {
            let _ = net.send(c, &data[i * 100..i * 100 + 100]);
            net.send_to(u, b"ping", at(&net, b, 53))?;
            net.advance(net.now + MS);
            let _ = drain(&mut net, s, &mut got, 300);
        }
        settle(&mut net);
        Ok(net.trace_hash().get())
    }

    #[test]
    fn the_same_seed_gives_the_same_trace_and_other_seeds_others() -> io::Result<()> {
        assert_eq!(workload(1)?, workload(1)?);
        let mut hashes: Vec<u64> = (0..8).map(workload).collect::<io::Result<_>>()?;
        hashes.sort_unstable();
        hashes.dedup();
        assert_eq!(hashes.len(), 8);
        Ok(())
    }

    #[test]
    fn readiness_edges_are_reported_once_and_only_on_a_change() -> io::Result<()> {
        let (mut net, a, b) = world(12, NetConfig::default());
        let listener = net.tcp_bind(b, at(&net, b, 80))?;
        net.listen(listener, 4)?;
        let c = net.connect(a, at(&net, b, 80))?;
        assert!(changed(&mut net).is_empty());
        assert_eq!(net.readiness(c), Ready::default());
        settle(&mut net);
        assert_eq!(changed(&mut net), [listener, c]);
        assert!(changed(&mut net).is_empty());
        let (s, _) = net.accept(listener)?;
        for _ in 0..5 {
            net.send(c, &[1; 3000])?;
        }
        settle(&mut net);
        assert_eq!(changed(&mut net), [s, c]);
        assert!(net.readiness(s).readable && !net.readiness(s).read_closed);
        net.advance(net.now + 1000 * MS);
        assert!(changed(&mut net).is_empty());
        net.shutdown(c, Shutdown::Write)?;
        assert_eq!(changed(&mut net), [c]);
        settle(&mut net);
        assert_eq!(changed(&mut net), [s]);
        assert!(net.readiness(s).read_closed);
        Ok(())
    }

    /// `err`'s raw OS error.
    fn raw<T>(r: io::Result<T>) -> Option<i32> {
        r.err().expect("an error").raw_os_error()
    }

    #[test]
    fn a_reset_after_the_peers_fin_leaves_reads_at_the_end() -> io::Result<()> {
        // Linux's `tcp_recvmsg`: once the peer's FIN is in, a read is the
        // end; a reset after it is left for the next write.
        let (mut net, a, b) = world(13, NetConfig::default());
        let (c, s) = pair(&mut net, a, b)?;
        net.close(c)?;
        settle(&mut net);
        assert_eq!(net.recv(s, &mut [0; 8])?, 0);
        // The closed client answers this with a reset.
        assert_eq!(net.send(s, b"x")?, 1);
        settle(&mut net);
        assert!(net.readiness(s).error);
        assert_eq!(net.recv(s, &mut [0; 8])?, 0);
        assert_eq!(net.peek(s, &mut [0; 8])?, 0);
        assert_eq!(raw(net.send(s, b"x")), Some(EPIPE));
        assert_eq!(raw(net.send(s, b"x")), Some(EPIPE));
        assert!(net.take_error(s)?.is_none());
        assert_eq!(raw(net.peer_addr(s)), Some(ENOTCONN));
        Ok(())
    }

    #[test]
    fn bytes_on_the_wire_arrive_before_the_reset_that_follows_them() -> io::Result<()> {
        for seed in 0..20 {
            let (mut net, a, b) = world(seed, NetConfig::default());
            let (c, s) = pair(&mut net, a, b)?;
            net.send(s, b"last words")?;
            // On the wire now; the reset goes after them, never before.
            net.reset(s);
            settle(&mut net);
            let mut buf = [0; 16];
            assert_eq!(net.recv(c, &mut buf)?, 10, "seed {seed}");
            assert_eq!(&buf[..10], b"last words");
            assert_eq!(raw(net.recv(c, &mut buf)), Some(ECONNRESET));
            assert_eq!(net.recv(c, &mut buf)?, 0);
        }
        // What was not on the wire yet is dropped, and a closed socket
        // is forgotten once what it sent has arrived.
        let (mut net, a, b) = world(
            14,
            NetConfig {
                recv_buffer: 1000,
                ..Default::default()
            },
        );
        let (c, s) = pair(&mut net, a, b)?;
        net.send(s, &[5; 3000])?;
        net.send(c, b"unread")?;
        settle(&mut net);
        let mut got = Vec::new();
        drain(&mut net, c, &mut got, 300).ok();
        net.close(s)?;
        assert!(net.socks.contains_key(&s));
        settle(&mut net);
        assert!(!net.socks.contains_key(&s));
        let mut buf = [0; 4000];
        let (n, err) = loop {
            match net.recv(c, &mut buf) {
                Ok(n) => got.extend_from_slice(&buf[..n]),
                Err(err) => break (got.len(), err),
            }
        };
        assert!(n < 3000, "{n}");
        assert_eq!(err.raw_os_error(), Some(ECONNRESET));
        Ok(())
    }

    #[test]
    fn an_empty_udp_queue_takes_any_datagram_and_a_full_one_drops_as_linux_does() -> io::Result<()>
    {
        let kept = |len: usize, sent: usize, buffer: usize| -> io::Result<usize> {
            let config = NetConfig {
                udp_recv_buffer: buffer,
                ..Default::default()
            };
            let (mut net, a, b) = world(15, config);
            let tx = net.udp_bind(a, at(&net, a, 0))?;
            let rx = net.udp_bind(b, at(&net, b, 53))?;
            for _ in 0..sent {
                net.send_to(tx, &vec![1; len], at(&net, b, 53))?;
            }
            settle(&mut net);
            let mut buf = vec![0; 65_536];
            let mut n = 0;
            while net.recv_from(rx, &mut buf).is_ok() {
                n += 1;
            }
            Ok(n)
        };
        // Linux 6.18, its default 212,992 bytes (see `charge`).
        assert_eq!(kept(1_400, 200, UDP_RECV_BUFFER)?, 92);
        assert_eq!(kept(65_507, 5, UDP_RECV_BUFFER)?, 3);
        assert_eq!(kept(500, 300, UDP_RECV_BUFFER)?, 166);
        // However small the buffer, an empty queue takes one.
        assert_eq!(kept(65_507, 2, 512)?, 1);
        assert_eq!(kept(0, 2, 1)?, 1);
        Ok(())
    }

    #[test]
    fn a_refusal_comes_back_to_a_socket_connected_to_the_port_only() -> io::Result<()> {
        let (mut net, a, b) = world(16, NetConfig::default());
        let connected = net.udp_bind(a, at(&net, a, 0))?;
        let unconnected = net.udp_bind(a, at(&net, a, 0))?;
        net.udp_connect(connected, at(&net, b, 9))?;
        net.send(connected, b"anyone?")?;
        net.send_to(unconnected, b"anyone?", at(&net, b, 9))?;
        settle(&mut net);
        assert_eq!(changed(&mut net), [connected]);
        let ready = net.readiness(connected);
        assert!(ready.error && ready.readable);
        assert_eq!(raw(net.recv(connected, &mut [0; 8])), Some(ECONNREFUSED));
        assert_eq!(raw(net.recv(connected, &mut [0; 8])), Some(EAGAIN));
        assert_eq!(
            net.readiness(unconnected),
            Ready {
                writable: true,
                ..Ready::default()
            }
        );
        // Pending, it fails the next send, which sends nothing.
        net.send(connected, b"anyone?")?;
        settle(&mut net);
        assert_eq!(raw(net.send(connected, b"x")), Some(ECONNREFUSED));
        assert!(net.next_deadline().is_none());
        // Errors of sends that never leave: Linux's codes.
        assert_eq!(raw(net.send(unconnected, b"x")), Some(EDESTADDRREQ));
        let too_long = vec![0; MAX_DATAGRAM + 1];
        assert_eq!(raw(net.send(connected, &too_long)), Some(EMSGSIZE));
        Ok(())
    }

    #[test]
    fn refusals_come_back_one_round_trip_after_the_send() -> io::Result<()> {
        // Latency is 50 µs to 2 ms each way: a refusal, TCP's or UDP's,
        // is back within 4 ms of its send, however late in the run.
        let (mut net, a, b) = world(17, NetConfig::default());
        net.advance(1_000 * MS);
        let c = net.connect(a, at(&net, b, 81))?;
        let u = net.udp_bind(a, at(&net, a, 0))?;
        net.udp_connect(u, at(&net, b, 82))?;
        net.send(u, b"anyone?")?;
        net.advance(net.now + 4 * MS);
        assert_eq!(
            raw(net.take_error(c)?.map_or(Ok(()), Err)),
            Some(ECONNREFUSED)
        );
        assert_eq!(
            raw(net.take_error(u)?.map_or(Ok(()), Err)),
            Some(ECONNREFUSED)
        );
        assert!(net.take_error(u)?.is_none());
        Ok(())
    }

    #[test]
    fn a_udp_queue_makes_room_for_what_it_gives_back() -> io::Result<()> {
        let (mut net, a, b) = world(18, NetConfig::default());
        let tx = net.udp_bind(a, at(&net, a, 0))?;
        let rx = net.udp_bind(b, at(&net, b, 53))?;
        let send = |net: &mut Network, n: usize| -> io::Result<()> {
            for _ in 0..n {
                net.send_to(tx, &[1; 1_400], at(net, b, 53))?;
            }
            settle(net);
            Ok(())
        };
        send(&mut net, 200)?;
        let mut buf = [0; 2_000];
        for _ in 0..46 {
            net.recv_from(rx, &mut buf)?;
        }
        // Room for 46 again: 92 in all, as before.
        send(&mut net, 200)?;
        let mut left = 0;
        while net.recv_from(rx, &mut buf).is_ok() {
            left += 1;
        }
        assert_eq!(left, 92);
        Ok(())
    }

    #[test]
    fn a_connection_over_is_not_connected_and_is_forgotten_once_closed() -> io::Result<()> {
        let (mut net, a, b) = world(19, NetConfig::default());
        let (c, s) = pair(&mut net, a, b)?;
        // Reset: shutting it down is `ENOTCONN`, as on the kernel.
        net.reset(s);
        settle(&mut net);
        assert_eq!(raw(net.shutdown(c, Shutdown::Write)), Some(ENOTCONN));
        assert_eq!(raw(net.shutdown(s, Shutdown::Read)), Some(ENOTCONN));

        // A socket whose FIN went through, closed with bytes unread, is
        // reset and then forgotten.
        let (mut net, a, b) = world(20, NetConfig::default());
        let (c, s) = pair(&mut net, a, b)?;
        net.shutdown(c, Shutdown::Write)?;
        net.send(s, b"unread")?;
        settle(&mut net);
        net.close(c)?;
        settle(&mut net);
        assert!(!net.socks.contains_key(&c));
        // Its peer had its FIN: reads are the end, the reset a broken pipe.
        assert_eq!(net.recv(s, &mut [0; 8])?, 0);
        assert_eq!(raw(net.send(s, b"x")), Some(EPIPE));
        Ok(())
    }
}
