//! Order: runtimes, their handles and their `enter` guards made and
//! dropped in every order and on every thread, and wakes made from inside
//! the very future being polled.

use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ioloop::task::JoinHandle;
use testkit::util::{self, within};

/// What a task's destructor saw and did, while its runtime shut down.
#[derive(Default)]
struct Seen {
    /// The destructor ran.
    dropped: AtomicBool,
    /// A runtime was current in the destructor.
    current: AtomicBool,
    /// The task the destructor spawned ran (it must not: its runtime is
    /// closed).
    spawned_ran: AtomicBool,
    /// The handle of that task.
    spawned: Mutex<Option<JoinHandle<()>>>,
}

/// Put in a task's future: on drop, spawns through the current runtime and
/// records what it found.
struct SpawnsOnDrop(Arc<Seen>);

impl Drop for SpawnsOnDrop {
    fn drop(&mut self) {
        let seen = &self.0;
        seen.dropped.store(true, Ordering::SeqCst);
        seen.current
            .store(ioloop::Handle::try_current().is_some(), Ordering::SeqCst);
        let s = seen.clone();
        let task = ioloop::spawn(async move { s.spawned_ran.store(true, Ordering::SeqCst) });
        *seen.spawned.lock().unwrap() = Some(task);
    }
}

/// A runtime holding one task (taken into its task list) whose destructor
/// spawns.
fn runtime_with_a_spawning_destructor() -> io::Result<(ioloop::Runtime, Arc<Seen>)> {
    let rt = ioloop::Runtime::new()?;
    let seen = Arc::new(Seen::default());
    let guard = SpawnsOnDrop(seen.clone());
    let _task = rt.spawn(async move {
        let _guard = guard;
        std::future::pending::<()>().await
    });
    rt.block_on(ioloop::yield_now());
    Ok((rt, seen))
}

/// Checks what `seen` recorded: the destructor ran with its own, closed
/// runtime current, so what it spawned was cancelled, never run.
async fn assert_shut_down_alone(seen: &Seen) {
    assert!(seen.dropped.load(Ordering::SeqCst));
    assert!(seen.current.load(Ordering::SeqCst));
    let task = seen.spawned.lock().unwrap().take().expect("spawned");
    let err = task.await.expect_err("spawned on a closed runtime");
    assert!(err.is_cancelled());
    assert!(!seen.spawned_ran.load(Ordering::SeqCst));
}

/// Item 11 of issue 28: a runtime dropped inside another runtime's task
/// shut down with the outer runtime current, so what its tasks'
/// destructors spawned ran on the outer runtime (10 runs of 10). Now it
/// shuts down as it does on a thread running no loop: with itself current,
/// closed, refusing the spawn; and the outer runtime is current again
/// afterwards.
#[test]
fn a_runtime_dropped_inside_another_runtimes_task_shuts_down_as_the_current_runtime()
-> io::Result<()> {
    within(Duration::from_secs(10), || {
        let (inner, seen) = runtime_with_a_spawning_destructor()?;
        let outer = ioloop::Runtime::new()?;
        outer.block_on(async move {
            ioloop::spawn(async move {
                drop(inner);
                // The outer runtime is current again.
                assert_eq!(ioloop::spawn(async { 7 }).await.unwrap(), 7);
            })
            .await
            .unwrap();
            assert_shut_down_alone(&seen).await;
            // Nothing reached the outer loop meanwhile.
            for _ in 0..3 {
                ioloop::yield_now().await;
            }
            assert!(!seen.spawned_ran.load(Ordering::SeqCst));
        });
        Ok(())
    })
}

/// ... and inside another runtime's blocking job, where the thread works
/// for the outer runtime without running its loop: the dropped runtime is
/// the current one while it shuts down, not the one the job works for.
#[test]
fn a_runtime_dropped_inside_another_runtimes_blocking_job_shuts_down_as_the_current_runtime()
-> io::Result<()> {
    within(Duration::from_secs(10), || {
        let (inner, seen) = runtime_with_a_spawning_destructor()?;
        let outer = ioloop::Runtime::new()?;
        outer.block_on(async move {
            ioloop::spawn_blocking(move || {
                drop(inner);
                // The job works for the outer runtime again.
                ioloop::Handle::current().block_on(async {
                    assert_eq!(ioloop::spawn(async { 7 }).await.unwrap(), 7);
                });
            })
            .await
            .unwrap();
            assert_shut_down_alone(&seen).await;
        });
        Ok(())
    })
}

/// The same runtime dropped on a thread running no loop: the behaviour the
/// nested drop must mirror.
#[test]
fn a_runtime_dropped_on_a_plain_thread_shuts_down_as_the_current_runtime() -> io::Result<()> {
    within(Duration::from_secs(10), || {
        let (inner, seen) = runtime_with_a_spawning_destructor()?;
        drop(inner);
        let rt = ioloop::Runtime::new()?;
        rt.block_on(assert_shut_down_alone(&seen));
        Ok(())
    })
}

/// Two levels: a runtime dropped by a task destructor of a runtime being
/// dropped inside a third runtime's task. Each shuts down as the current
/// runtime, and each loop is current again once the runtime dropped inside
/// it is gone.
#[test]
fn runtimes_dropped_inside_a_shutdown_inside_a_task_each_shut_down_as_the_current_runtime()
-> io::Result<()> {
    within(Duration::from_secs(10), || {
        let (innermost, seen_innermost) = runtime_with_a_spawning_destructor()?;
        let (middle, seen_middle) = runtime_with_a_spawning_destructor()?;
        // A task of `middle` owns `innermost`: `middle`'s shutdown drops it.
        let _owner = middle.spawn(async move {
            let _innermost = innermost;
            std::future::pending::<()>().await
        });
        middle.block_on(ioloop::yield_now());
        let outer = ioloop::Runtime::new()?;
        outer.block_on(async move {
            ioloop::spawn(async move {
                drop(middle);
                assert_eq!(ioloop::spawn(async { 7 }).await.unwrap(), 7);
            })
            .await
            .unwrap();
            assert_shut_down_alone(&seen_innermost).await;
            assert_shut_down_alone(&seen_middle).await;
        });
        Ok(())
    })
}

/// A runtime sent to another thread and dropped there: its tasks'
/// destructors run there, with it current and closed.
#[test]
fn a_runtime_dropped_on_another_thread_than_it_was_built_on_shuts_down_there() -> io::Result<()> {
    within(Duration::from_secs(10), || {
        let (rt, seen) = runtime_with_a_spawning_destructor()?;
        std::thread::spawn(move || drop(rt)).join().unwrap();
        let checker = ioloop::Runtime::new()?;
        checker.block_on(assert_shut_down_alone(&seen));
        Ok(())
    })
}

/// A task spawned through the current runtime (under guards), to find out
/// later which runtime took it.
fn probe() -> JoinHandle<()> {
    ioloop::Handle::current().spawn(async {})
}

/// Runs `rt`'s loop a few ticks: enough to finish the probes spawned on
/// it, never another runtime's.
fn run_a_little(rt: &ioloop::Runtime) {
    rt.block_on(async {
        for _ in 0..3 {
            ioloop::yield_now().await;
        }
    });
}

/// Whether `probe` is `rt`'s: finished once `rt`'s loop ran a little.
/// Only for a probe no other loop has run since it was made.
fn ran_on(rt: &ioloop::Runtime, probe: &JoinHandle<()>) -> bool {
    run_a_little(rt);
    probe.is_finished()
}

/// Two runtimes' guards nested properly, in both orders: the inner one is
/// current while its guard lives, the outer one again after, and none
/// once both are dropped.
#[test]
fn enter_guards_nested_in_order_restore_the_outer_runtime_in_both_orders() -> io::Result<()> {
    let rt1 = ioloop::Runtime::new()?;
    let rt2 = ioloop::Runtime::new()?;
    for (outer, inner) in [(&rt1, &rt2), (&rt2, &rt1)] {
        let outer_guard = outer.enter();
        let before = probe();
        let inside = {
            let _inner_guard = inner.enter();
            probe()
        };
        let after = probe();
        drop(outer_guard);
        assert!(ioloop::Handle::try_current().is_none());
        // The outer loop runs the two probes made under its guard alone.
        run_a_little(outer);
        assert!(before.is_finished() && after.is_finished() && !inside.is_finished());
        run_a_little(inner);
        assert!(inside.is_finished());
    }
    Ok(())
}

/// A guard leaked with `mem::forget` keeps its runtime current (as tokio's
/// does); dropping a guard made before it then panics, and restores what
/// was current before that guard: nothing.
#[test]
fn an_enter_guard_dropped_over_a_leaked_one_panics_and_leaves_no_runtime_current() -> io::Result<()>
{
    let rt1 = ioloop::Runtime::new()?;
    let rt2 = ioloop::Runtime::new()?;
    let g1 = rt1.enter();
    std::mem::forget(rt2.enter());
    let leaked = probe();
    let panic = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| drop(g1)))
        .expect_err("the outer guard dropped over a leaked one panics");
    let message = util::panic_text(&*panic);
    assert!(message.contains("dropped out of order"), "{message}");
    assert!(ioloop::Handle::try_current().is_none());
    assert!(ran_on(&rt2, &leaked));
    Ok(())
}

/// A guard made before `block_on` does not reach into the loop: the loop's
/// own runtime is current in its tasks, and the guard's again once
/// `block_on` returns.
#[test]
fn an_enter_guard_made_before_block_on_gives_way_to_the_loops_runtime() -> io::Result<()> {
    let rt1 = ioloop::Runtime::new()?;
    let rt2 = ioloop::Runtime::new()?;
    let _guard = rt1.enter();
    let inside = within(Duration::from_secs(10), move || {
        rt2.block_on(async {
            let inside = probe();
            // Only rt2's loop runs here: the probe finishes if it is rt2's.
            ioloop::spawn(async {}).await.unwrap();
            for _ in 0..3 {
                ioloop::yield_now().await;
            }
            inside.is_finished()
        })
    });
    assert!(inside);
    let after = probe();
    assert!(ran_on(&rt1, &after));
    Ok(())
}

/// `rt.enter()` inside another runtime's `block_on` panics with a clear
/// message (that loop's runtime stays current there, so the guard could
/// not take effect), and the loop carries on. Entering the runtime whose
/// loop runs is allowed.
#[test]
fn enter_inside_another_runtimes_block_on_panics_and_the_loop_carries_on() -> io::Result<()> {
    let rt = ioloop::Runtime::new()?;
    let rt2 = ioloop::Runtime::new()?;
    let message = rt2.block_on(async {
        let panic = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| drop(rt.enter())))
            .expect_err("entering another runtime inside a loop panics");
        {
            let _same = rt2.enter();
            assert_eq!(ioloop::spawn(async { 3 }).await.unwrap(), 3);
        }
        assert_eq!(ioloop::spawn(async { 4 }).await.unwrap(), 4);
        util::panic_text(&*panic)
    });
    assert!(message.contains("another runtime's loop"), "{message}");
    assert!(ioloop::Handle::try_current().is_none());
    Ok(())
}

/// A `Handle` outliving its runtime: what is spawned on it is cancelled at
/// once, and its `block_on` still runs futures that need no loop.
#[test]
fn a_handle_outliving_its_runtime_refuses_spawns_cleanly() -> io::Result<()> {
    let rt = ioloop::Runtime::new()?;
    let handle = rt.handle().clone();
    drop(rt);
    let task = handle.spawn(async { 1 });
    let job = handle.spawn_blocking(|| 2);
    let (task, job) = within(Duration::from_secs(10), move || {
        let task = handle.block_on(task);
        let job = handle.block_on(job);
        (task, job)
    });
    assert!(task.unwrap_err().is_cancelled());
    assert!(job.unwrap_err().is_cancelled());
    Ok(())
}

/// A `Handle::block_on` on another thread, waiting on a task of a runtime
/// whose loop never runs, returns when the runtime is dropped: the task is
/// cancelled and its waiter woken.
#[test]
fn a_handle_block_on_waiting_on_a_task_returns_when_the_runtime_drops() -> io::Result<()> {
    let rt = ioloop::Runtime::new()?;
    let handle = rt.handle().clone();
    let started = util::signal();
    let s = started.clone();
    let waiter = std::thread::spawn(move || {
        handle.block_on(async move {
            let task = ioloop::spawn(std::future::pending::<()>());
            s.set();
            task.await
        })
    });
    within(Duration::from_secs(10), move || {
        while !started.is_set() {
            std::thread::yield_now();
        }
    });
    drop(rt);
    let got = within(Duration::from_secs(10), move || waiter.join().unwrap());
    assert!(got.unwrap_err().is_cancelled());
    Ok(())
}

/// A future that wakes itself and returns `Pending` on its first poll, and
/// is ready on its second.
fn wakes_itself_once() -> impl std::future::Future<Output = u32> + Send {
    let mut polls = 0;
    std::future::poll_fn(move |cx| {
        polls += 1;
        if polls == 2 {
            return std::task::Poll::Ready(polls);
        }
        cx.waker().wake_by_ref();
        std::task::Poll::Pending
    })
}

/// A wake from inside the future being polled, on every path that polls
/// one: `Runtime::block_on` (the loop's own waker), `Handle::block_on`
/// from a plain thread, both while another thread runs the loop, and a
/// spawned task.
#[test]
fn a_wake_from_inside_the_polled_future_is_kept_on_every_path() -> io::Result<()> {
    within(Duration::from_secs(20), || {
        let rt = Arc::new(ioloop::Runtime::new()?);
        assert_eq!(rt.block_on(wakes_itself_once()), 2);
        assert_eq!(rt.handle().block_on(wakes_itself_once()), 2);
        assert_eq!(rt.block_on(rt.spawn(wakes_itself_once())).unwrap(), 2);
        // Another thread runs the loop until released.
        let gate = util::signal();
        let (r, g) = (rt.clone(), gate.clone());
        let holder = std::thread::spawn(move || r.block_on(g.wait()));
        assert_eq!(rt.handle().block_on(wakes_itself_once()), 2);
        assert_eq!(rt.block_on(wakes_itself_once()), 2);
        let spawned = rt.spawn(wakes_itself_once());
        assert_eq!(rt.handle().block_on(spawned).unwrap(), 2);
        gate.set();
        holder.join().unwrap();
        Ok(())
    })
}

/// A `Runtime::block_on` waiting its turn polls its future on its own
/// thread, where the future may enter a runtime and hold the guard across
/// an await. When the loop comes back to that thread, the wait ends with
/// the guard still alive: that is not the user's guards dropped out of
/// order, and must not panic; the guard's drop later does nothing.
#[test]
fn a_guard_held_across_the_end_of_a_block_on_wait_does_not_panic() -> io::Result<()> {
    let rt = Arc::new(ioloop::Runtime::new()?);
    let other = Arc::new(ioloop::Runtime::new()?);
    let gate = util::signal();
    let (r, g) = (rt.clone(), gate.clone());
    let holder = std::thread::spawn(move || r.block_on(g.wait()));
    while !gate.has_waiter() {
        std::thread::yield_now();
    }
    let released = util::signal();
    let (r, g, rel, o) = (rt.clone(), gate.clone(), released.clone(), other.clone());
    let waiter = std::thread::spawn(move || {
        r.block_on(async move {
            let _guard = o.enter();
            g.set();
            rel.wait().await;
        });
        // The guard's entry went with the wait: nothing is left current.
        ioloop::Handle::try_current().is_none()
    });
    holder.join().unwrap();
    released.set();
    let none_current = within(Duration::from_secs(10), move || waiter.join());
    assert!(none_current.expect("the waiting block_on panicked"));
    Ok(())
}
