//! No zombie: a child dropped unawaited is reaped by its runtime, killed
//! first if `kill_on_drop` says so; a runtime shutting down reaps what it
//! can at once; and 10,000 children leave descriptors, threads and memory
//! where they were.

use std::io;
use std::time::{Duration, Instant};

use ioloop::process::{Command, Stdio};
use ioloop::time::sleep;
use testkit::{account, log_capture};

const LIMIT: Duration = Duration::from_secs(10);

use crate::child::run;
use crate::exit::pool_threads;

/// Whether `pid` is still a process (running or a zombie): `/proc/PID`.
fn exists(pid: u32) -> bool {
    std::fs::metadata(format!("/proc/{pid}")).is_ok()
}

/// Waits on the loop, up to 10 s, for `pid` to be gone (reaped).
async fn gone(pid: u32) -> bool {
    let start = Instant::now();
    while exists(pid) {
        if start.elapsed() > Duration::from_secs(10) {
            return false;
        }
        sleep(Duration::from_millis(5)).await;
    }
    true
}

#[test]
fn a_child_dropped_unawaited_is_reaped_once_it_exits() -> io::Result<()> {
    run(async || {
        let child = Command::new("sleep").arg("0.2").spawn()?;
        let pid = child.id().unwrap();
        drop(child);
        // Not killed: still there while it sleeps.
        sleep(Duration::from_millis(50)).await;
        assert!(exists(pid));
        assert!(gone(pid).await, "child {pid} left a zombie");
        // One that has already exited is reaped by the drop itself.
        let child = Command::new("true").spawn()?;
        let pid = child.id().unwrap();
        while std::fs::read_to_string(format!("/proc/{pid}/stat"))?
            .split(' ')
            .nth(2)
            != Some("Z")
        {
            sleep(Duration::from_millis(1)).await;
        }
        drop(child);
        assert!(!exists(pid));
        Ok(())
    })
}

/// The reaper says what it did: a dropped child's exit is logged as
/// reaped, and only a child still running as its runtime shuts down is
/// reported left behind (with its pid).
#[test]
fn the_reaper_logs_a_reaped_child_and_warns_only_of_one_left_running() -> io::Result<()> {
    let _serial = account::serial();
    let logs = log_capture::capture();
    let quiet = Duration::from_millis(200);
    let rt = ioloop::Runtime::new()?;
    let (reaped, left) = rt.block_on(async {
        // `cat` waits for its stdin, which the `Child` holds: it is still
        // running when the drop looks, and exits once the pipe closes
        // (after the drop's own code), so the reaper task reaps it.
        let quick = Command::new("cat")
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .spawn()?;
        let quick_pid = quick.id().unwrap();
        let slow = Command::new("sleep").arg("0.3").spawn()?;
        let slow_pid = slow.id().unwrap();
        assert!(format!("{quick:?}").contains(&quick_pid.to_string()));
        drop((quick, slow));
        assert!(gone(quick_pid).await);
        Ok::<_, io::Error>((quick_pid, slow_pid))
    })?;
    assert!(
        logs.wait_for(&format!("reaped child {reaped}"), LIMIT)
            .is_some()
    );
    assert!(
        logs.wait_for(&format!("child {reaped} still running"), quiet)
            .is_none()
    );
    drop(rt);
    let warning = logs.wait_for(&format!("child {left} still running"), LIMIT);
    assert_eq!(
        warning.expect("a warning for the child left").level,
        log::Level::Warn
    );
    // It exits on its own; this test process reaps it, as init would.
    assert_eq!(reap_by_pid(left), left as i32);
    Ok(())
}

#[test]
fn kill_on_drop_kills_and_reaps_a_dropped_child() -> io::Result<()> {
    run(async || {
        for sigchld in [false, true] {
            let child = Command::new("sleep")
                .arg("100")
                .kill_on_drop(true)
                .wait_with_sigchld(sigchld)
                .spawn()?;
            let pid = child.id().unwrap();
            drop(child);
            assert!(gone(pid).await, "child {pid} still there");
        }
        // Without it, a dropped child runs on.
        let child = Command::new("sleep").arg("100").spawn()?;
        let pid = child.id().unwrap();
        drop(child);
        sleep(Duration::from_millis(50)).await;
        assert!(exists(pid));
        kill_from_outside(pid);
        assert!(gone(pid).await);
        Ok(())
    })
}

/// Kills `pid` with SIGKILL through `kill(1)`, as another program would.
fn kill_from_outside(pid: u32) {
    let status = std::process::Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .status();
    assert!(status.unwrap().success());
}

#[test]
fn a_runtime_shutting_down_reaps_its_killed_children_at_once() -> io::Result<()> {
    let _serial = account::serial();
    let fds = account::open_fds();
    let rt = ioloop::Runtime::new()?;
    let (killed, running) = rt.block_on(async {
        // Killed on drop, with a read of its stdout pending.
        let mut killed = Command::new("cat")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()?;
        let mut running = Command::new("sleep").arg("0.3").spawn()?;
        let pids = (killed.id().unwrap(), running.id().unwrap());
        // Both held by a task that never finishes, so the runtime's
        // shutdown is what drops them.
        drop(ioloop::spawn(async move {
            let _held = &mut running;
            let mut out = killed.stdout.take().unwrap();
            let mut buf = [0; 8];
            let _ = ioloop::io::AsyncReadExt::read(&mut out, &mut buf).await;
            unreachable!("cat was sent nothing");
        }));
        ioloop::yield_now().await;
        Ok::<_, io::Error>(pids)
    })?;
    let start = Instant::now();
    drop(rt);
    // Killed on drop, then reaped as the runtime shut down.
    assert!(!exists(killed), "the killed child was not reaped");
    // The other ran on: the process's init reaps it once this test
    // process exits; it is a zombie once it exits, and this waits for it.
    assert!(exists(running));
    let reaped = reap_by_pid(running);
    assert_eq!(reaped, running as i32);
    assert!(start.elapsed() < Duration::from_secs(5));
    // No descriptor left: pipes, pidfds and the runtime's own.
    assert_eq!(account::open_fds(), fds);
    Ok(())
}

/// 10,000 children spawned with all three pipes and waited for, 50 at a
/// time: descriptors, runtime threads and memory back where they were.
/// `IOLOOP_PROCESS_CHURN` sets another count (the fast set of mutation
/// testing, `.ci/mutants`, runs 500: 10,000 take 15 s).
#[test]
fn churn_of_10000_children_leaves_nothing_behind() -> io::Result<()> {
    let count =
        std::env::var("IOLOOP_PROCESS_CHURN").map_or(10_000, |n| n.parse().expect("a count"));
    run(async move || {
        // A warm-up round: the runtime's tables and the allocator settle.
        churn(500).await?;
        let (fds, threads, rss) = (account::open_fds(), pool_threads(), account::rss_bytes());
        churn(count).await?;
        assert_eq!(account::open_fds(), fds);
        assert_eq!(pool_threads(), threads);
        let grown = account::rss_bytes().saturating_sub(rss);
        eprintln!(
            "{count} children: {fds} descriptors, {threads} pool threads, RSS grew {grown} bytes"
        );
        assert!(
            grown < 4 << 20,
            "RSS grew by {grown} bytes over 10,000 children"
        );
        Ok(())
    })
}

async fn churn(n: usize) -> io::Result<()> {
    const AT_ONCE: usize = 50;
    let mut left = n;
    while left > 0 {
        let batch = left.min(AT_ONCE);
        left -= batch;
        let mut waits = Vec::with_capacity(batch);
        for _ in 0..batch {
            let mut child = Command::new("true")
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()?;
            waits.push(ioloop::spawn(async move { child.wait().await }));
        }
        for wait in waits {
            assert!(wait.await.expect("the waiting task")?.success());
        }
    }
    Ok(())
}

/// Waits for this process's child `pid` with `waitpid` (std offers no wait
/// for a bare pid), as init would for an orphan; returns what it returned.
fn reap_by_pid(pid: u32) -> i32 {
    let mut status = 0;
    // SAFETY: `waitpid` takes a pid and a pointer to a live `c_int`.
    unsafe { libc::waitpid(pid as i32, &mut status, 0) }
}

/// A child started and dropped as its runtime shuts down (in a task's
/// destructor), with `kill_on_drop`: the reaper task cannot run any more,
/// so the drop kills it and the reaper's own drop reaps it at once. No
/// child of this process is left, running or a zombie.
#[test]
fn a_child_dropped_as_its_runtime_shuts_down_is_killed_and_reaped() -> io::Result<()> {
    let _serial = account::serial();
    struct SpawnOnDrop(std::sync::mpsc::Sender<io::Result<u32>>);
    impl Drop for SpawnOnDrop {
        fn drop(&mut self) {
            let spawned = Command::new("sleep").arg("100").kill_on_drop(true).spawn();
            let _ = self.0.send(spawned.map(|child| child.id().unwrap()));
        }
    }
    let (tx, rx) = std::sync::mpsc::channel();
    let rt = ioloop::Runtime::new()?;
    rt.block_on(async {
        let guard = SpawnOnDrop(tx);
        drop(ioloop::spawn(async move {
            let _guard = guard;
            std::future::pending::<()>().await;
        }));
        ioloop::yield_now().await;
    });
    drop(rt);
    let pid = rx.recv().expect("the destructor ran")?;
    assert!(!exists(pid), "child {pid} left");
    let mut status = 0;
    // SAFETY: `waitpid(-1, ..., WNOHANG)` takes a pointer to a live `c_int`.
    let left = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
    assert_eq!(left, -1, "a child was left: {left}");
    Ok(())
}
