//! The stall detector: a poll that blocks the loop is reported while it
//! still blocks, with the task's spawn location, and counted; nothing is
//! reported with the detector off, or for a task that is only slow across
//! many short polls.
//!
//! Each blocking task waits on a std mutex the test holds, so it stays
//! blocked until the test has seen the warning: no sleep decides the
//! outcome. Records are told apart by the spawn location in them, unique
//! to each test.

use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

use testkit::log_capture;

/// Only a safety net: every wait ends as soon as what it waits for happens.
const SAFETY: Duration = Duration::from_secs(20);

fn runtime(threshold: Option<Duration>) -> ioloop::Runtime {
    ioloop::Runtime::builder()
        .slow_poll_threshold(threshold)
        .build()
        .unwrap()
}

#[test]
fn a_task_blocked_in_a_poll_is_reported_while_it_blocks() {
    let logs = log_capture::capture();
    let rt = runtime(Some(Duration::from_millis(40)));
    let lock = Arc::new(Mutex::new(()));
    let guard = lock.lock().unwrap();
    let (started_tx, started) = mpsc::channel();
    let blocked = lock.clone();
    let line = line!() + 1;
    let task = rt.spawn(async move {
        started_tx.send(()).unwrap();
        // Blocks the loop until the test lets go.
        drop(blocked.lock().unwrap());
    });
    let location = format!("{}:{line}:", file!());
    std::thread::scope(|s| {
        let runner = s.spawn(|| rt.block_on(task));
        started.recv_timeout(SAFETY).expect("the task never ran");
        let warning = logs
            .wait_for(&location, SAFETY)
            .expect("no warning about the blocked task");
        assert_eq!(warning.level, log_capture::Level::Warn);
        assert!(warning.message.contains("task #"), "{}", warning.message);
        assert!(
            warning.message.contains("running one poll"),
            "{}",
            warning.message
        );
        // Counted before it was logged.
        assert_eq!(rt.handle().metrics().slow_polls, 1);
        drop(guard);
        runner.join().unwrap().unwrap();
    });
    // This task's records only: another test's runtime, dropped meanwhile,
    // says its own poll returned too.
    std::iter::from_fn(|| logs.wait_for(&location, SAFETY))
        .find(|line| line.message.contains("returned from its slow poll"))
        .expect("no line when the poll returned");
    // One slow poll, however many warnings it took.
    assert_eq!(rt.handle().metrics().slow_polls, 1);
}

#[test]
fn a_blocked_block_on_future_is_reported_as_such() {
    let logs = log_capture::capture();
    let rt = runtime(Some(Duration::from_millis(40)));
    let lock = Mutex::new(());
    let guard = lock.lock().unwrap();
    let (started_tx, started) = mpsc::channel();
    std::thread::scope(|s| {
        let (line_tx, line) = mpsc::channel();
        let (rt, lock) = (&rt, &lock);
        s.spawn(move || {
            line_tx.send(line!() + 1).unwrap();
            rt.block_on(async {
                started_tx.send(()).unwrap();
                drop(lock.lock().unwrap());
            })
        });
        let line = line.recv().unwrap();
        started.recv_timeout(SAFETY).expect("the future never ran");
        let location = format!("{}:{line}:", file!());
        let warning = logs
            .wait_for(&location, SAFETY)
            .expect("no warning about the blocked block_on future");
        assert!(
            warning.message.contains("block_on future"),
            "{}",
            warning.message
        );
        assert!(rt.handle().metrics().slow_polls >= 1);
        drop(guard);
    });
}

#[test]
fn nothing_is_reported_with_the_threshold_off() {
    let logs = log_capture::capture();
    let rt = runtime(None);
    let line = line!() + 1;
    let task = rt.spawn(async {
        // Far over the default threshold; no watchdog to see it.
        std::thread::sleep(Duration::from_millis(300));
    });
    rt.block_on(task).unwrap();
    assert_eq!(rt.handle().metrics().slow_polls, 0);
    let location = format!("{}:{line}:", file!());
    assert!(logs.seen(&location).is_empty());
}

#[test]
fn a_task_slow_across_many_short_polls_is_not_a_stall() {
    let logs = log_capture::capture();
    let rt = runtime(Some(Duration::from_millis(200)));
    let line = line!() + 1;
    let task = rt.spawn(async {
        // 300 ms of work in all, never more than 5 ms in one poll.
        for _ in 0..60 {
            std::thread::sleep(Duration::from_millis(5));
            ioloop::yield_now().await;
        }
    });
    rt.block_on(task).unwrap();
    assert_eq!(rt.handle().metrics().slow_polls, 0);
    let location = format!("{}:{line}:", file!());
    assert!(logs.seen(&location).is_empty());
}

/// Issue 28, item 9: `slow_poll_threshold(Some(Duration::MAX))` panicked
/// the watchdog thread at once ("overflow when adding duration to
/// instant"): the detector stopped silently, and under `panic = "abort"`
/// the process died. Dropping the runtime joins the watchdog, so by then
/// any panic of it has been recorded.
#[test]
fn slow_poll_threshold_of_duration_max_does_not_panic_the_watchdog() {
    let panics = testkit::util::panicked_threads();
    for threshold in [
        Duration::MAX,
        Duration::MAX / 2,
        Duration::from_secs(u64::MAX / 4),
        Duration::from_nanos(1),
    ] {
        let rt = runtime(Some(threshold));
        rt.block_on(async { ioloop::time::sleep(Duration::from_millis(5)).await });
        drop(rt);
        let watchdog = panics
            .lock()
            .unwrap()
            .iter()
            .filter(|name| *name == "ioloop-watchdog")
            .count();
        assert_eq!(
            watchdog, 0,
            "the watchdog panicked with a threshold of {threshold:?}"
        );
    }
}

/// The role variable of the child that runs a stalling program with no
/// logger.
const NO_LOGGER_CHILD: &str = "IOLOOP_STALL_NO_LOGGER_CHILD";

/// The program a newcomer writes: `#[ioloop::main]`, the default detector
/// (100 ms), no logger, a task that blocks the loop for half a second, and
/// an exit right after.
#[ioloop::main]
async fn a_program_that_stalls() {
    let blocking = ioloop::spawn(async { std::thread::sleep(Duration::from_millis(500)) });
    blocking.await.unwrap();
}

/// Issue 30: with no logger installed the warnings went nowhere, and the
/// "returned" line was lost when the program exited soon after. Now both
/// reach stderr, naming the spawn site, before the process exits.
#[test]
fn with_no_logger_a_stall_is_printed_on_stderr_naming_the_spawn_site() -> std::io::Result<()> {
    if testkit::net_proc::is_child(NO_LOGGER_CHILD) {
        a_program_that_stalls();
        return Ok(());
    }
    let name = testkit::net_proc::test_name(
        module_path!(),
        "with_no_logger_a_stall_is_printed_on_stderr_naming_the_spawn_site",
    );
    let out = testkit::util::within(SAFETY, move || {
        std::process::Command::new(std::env::current_exe()?)
            .args(["--exact", &name, "--nocapture", "--test-threads=1"])
            .env(NO_LOGGER_CHILD, "1")
            .output()
    })?;
    assert!(out.status.success(), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let spawned_here = format!("(spawned at {}:", file!());
    let stalled = stderr
        .lines()
        .find(|l| l.contains("has been running one poll"))
        .unwrap_or_else(|| panic!("no stall warning on stderr: {stderr}"));
    assert!(stalled.contains(&spawned_here), "{stalled}");
    let returned = stderr
        .lines()
        .find(|l| l.contains("returned from its slow poll"))
        .unwrap_or_else(|| panic!("the poll's end was lost at exit: {stderr}"));
    assert!(returned.contains(&spawned_here), "{returned}");
    Ok(())
}
