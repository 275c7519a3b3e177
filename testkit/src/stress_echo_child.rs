//! The line echo server (examples/line_echo/handler.rs) in a child process,
//! for the stress tests that judge the server alone: its descriptors, its
//! memory and its CPU, read from /proc/<pid>, undisturbed by the clients
//! and by the test harness.
//!
//! The test binary runs itself again, only the calling test, with
//! [`ROLE`] set to the server's settings. The child binds 127.0.0.1:0,
//! prints its address, and then answers commands on its stdin:
//!
//! - `stats`: one line of counters (connections by how they ended, and the
//!   runtime's metrics);
//! - end of input: stop serving and exit 0.
//!
//! Start each test that uses it with
//! `if stress_echo_child::is_child() { return stress_echo_child::serve(); }`.

use std::io::{self, BufRead, BufReader, Lines, Write};
use std::net::SocketAddr;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::handler::{self, Config, End};
use crate::{net_proc, util};

/// The environment variable that makes the test binary a server child; its
/// value is the settings.
pub const ROLE: &str = "IOLOOP_STRESS_ECHO_CHILD";
/// What the child prints before each report, to tell it from the
/// harness's own output.
const TAG: &str = "stress-echo-child:";

/// How the child serves.
#[derive(Clone, Copy, Debug)]
pub struct Settings {
    pub max_line: usize,
    pub idle_timeout: Duration,
    /// Lower `RLIMIT_NOFILE` once listening, leaving this many descriptor
    /// numbers free (the EMFILE tests).
    pub free_fds: Option<usize>,
}

impl Default for Settings {
    fn default() -> Self {
        let config = Config::default();
        Settings {
            max_line: config.max_line,
            idle_timeout: config.idle_timeout,
            free_fds: None,
        }
    }
}

impl Settings {
    fn encode(&self) -> String {
        format!(
            "{} {} {}",
            self.max_line,
            self.idle_timeout.as_millis(),
            self.free_fds.map_or(-1, |n| n as i64)
        )
    }

    fn decode(s: &str) -> Settings {
        let v: Vec<i64> = s.split(' ').map(|x| x.parse().expect("a number")).collect();
        Settings {
            max_line: v[0] as usize,
            idle_timeout: Duration::from_millis(v[1] as u64),
            free_fds: (v[2] >= 0).then_some(v[2] as usize),
        }
    }
}

/// Returns `true` in the child.
pub fn is_child() -> bool {
    net_proc::is_child(ROLE)
}

/// One `stats` report.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    pub accepted: u64,
    pub closed: u64,
    pub idle: u64,
    pub too_long: u64,
    pub stopped: u64,
    pub failed: u64,
    pub io_sources: u64,
    pub live_tasks: u64,
    pub live_timers: u64,
    pub timer_heap_len: u64,
}

impl Stats {
    /// Connections that have ended, however.
    pub fn ended(&self) -> u64 {
        self.closed + self.idle + self.too_long + self.stopped + self.failed
    }

    fn parse(line: &str) -> Stats {
        let mut s = Stats::default();
        for pair in line.split_whitespace() {
            let (k, v) = pair.split_once('=').expect("key=value");
            let v: u64 = v.parse().expect("a count");
            match k {
                "accepted" => s.accepted = v,
                "closed" => s.closed = v,
                "idle" => s.idle = v,
                "too_long" => s.too_long = v,
                "stopped" => s.stopped = v,
                "failed" => s.failed = v,
                "io_sources" => s.io_sources = v,
                "live_tasks" => s.live_tasks = v,
                "live_timers" => s.live_timers = v,
                "timer_heap_len" => s.timer_heap_len = v,
                _ => panic!("unknown stat {k}"),
            }
        }
        s
    }
}

/// The parent's end of a server child. Dropping it kills the child if it
/// is still running (a failed test must not leave it behind).
pub struct EchoChild {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Lines<BufReader<ChildStdout>>,
    pub addr: SocketAddr,
    pub pid: u32,
}

impl EchoChild {
    /// Starts the child for `test` (this test's full name, for `--exact`:
    /// see [`net_proc::test_name`]).
    /// `Ok(Err(reason))` if the child could not set itself up as asked
    /// (its descriptor limit), in which case the test should skip.
    pub fn start(test: &str, settings: Settings) -> io::Result<Result<EchoChild, String>> {
        let mut child = Command::new(std::env::current_exe()?)
            .args(["--exact", test, "--nocapture", "--test-threads=1"])
            .env(ROLE, settings.encode())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()?;
        let stdin = child.stdin.take();
        let mut lines = net_proc::child_lines(&mut child);
        let first = net_proc::expect_line(&mut lines, TAG)?;
        if let Some(reason) = first.strip_prefix("SKIP") {
            child.wait()?;
            return Ok(Err(reason.trim().to_string()));
        }
        let addr = first
            .strip_prefix("LISTENING")
            .and_then(|a| a.trim().parse().ok())
            .ok_or_else(|| io::Error::other(format!("unexpected first line {first:?}")))?;
        let pid = child.id();
        Ok(Ok(EchoChild {
            child,
            stdin,
            lines,
            addr,
            pid,
        }))
    }

    /// The child's counters, now.
    pub fn stats(&mut self) -> io::Result<Stats> {
        let stdin = self.stdin.as_mut().expect("the child is running");
        stdin.write_all(b"stats\n")?;
        stdin.flush()?;
        let line = net_proc::expect_line(&mut self.lines, TAG)?;
        let line = line
            .strip_prefix("STATS")
            .ok_or_else(|| io::Error::other(format!("expected STATS, got {line:?}")))?;
        Ok(Stats::parse(line))
    }

    /// Asks for stats every few milliseconds until `done` holds for them;
    /// fails after `limit` with the last ones.
    pub fn wait_for(
        &mut self,
        limit: Duration,
        done: impl Fn(&Stats) -> bool,
    ) -> io::Result<Stats> {
        let start = Instant::now();
        loop {
            let stats = self.stats()?;
            if done(&stats) {
                return Ok(stats);
            }
            if start.elapsed() > limit {
                return Err(io::Error::other(format!(
                    "the server child did not get there in {limit:?}: {stats:?}"
                )));
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Ends the child's input (it stops serving) and checks it exits 0.
    pub fn finish(mut self) -> io::Result<()> {
        drop(self.stdin.take());
        let status = self.child.wait()?;
        if !status.success() {
            return Err(io::Error::other(format!("the server child: {status}")));
        }
        Ok(())
    }
}

impl Drop for EchoChild {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            // A test failed with the child still serving: end it, by its pid.
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Connections by how they ended, counted by the child's `on_event`.
#[derive(Default)]
struct Ends {
    accepted: AtomicU64,
    closed: AtomicU64,
    idle: AtomicU64,
    too_long: AtomicU64,
    stopped: AtomicU64,
    failed: AtomicU64,
}

/// The child: serves line echo until its stdin ends.
pub fn serve() -> io::Result<()> {
    let settings = Settings::decode(&std::env::var(ROLE).expect("the role variable"));
    let config = Config {
        max_line: settings.max_line,
        idle_timeout: settings.idle_timeout,
        ..Config::default()
    };
    let rt = ioloop::Runtime::new()?;
    let ends = Arc::new(Ends::default());
    let stop = util::signal();
    let listener = rt.block_on(ioloop::net::TcpListener::bind("127.0.0.1:0"))?;
    let addr = listener.local_addr()?;
    if let Some(free) = settings.free_fds
        && let Err(err) = limit_leaving(free).and_then(net_proc::set_fd_limit)
    {
        println!("{TAG} SKIP cannot lower RLIMIT_NOFILE: {err}");
        return Ok(());
    }

    // Commands: a thread of its own, so they are answered whatever the
    // loop is doing. It opens no descriptor (the child may be at EMFILE).
    let (handle, e, s) = (rt.handle().clone(), ends.clone(), stop.clone());
    std::thread::spawn(move || {
        for line in io::stdin().lock().lines() {
            if line.as_deref().unwrap_or_default() == "stats" {
                let m = loop_metrics(&handle);
                let n = |c: &AtomicU64| c.load(Ordering::SeqCst);
                println!(
                    "{TAG} STATS accepted={} closed={} idle={} too_long={} stopped={} failed={} \
                     io_sources={} live_tasks={} live_timers={} timer_heap_len={}",
                    n(&e.accepted),
                    n(&e.closed),
                    n(&e.idle),
                    n(&e.too_long),
                    n(&e.stopped),
                    n(&e.failed),
                    m.io_sources,
                    m.live_tasks,
                    m.live_timers,
                    m.timer_heap_len,
                );
            }
        }
        s.set();
        // Input ends when the parent is done, or has died: either way the
        // child must go. A healthy loop returns long before this.
        std::thread::sleep(Duration::from_secs(60));
        std::process::exit(3);
    });

    println!("{TAG} LISTENING {addr}");
    let on_event = move |_peer, end: Option<&End>| {
        let counter = match end {
            None => &ends.accepted,
            Some(End::Closed) => &ends.closed,
            Some(End::Idle) => &ends.idle,
            Some(End::LineTooLong) => &ends.too_long,
            Some(End::Stopped) => &ends.stopped,
            Some(End::Failed(_)) => &ends.failed,
        };
        counter.fetch_add(1, Ordering::SeqCst);
    };
    rt.block_on(handler::serve(listener, config, on_event, stop.wait()))?;
    // Connections still open are dropped with the runtime.
    Ok(())
}

/// The runtime's metrics as a task sees them, minus the task itself.
///
/// Read from inside the loop, not with `handle.metrics()` from this thread:
/// the loop publishes its figures at the end of a tick, after the poll, so
/// while it sleeps in the poller another thread sees the tick before the
/// last one (tasks that have finished still counted) for as long as it
/// sleeps. The task spawned here wakes the loop; by the time it runs, the
/// tick that took it in has published, itself included.
fn loop_metrics(handle: &ioloop::Handle) -> ioloop::Metrics {
    let (tx, rx) = std::sync::mpsc::channel();
    drop(handle.spawn(async move {
        let _ = tx.send(ioloop::Handle::current().metrics());
    }));
    let mut m = rx
        .recv_timeout(Duration::from_secs(60))
        .expect("the server's loop answered within a minute");
    m.live_tasks -= 1;
    m
}

/// The `RLIMIT_NOFILE` under which exactly `free` descriptor numbers are
/// unused: new descriptors take the lowest free number and fail with
/// `EMFILE` at or above the limit, and open ones may leave gaps.
fn limit_leaving(free: usize) -> io::Result<u64> {
    let open = net_proc::open_fds()?;
    let mut unused = 0;
    for fd in 0.. {
        if !open.contains(&fd) {
            unused += 1;
            if unused == free {
                return Ok(fd as u64 + 1);
            }
        }
    }
    unreachable!()
}
