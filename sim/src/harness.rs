//! [`Sim`]: a server and its clients in one seeded world, on a virtual
//! clock, over the simulated network; a failure reports its seed, and the
//! same seed replays it.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fmt;
use std::future::{Future, poll_fn};
use std::io;
use std::ops::Range;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use ioloop_runtime::lock::Mutex;
use ioloop_runtime::seam as rt_sim;
use ioloop_runtime::task::JoinHandle;
use ioloop_runtime::time::{Instant, sleep};
use ioloop_runtime::{Builder, spawn_local};

use super::network::{self, HostId, NetConfig, Network, Step};
use super::rare::{self, Rare};
use super::rng::Rng;
use super::seeded::{Seed, with_tag};
use super::world::{self, Seam, World};

/// The variable naming the one seed to run, to replay a failure: see
/// [`run_seeds`](crate::run_seeds).
pub const SEED_VAR: &str = "IOLOOP_SIM_SEED";

/// The variable naming a file to which every run appends a line: the
/// seed, then each rare path's count (`-` where the run left it off); the
/// coverage command (`tests/sim/coverage.sh`) tallies them. A run with a
/// rate set by hand ([`Sim::rare_rate`]) writes none.
pub const COVERAGE_VAR: &str = "IOLOOP_SIM_COVERAGE";

/// A host's async fn, boxed until the run starts it.
type Run = Box<dyn FnOnce() -> Pin<Box<dyn Future<Output = io::Result<()>>>>>;

/// A restartable host's async fn, called again at each restart.
type Restart = Rc<dyn Fn() -> Pin<Box<dyn Future<Output = io::Result<()>>>>>;

/// The faults a simulation injects, all off by default
/// ([`Faults::all`] turns each on at a rate that breaks something in most
/// runs without stopping every one).
#[derive(Clone, Debug, Default)]
pub struct Faults {
    /// The chance that a delivered TCP segment resets its connection.
    pub reset: f64,
    /// The chance that a UDP datagram is lost.
    pub udp_loss: f64,
    /// The chance that a UDP datagram arrives twice.
    pub udp_duplicate: f64,
    /// The chance that a UDP datagram may overtake those sent before it.
    pub udp_reorder: f64,
    /// Now and then cut the path between two hosts, and heal it later
    /// (TCP bytes are held meanwhile, UDP lost).
    pub partitions: bool,
    /// Now and then stop a server host (it answers nothing), and start
    /// it again later.
    pub stops: bool,
    /// Now and then crash a host added with
    /// [`Sim::restartable_host`]: every task of it is aborted, so its
    /// sockets close and what it kept is lost; after a while its async fn
    /// is called again. Hosts added otherwise never crash.
    pub crashes: bool,
    /// The rare paths a correct program sees as errors (a `connect`
    /// refused), taken in some runs as the others are
    /// ([`Sim::rare_paths`]).
    pub refusals: bool,
}

impl Faults {
    /// Every fault on.
    pub fn all() -> Faults {
        Faults {
            reset: 0.002,
            udp_loss: 0.05,
            udp_duplicate: 0.05,
            udp_reorder: 0.1,
            partitions: true,
            stops: true,
            crashes: true,
            refusals: true,
        }
    }
}

/// The turns of the loop in a row at one virtual instant that make a
/// livelock, unless [`Sim::progress_bound`] says otherwise.
const PROGRESS_BOUND: u64 = 100_000;

/// The runtime's task dump, on the virtual clock, for a failure's report.
fn tasks() -> String {
    format!("\nthe tasks:\n{}", ioloop_runtime::Handle::current().dump())
}

/// Partitions and stops a run injects at most: then the world is left to
/// settle, so a run that hangs is told from one still recovering.
const CHAOS_ROUNDS: u32 = 6;

struct Host {
    name: String,
    client: bool,
    run: Run,
    /// A restartable host's async fn, for its restarts.
    restart: Option<Restart>,
}

/// A simulated world: named hosts, each running an async fn, on one
/// thread, with a seeded scheduler ([`Seed::seed`](crate::Seed::seed)), a virtual clock,
/// and a network where every `ioloop::net` socket the hosts open lives.
/// The seed decides the order of ready tasks, latencies, how writes are
/// split into reads, the TCP sockets' buffer sizes (512 bytes to 64 KiB,
/// unless [`buffers`](Self::buffers) sets them: small ones make short
/// writes and waits for room common), and the faults asked for.
///
/// [`run`](Self::run) runs until every client returns, and fails, naming
/// the seed, if one fails or panics, a host fails, nothing is left to do
/// before they finish (a deadlock), or the virtual deadline passes.
///
/// # Examples
///
/// ```
/// use ioloop::io::{AsyncReadExt, AsyncWriteExt};
/// use ioloop::net::{TcpListener, TcpStream};
/// use ioloop::sim::Sim;
///
/// let report = Sim::new(7)
///     .host("server", || async {
///         let listener = TcpListener::bind("0.0.0.0:7").await?;
///         loop {
///             let (mut stream, _) = listener.accept().await?;
///             ioloop::spawn_local(async move {
///                 let mut buf = [0; 5];
///                 stream.read_exact(&mut buf).await?;
///                 stream.write_all(&buf).await
///             });
///         }
///     })
///     .client("client", || async {
///         let mut stream = TcpStream::connect("server:7").await?;
///         stream.write_all(b"hello").await?;
///         let mut buf = [0; 5];
///         stream.read_exact(&mut buf).await?;
///         assert_eq!(&buf, b"hello");
///         Ok(())
///     })
///     .run()
///     .unwrap();
/// assert_eq!(report.seed, 7);
/// ```
pub struct Sim {
    seed: u64,
    config: NetConfig,
    partitions: bool,
    stops: bool,
    crashes: bool,
    deadline: Duration,
    progress_bound: u64,
    buffers: Option<(usize, usize)>,
    rare_paths: bool,
    refusals: bool,
    rare_rates: Vec<(usize, f64)>,
    hosts: Vec<Host>,
    /// What `run` chose for the world, for a failure's report.
    world: String,
    /// Whether `run` keeps the run's steps in `steps`, for the
    /// determinism check (`determinism.rs`).
    pub(crate) record: bool,
    pub(crate) steps: Vec<Step>,
}

impl Sim {
    /// A world whose every choice is drawn from `seed`.
    pub fn new(seed: u64) -> Sim {
        Sim {
            seed,
            config: NetConfig::default(),
            partitions: false,
            stops: false,
            crashes: false,
            deadline: Duration::from_secs(600),
            progress_bound: PROGRESS_BOUND,
            buffers: None,
            rare_paths: true,
            refusals: false,
            rare_rates: Vec::new(),
            hosts: Vec::new(),
            world: String::new(),
            record: false,
            steps: Vec::new(),
        }
    }

    /// The faults to inject (none by default).
    pub fn faults(&mut self, faults: Faults) -> &mut Self {
        self.config.faults = network::Faults {
            reset: faults.reset,
            udp_loss: faults.udp_loss,
            udp_duplicate: faults.udp_duplicate,
            udp_reorder: faults.udp_reorder,
        };
        self.partitions = faults.partitions;
        self.stops = faults.stops;
        self.crashes = faults.crashes;
        self.refusals = faults.refusals;
        self
    }

    /// Whether the library is made to take its rare paths (on by default):
    /// short reads and writes, `WouldBlock` after a readiness event,
    /// spurious events, `accept`'s `EMFILE` and `ECONNABORTED`, a waiter
    /// evicted early, timers woken in reverse; and, with
    /// [`Faults::refusals`], a `connect` refused. Each is enabled in about
    /// half the runs, by the seed, and fires at a rate of its own; the
    /// [`Report`] counts them. Off, the world is what it was without them:
    /// the same seed, the same trace.
    pub fn rare_paths(&mut self, on: bool) -> &mut Self {
        self.rare_paths = on;
        self
    }

    /// Enables the rare path `point` (one of [`RARE_POINTS`](crate::RARE_POINTS))
    /// in this run whatever the seed and [`rare_paths`](Self::rare_paths)
    /// say, firing with chance `rate` each time it is asked: 0 never, 1
    /// always (a `WouldBlock` always is a socket that never moves: a
    /// livelock).
    ///
    /// # Panics
    ///
    /// If no point is named `point`.
    pub fn rare_rate(&mut self, point: &str, rate: f64) -> &mut Self {
        let i = rare::index(point).unwrap_or_else(|| panic!("no rare path named {point:?}"));
        self.rare_rates.push((i, rate));
        self
    }

    /// The one-way latency of a segment or datagram, drawn in `range`
    /// (default 50 µs to 2 ms).
    pub fn latency(&mut self, range: Range<Duration>) -> &mut Self {
        let nanos = |d: Duration| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
        self.config.latency = nanos(range.start)..nanos(range.end).max(nanos(range.start) + 1);
        self
    }

    /// Every TCP socket's send and receive buffer sizes, in bytes (by
    /// default drawn from the seed, 512 bytes to 64 KiB each).
    pub fn buffers(&mut self, send: usize, recv: usize) -> &mut Self {
        self.buffers = Some((send.max(1), recv.max(1)));
        self
    }

    /// How long, in virtual time, the clients have to finish (default
    /// ten minutes).
    pub fn deadline(&mut self, deadline: Duration) -> &mut Self {
        self.deadline = deadline;
        self
    }

    /// How many turns of the loop in a row may find the virtual clock
    /// standing still before the run fails as a livelock (default
    /// 100,000): a task that yields for ever, or a timer that fires before
    /// its time and is set again, keeps the loop busy while nothing moves.
    /// Waiting is not turning: a world that waits for its next event jumps
    /// the clock there.
    pub fn progress_bound(&mut self, turns: u64) -> &mut Self {
        self.progress_bound = turns;
        self
    }

    /// Adds a host named `name` (addresses are 127.0.0.2, .3, ... in the
    /// order hosts are added, and `name` resolves to it) running `run`: a
    /// server, which need not return, but must not fail.
    pub fn host<F, Fut>(&mut self, name: &str, run: F) -> &mut Self
    where
        F: FnOnce() -> Fut + 'static,
        Fut: Future<Output = io::Result<()>> + 'static,
    {
        self.add(name, false, run)
    }

    /// Adds a client host: the run ends once every client has returned
    /// `Ok`.
    pub fn client<F, Fut>(&mut self, name: &str, run: F) -> &mut Self
    where
        F: FnOnce() -> Fut + 'static,
        Fut: Future<Output = io::Result<()>> + 'static,
    {
        self.add(name, true, run)
    }

    /// Adds a server host that can crash, as turmoil's `bounce` does: with
    /// [`Faults::crashes`] on, the world now and then aborts every task
    /// of the host (its sockets close as they drop: peers see the end of
    /// their connections, and connects are refused until it listens
    /// again; whatever it kept in memory is lost) and, after a while,
    /// calls `run` again. A [`Faults::stops`] stop, by contrast, keeps the
    /// host's state and only cuts it off. Otherwise as [`host`](Self::host).
    pub fn restartable_host<F, Fut>(&mut self, name: &str, run: F) -> &mut Self
    where
        F: Fn() -> Fut + 'static,
        Fut: Future<Output = io::Result<()>> + 'static,
    {
        let restart: Restart = Rc::new(move || Box::pin(run()));
        let first = restart.clone();
        self.add(name, false, move || first());
        self.hosts.last_mut().expect("just added").restart = Some(restart);
        self
    }

    fn add<F, Fut>(&mut self, name: &str, client: bool, run: F) -> &mut Self
    where
        F: FnOnce() -> Fut + 'static,
        Fut: Future<Output = io::Result<()>> + 'static,
    {
        let name = name.to_owned();
        let run: Run = Box::new(move || Box::pin(run()));
        self.hosts.push(Host {
            name,
            client,
            run,
            restart: None,
        });
        self
    }

    /// Runs the world on this thread until every client has returned. The
    /// hosts are started once: a second `run` has none.
    ///
    /// # Errors
    ///
    /// A [`Failure`] naming the seed and the last events, if a client or
    /// host fails or panics, the runtime itself panics, the world
    /// deadlocks, or the deadline passes.
    pub fn run(&mut self) -> Result<Report, Failure> {
        let mut root = Rng::new(self.seed);
        let mut config = self.config.clone();
        let mut sizes = root.fork();
        (config.send_buffer, config.recv_buffer) = self.buffers.unwrap_or_else(|| {
            let mut size = || 1 << sizes.range(9..17);
            (size(), size())
        });
        self.world = describe(&config, self.partitions, self.stops, self.crashes);
        let net = Network::new(root.fork(), config);
        let chaos = Chaos {
            rng: root.fork(),
            partitions: self.partitions,
            stops: self.stops,
            crashes: self.crashes,
        };
        let rt_seed = root.next_u64();
        // Forked after everything else: rare paths off, a seed's world is
        // the one it was before they existed.
        let (on, refusals) = (self.rare_paths, self.rare_paths && self.refusals);
        let rare = Rare::new(root.fork(), on, refusals, &self.rare_rates);
        let hosts = std::mem::take(&mut self.hosts);
        let mut world = World::new(net, rare);
        if self.record {
            world.net.record_steps();
        }
        world.deadline = Some(u64::try_from(self.deadline.as_nanos()).unwrap_or(u64::MAX));
        world.progress_bound = self.progress_bound;
        for host in &hosts {
            let id = world.net.add_host(&host.name).map_err(|err| {
                self.failure(format!("host {:?}: {err}", host.name), Vec::new(), 0)
            })?;
            world.hosts.push(id);
        }
        let world = Arc::new(Mutex::new(world));
        // Entered before the runtime is built and left after it drops: the
        // sockets its tasks leave are closed in the network.
        let _entered = world::enter(world.clone());
        let rt = Builder::new()
            .seed(rt_seed)
            .slow_poll_threshold(None)
            .build_simulated(Seam(world.clone()))
            .map_err(|err| self.failure(format!("building the runtime: {err}"), Vec::new(), 0))?;
        // A panic of the loop itself (a task's is its `JoinError`) is a
        // failure of this seed too.
        let run = std::panic::catch_unwind(AssertUnwindSafe(|| {
            rt.block_on(async {
                // On the runtime's clock: the network's reads it only when
                // polled, which can be a jump of the clock behind.
                let start = Instant::now();
                let outcome = drive(hosts, &world, chaos).await;
                let elapsed = start.elapsed();
                (outcome, rt_sim::schedule_hash().unwrap_or(0), elapsed)
            })
        }));
        let (outcome, schedule, elapsed) = run.unwrap_or_else(|panic| {
            let message = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            (
                Err(format!("the runtime panicked: {message}")),
                0,
                Duration::ZERO,
            )
        });
        // Read before the runtime drops: its tasks' sockets close then, and
        // their resets would bury the events that led to the end.
        let (mut hash, recent, rare) = {
            let mut world = world.lock();
            self.steps = world.net.take_steps();
            let recent = world.net.recent(256).map(str::to_owned).collect::<Vec<_>>();
            // A rate set by hand says nothing of what the suite reaches.
            if self.rare_rates.is_empty() {
                let path = std::env::var_os(COVERAGE_VAR);
                rare::append(path.as_deref(), &world.rare.line(self.seed));
            }
            (world.net.trace_hash(), recent, world.rare.fired())
        };
        drop(rt);
        hash.add(&schedule.to_le_bytes());
        let hash = hash.get();
        match outcome {
            Ok(()) => Ok(Report {
                seed: self.seed,
                trace_hash: hash,
                elapsed,
                recent,
                rare,
            }),
            Err(what) => {
                let fired: Vec<_> = rare.iter().map(|(name, n)| format!("{name} {n}")).collect();
                let fired = if fired.is_empty() {
                    "none".to_owned()
                } else {
                    fired.join(", ")
                };
                self.world.push_str(&format!("; rare paths fired: {fired}"));
                Err(self.failure(what, recent, hash))
            }
        }
    }

    pub(crate) fn failure(
        &self,
        what: String,
        mut recent: Vec<String>,
        trace_hash: u64,
    ) -> Failure {
        recent.drain(..recent.len().saturating_sub(40));
        Failure {
            seed: self.seed,
            what,
            world: self.world.clone(),
            recent,
            trace_hash,
        }
    }
}

/// What a run that succeeded reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Report {
    /// The seed it ran with.
    pub seed: u64,
    /// A hash of everything the run decided: the network's events and the
    /// order tasks ran in. The same seed gives the same hash.
    pub trace_hash: u64,
    /// Virtual time from the start until the last client returned.
    pub elapsed: Duration,
    /// The network's last events (at most 256, oldest first), each
    /// `<virtual ns> <what>`: the end of the event log `trace_hash` hashes.
    pub recent: Vec<String>,
    /// The rare paths the run took ([`Sim::rare_paths`]), by name, with
    /// how often; none that it did not take.
    pub rare: BTreeMap<&'static str, u64>,
}

/// A run that failed: its seed, what went wrong, and the network's last
/// events. Its `Display` says how to replay it.
#[derive(Clone, Debug)]
pub struct Failure {
    /// The seed that fails: run it again with [`SEED_VAR`] set to it.
    pub seed: u64,
    /// What went wrong.
    pub what: String,
    /// What the seed chose for the world: buffer sizes, latency, faults;
    /// and the rare paths the run took, with how often.
    pub world: String,
    /// The network's last events, oldest first.
    pub recent: Vec<String>,
    /// The run's trace hash, up to the failure.
    pub trace_hash: u64,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "simulation with seed {} failed: {}",
            self.seed, self.what
        )?;
        writeln!(f, "replay it with {SEED_VAR}={}", self.seed)?;
        writeln!(f, "the world: {}", self.world)?;
        writeln!(f, "the network's last events (virtual ns):")?;
        for line in &self.recent {
            writeln!(f, "  {line}")?;
        }
        write!(f, "trace {:016x}", self.trace_hash)
    }
}

impl std::error::Error for Failure {}

/// The world a run chose, in a line.
fn describe(config: &NetConfig, partitions: bool, stops: bool, crashes: bool) -> String {
    let micros = |nanos: u64| nanos / 1_000;
    let f = &config.faults;
    let mut faults = Vec::new();
    for (name, chance) in [
        ("resets", f.reset),
        ("UDP loss", f.udp_loss),
        ("UDP duplication", f.udp_duplicate),
        ("UDP reordering", f.udp_reorder),
    ] {
        if chance > 0.0 {
            faults.push(format!("{name} {chance}"));
        }
    }
    faults.extend(partitions.then(|| "partitions".to_owned()));
    faults.extend(stops.then(|| "host stops".to_owned()));
    faults.extend(crashes.then(|| "host crashes".to_owned()));
    let faults = if faults.is_empty() {
        "none".to_owned()
    } else {
        faults.join(", ")
    };
    format!(
        "TCP send buffers {} B, receive buffers {} B; latency {}..{} µs; faults: {faults}",
        config.send_buffer,
        config.recv_buffer,
        micros(config.latency.start),
        micros(config.latency.end),
    )
}

/// The partitions, stops and crashes a run injects.
struct Chaos {
    rng: Rng,
    partitions: bool,
    stops: bool,
    crashes: bool,
}

/// A host started: its name, whether it is a client, and its task until
/// it returns (or crashes).
type Running = (String, bool, Option<JoinHandle<io::Result<()>>>);

/// The hosts started, shared by the run and the chaos that crashes and
/// restarts them.
type Hosts = Rc<RefCell<Vec<Running>>>;

/// The tag host `i`'s tasks carry.
fn host_tag(i: usize) -> u32 {
    u32::try_from(i + 1).unwrap_or(u32::MAX)
}

/// Starts the hosts, then waits for the clients; `Err` says what failed.
async fn drive(hosts: Vec<Host>, world: &Arc<Mutex<World>>, chaos: Chaos) -> Result<(), String> {
    let running: Hosts = Rc::default();
    let mut servers = Vec::new();
    let mut restartable = Vec::new();
    for (i, host) in hosts.into_iter().enumerate() {
        let task = with_tag(host_tag(i), || spawn_local((host.run)()));
        if !host.client {
            servers.push(world.lock().hosts[i]);
        }
        restartable.extend(host.restart.map(|restart| (i, restart)));
        running
            .borrow_mut()
            .push((host.name, host.client, Some(task)));
    }
    let crashes = if chaos.crashes {
        restartable
    } else {
        Vec::new()
    };
    let chaos_on = chaos.partitions || chaos.stops || !crashes.is_empty();
    let mut chaos = chaos_on.then(|| {
        let crashes = Crashes {
            hosts: running.clone(),
            restartable: crashes,
        };
        spawn_local(inject(chaos, world.clone(), servers, crashes))
    });
    poll_fn(|cx| {
        // The chaos is the harness's own code: its panic fails the run,
        // rather than leaving the world without the faults it was given.
        if let Some(task) = &mut chaos
            && let Poll::Ready(done) = Pin::new(task).poll(cx)
        {
            chaos = None;
            if let Err(err) = done {
                return Poll::Ready(Err(format!("the chaos task: {err}")));
            }
        }
        poll_hosts(&mut running.borrow_mut(), world, cx)
    })
    .await
}

/// The hosts chaos may crash: by index, with the async fn that restarts
/// each.
struct Crashes {
    hosts: Hosts,
    restartable: Vec<(usize, Restart)>,
}

impl Crashes {
    /// Crashes a host drawn from `rng`, and restarts it after `outage`.
    async fn crash(&self, rng: &mut Rng, world: &Arc<Mutex<World>>, outage: Duration) {
        let (i, restart) = &self.restartable[rng.below(self.restartable.len() as u64) as usize];
        let host = world.lock().hosts[*i];
        world.lock().net.note_host(host, "crash");
        // Its task is dropped, not awaited: aborted with the rest, it is
        // no failure of the run.
        self.hosts.borrow_mut()[*i].2 = None;
        rt_sim::abort_tagged(host_tag(*i));
        sleep(outage).await;
        world.lock().net.note_host(host, "restart");
        let task = with_tag(host_tag(*i), || spawn_local(restart()));
        self.hosts.borrow_mut()[*i].2 = Some(task);
    }
}

/// One look at the hosts and the world's state.
fn poll_hosts(
    running: &mut [Running],
    world: &Arc<Mutex<World>>,
    cx: &mut Context<'_>,
) -> Poll<Result<(), String>> {
    for (name, client, slot) in running.iter_mut() {
        let Some(task) = slot else { continue };
        let Poll::Ready(done) = Pin::new(task).poll(cx) else {
            continue;
        };
        *slot = None;
        let role = if *client { "client" } else { "host" };
        match done {
            Ok(Ok(())) => log::debug!("{role} {name:?} returned"),
            Ok(Err(err)) => return Poll::Ready(Err(format!("{role} {name:?} failed: {err}"))),
            Err(err) => return Poll::Ready(Err(format!("{role} {name:?}: {err}"))),
        }
    }
    if running
        .iter()
        .all(|(_, client, slot)| !client || slot.is_none())
    {
        return Poll::Ready(Ok(()));
    }
    let mut world = world.lock();
    let unfinished = || {
        let names: Vec<_> = running
            .iter()
            .filter(|(_, client, slot)| *client && slot.is_some())
            .map(|(name, _, _)| name.as_str())
            .collect();
        names.join(", ")
    };
    if world.expired {
        return Poll::Ready(Err(format!(
            "the deadline passed with clients unfinished: {}{}",
            unfinished(),
            tasks()
        )));
    }
    if world.stuck {
        return Poll::Ready(Err(format!(
            "deadlock: nothing left to run, no timer, nothing in flight, and clients unfinished: {}{}",
            unfinished(),
            tasks()
        )));
    }
    if world.livelock {
        return Poll::Ready(Err(format!(
            "livelock: the loop turned {} times with the virtual clock standing at {:?}, \
             and clients unfinished: {}{}",
            world.progress_bound,
            Duration::from_nanos(world.now),
            unfinished(),
            tasks()
        )));
    }
    world.on_stuck = Some(cx.waker().clone());
    Poll::Pending
}

/// Injects up to [`CHAOS_ROUNDS`] partitions, stops and crashes, each
/// healed after a while.
async fn inject(
    mut chaos: Chaos,
    world: Arc<Mutex<World>>,
    servers: Vec<HostId>,
    crashes: Crashes,
) {
    let hosts = world.lock().hosts.clone();
    for _ in 0..CHAOS_ROUNDS {
        sleep(Duration::from_millis(chaos.rng.range(5..200))).await;
        // Drawn only in a world with a restartable host: every other
        // world's chaos stays what its seed made it before crashes were.
        if !crashes.restartable.is_empty() && chaos.rng.chance(0.5) {
            let outage = Duration::from_millis(chaos.rng.range(10..400));
            crashes.crash(&mut chaos.rng, &world, outage).await;
            continue;
        }
        let stop =
            chaos.stops && !servers.is_empty() && (!chaos.partitions || chaos.rng.chance(0.5));
        let outage = Duration::from_millis(chaos.rng.range(10..400));
        if stop {
            let host = servers[chaos.rng.below(servers.len() as u64) as usize];
            world.lock().net.stop_host(host);
            sleep(outage).await;
            world.lock().net.start_host(host);
        } else if chaos.partitions && hosts.len() > 1 {
            let a = chaos.rng.below(hosts.len() as u64) as usize;
            let b = (a + 1 + chaos.rng.below(hosts.len() as u64 - 1) as usize) % hosts.len();
            world.lock().net.partition(hosts[a], hosts[b]);
            sleep(outage).await;
            world.lock().net.heal(hosts[a], hosts[b]);
        }
    }
}
