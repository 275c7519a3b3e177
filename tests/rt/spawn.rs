//! Spawning, joining, detaching and aborting tasks.

use std::panic::catch_unwind;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use testkit::util;
use util::{DropCounter, signal, within};

#[test]
fn spawn_and_join() {
    let out = ioloop::block_on(async {
        let a = ioloop::spawn(async { 40 });
        let b = ioloop::spawn(async { 2 });
        a.await.unwrap() + b.await.unwrap()
    });
    assert_eq!(out, 42);
}

#[test]
fn a_hundred_thousand_tasks_complete() {
    const N: usize = 100_000;
    let done = Arc::new(AtomicUsize::new(0));
    let d = done.clone();
    let sum = ioloop::block_on(async move {
        let handles: Vec<_> = (0..N)
            .map(|i| {
                let d = d.clone();
                ioloop::spawn(async move {
                    ioloop::yield_now().await;
                    d.fetch_add(1, Ordering::Relaxed);
                    i as u64
                })
            })
            .collect();
        let mut sum = 0;
        for h in handles {
            sum += h.await.unwrap();
        }
        ioloop::yield_now().await; // counters are published once per tick
        assert_eq!(ioloop::Handle::current().metrics().live_tasks, 0);
        sum
    });
    assert_eq!(done.load(Ordering::Relaxed), N);
    assert_eq!(sum, (N as u64 - 1) * N as u64 / 2);
}

#[test]
fn spawn_outside_a_runtime_panics_with_a_message_that_says_so() {
    let panic = catch_unwind(|| {
        drop(ioloop::spawn(async {}));
    })
    .unwrap_err();
    let message = util::panic_text(&*panic);
    assert!(message.contains("outside an ioloop runtime"), "{message}");
}

#[test]
fn dropping_the_handle_detaches_the_task() {
    let finished = signal();
    let f = finished.clone();
    ioloop::block_on(async move {
        let gate = signal();
        let g = gate.clone();
        drop(ioloop::spawn(async move {
            g.wait().await;
            f.set();
        }));
        // The task outlives its handle and still runs to the end.
        gate.set();
        ioloop::time::timeout(Duration::from_secs(10), finished.wait())
            .await
            .expect("the detached task never finished");
    });
}

#[test]
fn a_detached_task_drops_its_output_when_it_finishes() {
    let drops = Arc::new(AtomicUsize::new(0));
    let d = drops.clone();
    ioloop::block_on(async move {
        drop(ioloop::spawn(async move { DropCounter(d) }));
        for _ in 0..3 {
            ioloop::yield_now().await;
        }
    });
    assert_eq!(drops.load(Ordering::SeqCst), 1);
}

#[test]
fn abort_drops_the_future_and_reports_cancelled() -> std::io::Result<()> {
    let drops = Arc::new(AtomicUsize::new(0));
    let d = drops.clone();
    ioloop::block_on(async move {
        let task = ioloop::spawn(async move {
            let _guard = DropCounter(d);
            std::future::pending::<()>().await;
        });
        ioloop::yield_now().await; // let it start and park
        assert!(!task.is_finished());
        task.abort();
        let err = task.await.unwrap_err();
        assert!(err.is_cancelled());
        assert!(!err.is_panic());
        assert_eq!(err.to_string(), "task was cancelled");
        let io: std::io::Error = err.into();
        assert!(io.to_string().contains("cancelled"));
    });
    assert_eq!(drops.load(Ordering::SeqCst), 1);
    Ok(())
}

#[test]
fn abort_before_the_first_poll_never_runs_the_task() {
    let ran = Arc::new(AtomicUsize::new(0));
    let r = ran.clone();
    ioloop::block_on(async move {
        let task = ioloop::spawn(async move {
            r.fetch_add(1, Ordering::SeqCst);
        });
        task.abort();
        assert!(task.await.unwrap_err().is_cancelled());
    });
    assert_eq!(ran.load(Ordering::SeqCst), 0);
}

#[test]
fn abort_after_completion_changes_nothing() {
    ioloop::block_on(async {
        let task = ioloop::spawn(async { 5 });
        while !task.is_finished() {
            ioloop::yield_now().await;
        }
        task.abort();
        assert_eq!(task.await.unwrap(), 5);
    });
}

/// An abort that lands while the task is being polled (here, from the
/// task itself) drops the future as that poll returns: `b`, queued behind
/// the aborted task, finds its future gone already.
#[test]
fn an_abort_during_a_poll_drops_the_future_as_the_poll_returns() {
    let drops = Arc::new(AtomicUsize::new(0));
    let (d, seen) = (drops.clone(), drops.clone());
    let seen_by_b = ioloop::block_on(async move {
        let slot: Arc<std::sync::Mutex<Option<ioloop::JoinHandle<()>>>> = Default::default();
        let s = slot.clone();
        let a = ioloop::spawn(async move {
            let _guard = DropCounter(d);
            let own = s.lock().unwrap().take().expect("set before the task runs");
            own.abort();
            std::future::pending::<()>().await;
        });
        *slot.lock().unwrap() = Some(a);
        let b = ioloop::spawn(async move { seen.load(Ordering::SeqCst) });
        b.await.unwrap()
    });
    assert_eq!(
        seen_by_b, 1,
        "the aborted future was still alive when the next task ran"
    );
    assert_eq!(drops.load(Ordering::SeqCst), 1);
}

#[test]
fn a_task_can_abort_itself_and_stops_at_its_next_await() {
    let drops = Arc::new(AtomicUsize::new(0));
    let reached = Arc::new(AtomicUsize::new(0));
    let (d, r) = (drops.clone(), reached.clone());
    ioloop::block_on(async move {
        let slot: Arc<std::sync::Mutex<Option<ioloop::JoinHandle<()>>>> = Default::default();
        let s = slot.clone();
        let handle = ioloop::spawn(async move {
            let _guard = DropCounter(d);
            loop {
                let own = s.lock().unwrap().take();
                if let Some(own) = own {
                    own.abort(); // and detach: the handle is dropped here
                    break;
                }
                ioloop::yield_now().await;
            }
            ioloop::yield_now().await;
            r.fetch_add(1, Ordering::SeqCst);
        });
        *slot.lock().unwrap() = Some(handle);
        for _ in 0..5 {
            ioloop::yield_now().await;
        }
        assert_eq!(ioloop::Handle::current().metrics().live_tasks, 0);
    });
    assert_eq!(drops.load(Ordering::SeqCst), 1);
    assert_eq!(reached.load(Ordering::SeqCst), 0);
}

#[test]
fn a_handle_can_be_awaited_from_another_thread_and_runtime() {
    let rt = Arc::new(ioloop::Runtime::new().unwrap());
    let task = rt.spawn(async {
        ioloop::time::sleep(Duration::from_millis(5)).await;
        String::from("made on rt")
    });
    let gate = signal();
    let (g, r) = (gate.clone(), rt.clone());
    let runner = std::thread::spawn(move || r.block_on(g.wait()));
    // Completion on `rt`'s thread must wake this other runtime's loop.
    let out = within(Duration::from_secs(10), move || {
        ioloop::block_on(task).unwrap()
    });
    assert_eq!(out, "made on rt");
    gate.set();
    runner.join().unwrap();
}

#[test]
fn tasks_spawned_before_block_on_run_inside_it() {
    let rt = ioloop::Runtime::new().unwrap();
    let a = rt.spawn(async { 1 });
    let b = rt.handle().spawn(async { 2 });
    assert_eq!(
        rt.block_on(async { a.await.unwrap() + b.await.unwrap() }),
        3
    );
}

/// The role variable of the child whose `spawn` has no runtime.
const SPAWN_OUTSIDE_CHILD: &str = "IOLOOP_SPAWN_OUTSIDE_CHILD";

/// Issue 30: `spawn` outside a runtime panicked at a line of handle.rs;
/// the panic now points at the caller's line, here. A child process, so
/// the default panic hook prints the location, unchanged by other tests.
#[test]
fn spawn_outside_a_runtime_panics_at_the_callers_line() -> std::io::Result<()> {
    if std::env::var_os(SPAWN_OUTSIDE_CHILD).is_some() {
        eprintln!("spawning at line {}", line!() + 1);
        drop(ioloop::spawn(async {}));
        return Ok(());
    }
    let name = testkit::net_proc::test_name(
        module_path!(),
        "spawn_outside_a_runtime_panics_at_the_callers_line",
    );
    let out = within(Duration::from_secs(30), move || {
        std::process::Command::new(std::env::current_exe()?)
            .args(["--exact", &name, "--nocapture", "--test-threads=1"])
            .env(SPAWN_OUTSIDE_CHILD, "1")
            .output()
    })?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    let line = stderr
        .lines()
        .find_map(|l| l.strip_prefix("spawning at line "))
        .unwrap_or_else(|| panic!("the child did not run: {stderr}"));
    let at = format!("panicked at {}:{line}:", file!());
    assert!(stderr.contains(&at), "expected {at:?} in: {stderr}");
    Ok(())
}
