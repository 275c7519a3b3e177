//! Timers under load: the per-request timeout pattern, 100,000 times on
//! each side of a line echo conversation, while other timers keep firing.
//! None fires early, none is lost, and neither runtime's timer heap grows
//! with the number of timers cancelled.
//!
//! The server is examples/line_echo/handler.rs in a child process: every
//! line it waits for is a `read_line` under its idle timeout, armed and
//! cancelled once per request. The clients wrap each request in a
//! `timeout` of their own, also armed and cancelled. Beside them, on the
//! client runtime, tasks sleep short random durations over and over (each
//! must wake, and not before its deadline), and now and then a request is
//! followed by a timeout that must expire (and not before its duration).
//! Both heaps are sampled throughout: cancelled timers leave dead entries
//! behind, which must be swept, not accumulated.

use std::future::pending;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use ioloop::time::Instant;

use ioloop::io::{StreamReader, StreamWriter};
use ioloop::net::TcpStream;
use ioloop::time::{sleep, timeout};
use ioloop::{Handle, Metrics};
use stress_echo_child::{EchoChild, Settings};
use testkit::{net_proc, stress_echo_child, util};

const TEST: &str = "a_hundred_thousand_cancelled_timeouts_beside_firing_timers";
const CLIENTS: u64 = 100;
const REQUESTS: u64 = 1_000;
/// Tasks that sleep and wake, over and over, while the requests run.
const SLEEPERS: u64 = 200;
/// A request that takes this long has hung; the timeout is armed for every
/// request and, unless something is wrong, always cancelled.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// Every this many requests, a timeout that must fire.
const EXPIRE_EVERY: u64 = 25;
/// Dead heap entries tolerated above twice the live timers: the heap is
/// compacted only past 1,024 entries, and timers that fire between two
/// cancellations leave their share; a heap that kept every cancelled entry
/// would hold tens of thousands.
const HEAP_SLACK: u64 = 1_024 + 256;

#[test]
fn a_hundred_thousand_cancelled_timeouts_beside_firing_timers() -> io::Result<()> {
    let _one = crate::one_at_a_time();
    if stress_echo_child::is_child() {
        return stress_echo_child::serve();
    }
    let needed = 2 * CLIENTS + 256;
    if !util::fd_limit_at_least(needed) {
        println!("skipped: RLIMIT_NOFILE cannot be raised to {needed}");
        return Ok(());
    }
    let server = match EchoChild::start(
        &net_proc::test_name(module_path!(), TEST),
        Settings::default(),
    )? {
        Ok(server) => server,
        Err(reason) => {
            println!("skipped: {reason}");
            return Ok(());
        }
    };
    util::within(Duration::from_secs(180), move || run(server))
}

/// The largest heap seen, against the live timers at that moment.
#[derive(Debug, Default, Clone, Copy)]
struct Peak {
    heap: u64,
    live: u64,
    samples: u64,
}

impl Peak {
    fn record(&mut self, live: u64, heap: u64, side: &str) {
        assert!(
            heap <= 2 * live + HEAP_SLACK,
            "{side}: {heap} heap entries for {live} live timers"
        );
        if heap > self.heap {
            (self.heap, self.live) = (heap, live);
        }
        self.samples += 1;
    }
}

fn run(mut server: EchoChild) -> io::Result<()> {
    let addr = server.addr;
    let start = Instant::now();
    let clients = std::thread::spawn(move || ioloop::block_on(load(addr)));
    // The server's heap, sampled from here while the load runs.
    let mut server_peak = Peak::default();
    while !clients.is_finished() {
        let s = server.stats()?;
        server_peak.record(s.live_timers, s.timer_heap_len, "server");
        std::thread::sleep(Duration::from_millis(20));
    }
    let report = clients.join().expect("the client thread panicked")?;
    let elapsed = start.elapsed();

    // Nothing lost: every request answered, every sleep and expiring
    // timeout woke; nothing early (checked as they woke).
    assert_eq!(report.requests, CLIENTS * REQUESTS);
    assert_eq!(report.expired, CLIENTS * REQUESTS.div_ceil(EXPIRE_EVERY));
    assert!(report.slept >= SLEEPERS, "{report:?}");
    // The server's timers all went with their connections.
    let end = server.wait_for(Duration::from_secs(30), |s| {
        s.ended() == CLIENTS && s.live_tasks == 0
    })?;
    assert_eq!((end.closed, end.live_timers), (CLIENTS, 0), "{end:?}");
    println!(
        "{} requests in {elapsed:?}: {} timeouts armed and cancelled on each side, {} expired, \
         {} sleeps woke; largest heaps: clients {:?}, server {server_peak:?}",
        report.requests, report.requests, report.expired, report.slept, report.peak
    );
    server.finish()
}

#[derive(Debug)]
struct Report {
    requests: u64,
    expired: u64,
    slept: u64,
    peak: Peak,
}

/// The client side: request loops, sleepers, and a sampler of this
/// runtime's heap, until every request is done.
async fn load(addr: SocketAddr) -> io::Result<Report> {
    let done = Arc::new(AtomicBool::new(false));
    let slept = Arc::new(AtomicU64::new(0));
    let sleepers: Vec<_> = (0..SLEEPERS)
        .map(|i| ioloop::spawn(sleeper(i, done.clone(), slept.clone())))
        .collect();
    let sampler = {
        let done = done.clone();
        ioloop::spawn(async move {
            let mut peak = Peak::default();
            while !done.load(Ordering::SeqCst) {
                sleep(Duration::from_millis(1)).await;
                let m: Metrics = Handle::current().metrics();
                peak.record(m.live_timers, m.timer_heap_len, "clients");
            }
            peak
        })
    };
    let clients: Vec<_> = (0..CLIENTS)
        .map(|id| ioloop::spawn(client(addr, id)))
        .collect();
    let (mut requests, mut expired) = (0, 0);
    for client in clients {
        let (r, e) = client.await.expect("a client panicked")?;
        requests += r;
        expired += e;
    }
    done.store(true, Ordering::SeqCst);
    for sleeper in sleepers {
        sleeper.await.expect("a sleeper panicked");
    }
    let peak = sampler.await.expect("the sampler panicked");
    Ok(Report {
        requests,
        expired,
        slept: slept.load(Ordering::SeqCst),
        peak,
    })
}

/// `REQUESTS` round trips, each under a timeout that is cancelled when the
/// reply comes; every `EXPIRE_EVERY`th one followed by a timeout that must
/// expire. Returns (requests, expired timeouts).
async fn client(addr: SocketAddr, id: u64) -> io::Result<(u64, u64)> {
    let stream = TcpStream::connect(addr).await?;
    let mut reader = StreamReader::new(&stream);
    let mut writer = StreamWriter::new(&stream);
    assert_eq!(reader.read_line().await?, Some(&b"Hello!"[..]));
    let mut expired = 0;
    for n in 0..REQUESTS {
        let line = format!("client {id} request {n}\n");
        let reply = timeout(REQUEST_TIMEOUT, async {
            writer.write(line.as_bytes());
            writer.drain().await?;
            reader.read_line().await.map(|l| l.map(<[u8]>::to_vec))
        })
        .await
        .map_err(|_| io::Error::other(format!("client {id}: request {n} timed out")))??;
        let expected = format!("[echo] {}", line.trim_end());
        assert_eq!(reply.as_deref(), Some(expected.as_bytes()), "client {id}");
        if n % EXPIRE_EVERY == 0 {
            let d = Duration::from_micros((id * 7919 + n * 104_729) % 3_000);
            let armed = Instant::now();
            assert!(timeout(d, pending::<()>()).await.is_err());
            let waited = armed.elapsed();
            assert!(waited >= d, "a {d:?} timeout expired after {waited:?}");
            expired += 1;
        }
    }
    writer.close().await?;
    assert_eq!(reader.read_line().await?, None);
    Ok((REQUESTS, expired))
}

/// Sleeps random short durations until `done`, at least once; each sleep
/// must wake, and not before its deadline.
async fn sleeper(i: u64, done: Arc<AtomicBool>, slept: Arc<AtomicU64>) {
    let mut n = 0u64;
    loop {
        let d = Duration::from_micros((i * 15_485_863 + n * 32_452_843) % 10_000);
        let s = sleep(d);
        let deadline = s.deadline();
        s.await;
        let now = Instant::now();
        assert!(now >= deadline, "a sleep woke {:?} early", deadline - now);
        slept.fetch_add(1, Ordering::SeqCst);
        n += 1;
        if done.load(Ordering::SeqCst) {
            return;
        }
    }
}
