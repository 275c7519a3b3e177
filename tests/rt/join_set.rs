//! `JoinSet`: results in the order tasks finish, `abort_all`, `shutdown`,
//! dropping the set, and a panic reaching `join_next` while the others go on.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use ioloop::task::JoinSet;
use ioloop::time::timeout;
use testkit::util::{self, DropCounter};

const SAFETY: Duration = Duration::from_secs(10);

/// Finishing order is set by the test, one task at a time, against the
/// order the tasks were spawned in.
#[test]
fn join_next_returns_results_in_the_order_tasks_finish() {
    ioloop::block_on(async {
        let gates: Vec<_> = (0..5).map(|_| util::signal()).collect();
        let mut set = JoinSet::new();
        for (i, gate) in gates.iter().enumerate() {
            let gate = gate.clone();
            set.spawn(async move {
                gate.wait().await;
                i
            });
        }
        assert_eq!(set.len(), 5);
        let mut order = Vec::new();
        for i in [3, 0, 4, 1, 2] {
            gates[i].set();
            let got = timeout(SAFETY, set.join_next()).await.unwrap();
            order.push(got.expect("a task").unwrap());
        }
        assert_eq!(order, [3, 0, 4, 1, 2]);
        assert!(set.is_empty());
        assert!(set.join_next().await.is_none());
    });
}

/// A panicking task is one `JoinError` among the results; the rest finish.
#[test]
fn a_panic_in_one_task_reaches_join_next_and_the_others_run_on() {
    ioloop::block_on(async {
        let mut set = JoinSet::new();
        for i in 0..4 {
            set.spawn(async move {
                ioloop::yield_now().await;
                if i == 2 {
                    panic!("task 2 fails");
                }
                i
            });
        }
        let (mut ok, mut panics) = (Vec::new(), 0);
        while let Some(result) = timeout(SAFETY, set.join_next()).await.unwrap() {
            match result {
                Ok(i) => ok.push(i),
                Err(err) => {
                    assert!(err.is_panic(), "{err}");
                    assert_eq!(util::panic_text(&*err.into_panic()), "task 2 fails");
                    panics += 1;
                }
            }
        }
        ok.sort_unstable();
        assert_eq!((ok, panics), (vec![0, 1, 3], 1));
    });
}

/// `abort_all` cancels what is still running (what already finished keeps
/// its output); `shutdown` waits until every task has ended.
#[test]
fn abort_all_and_shutdown_cancel_the_running_tasks() {
    ioloop::block_on(async {
        let drops = Arc::new(AtomicUsize::new(0));
        let mut set = JoinSet::new();
        set.spawn(async { "quick" });
        ioloop::yield_now().await; // the quick one finishes
        for _ in 0..3 {
            let guard = DropCounter(drops.clone());
            set.spawn(async move {
                let _guard = guard;
                std::future::pending::<&str>().await
            });
        }
        set.abort_all();
        let (mut done, mut cancelled) = (0, 0);
        while let Some(result) = timeout(SAFETY, set.join_next()).await.unwrap() {
            match result {
                Ok("quick") => done += 1,
                Ok(other) => panic!("unexpected {other}"),
                Err(err) => {
                    assert!(err.is_cancelled());
                    cancelled += 1;
                }
            }
        }
        assert_eq!((done, cancelled), (1, 3));
        assert_eq!(drops.load(Ordering::SeqCst), 3);

        for _ in 0..3 {
            let guard = DropCounter(drops.clone());
            set.spawn(async move {
                let _guard = guard;
                std::future::pending::<&str>().await
            });
        }
        timeout(SAFETY, set.shutdown()).await.unwrap();
        assert!(set.is_empty());
        assert_eq!(drops.load(Ordering::SeqCst), 6);
    });
}

/// Dropping the set aborts its tasks.
#[test]
fn dropping_the_set_aborts_its_tasks() {
    ioloop::block_on(async {
        let drops = Arc::new(AtomicUsize::new(0));
        let mut set = JoinSet::new();
        for _ in 0..4 {
            let guard = DropCounter(drops.clone());
            set.spawn(async move {
                let _guard = guard;
                std::future::pending::<()>().await
            });
        }
        ioloop::yield_now().await;
        drop(set);
        for _ in 0..3 {
            ioloop::yield_now().await;
        }
        assert_eq!(drops.load(Ordering::SeqCst), 4);
        assert_eq!(ioloop::Handle::current().metrics().live_tasks, 0);
    });
}

/// Local tasks in a set: `Rc` state, results as they finish.
#[test]
fn a_set_of_local_tasks_shares_rc_state() {
    ioloop::block_on(async {
        let log = Rc::new(RefCell::new(Vec::new()));
        let mut set = JoinSet::new();
        for i in 0..3 {
            let log = log.clone();
            set.spawn_local(async move {
                ioloop::yield_now().await;
                log.borrow_mut().push(i);
                Rc::new(i)
            });
        }
        let mut sum = 0;
        while let Some(result) = set.join_next().await {
            sum += *result.unwrap();
        }
        assert_eq!(sum, 3);
        assert_eq!(log.borrow().len(), 3);
    });
}

/// A `spawn` (or `spawn_local`) that panics outside a runtime, caught,
/// leaves the set as it was: the same length, and `join_next` hands back
/// the earlier tasks' outputs, then `None`, instead of panicking on the
/// failed spawn's ghost.
#[test]
fn a_failed_spawn_leaves_the_set_unchanged() -> std::io::Result<()> {
    let rt = ioloop::Runtime::new()?;
    let mut set = JoinSet::new();
    rt.block_on(async {
        for i in 0..3 {
            set.spawn(async move { i });
        }
    });
    // Outside the runtime: both spawns panic, and are caught.
    let spawned = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        set.spawn(async { 100 });
    }));
    assert!(spawned.is_err(), "spawn outside a runtime must panic");
    let spawned = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        set.spawn_local(async { 200 });
    }));
    assert!(spawned.is_err(), "spawn_local off a loop must panic");
    assert_eq!(set.len(), 3);
    let mut outputs = rt.block_on(async {
        let mut outputs = Vec::new();
        while let Some(result) = timeout(SAFETY, set.join_next()).await.unwrap() {
            outputs.push(result.unwrap());
        }
        // And the set still works.
        set.spawn(async { 3 });
        outputs.push(set.join_next().await.unwrap().unwrap());
        assert!(set.join_next().await.is_none());
        outputs
    });
    outputs.sort_unstable();
    assert_eq!(outputs, [0, 1, 2, 3]);
    Ok(())
}
