//! Reaching the loop from other threads through a `Handle`: every spawned
//! task runs exactly once, and floods of foreign wakes are neither lost nor
//! turned into a storm of poller wake-ups.

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::time::Duration;

use testkit::util;
use util::{signal, within};

fn assert_send_sync_clone<T: Send + Sync + Clone>() {}

#[test]
fn a_handle_is_send_sync_and_clone() {
    assert_send_sync_clone::<ioloop::Handle>();
}

#[test]
fn spawning_from_eight_foreign_threads_runs_every_task_exactly_once() {
    const THREADS: usize = 8;
    const PER_THREAD: usize = 1000;
    let runs: Arc<Vec<AtomicU8>> = Arc::new(
        (0..THREADS * PER_THREAD)
            .map(|_| AtomicU8::new(0))
            .collect(),
    );
    within(Duration::from_secs(60), {
        let runs = runs.clone();
        move || {
            let rt = ioloop::Runtime::new().unwrap();
            let all_spawned = signal();
            let spawners: Vec<_> = (0..THREADS)
                .map(|t| {
                    let handle = rt.handle().clone();
                    let runs = runs.clone();
                    std::thread::spawn(move || {
                        (0..PER_THREAD)
                            .map(|i| {
                                let runs = runs.clone();
                                handle.spawn(async move {
                                    runs[t * PER_THREAD + i].fetch_add(1, Ordering::SeqCst);
                                })
                            })
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            // The loop runs while the threads spawn into it.
            let s = all_spawned.clone();
            let collector = std::thread::spawn(move || {
                let handles: Vec<_> = spawners
                    .into_iter()
                    .flat_map(|t| t.join().unwrap())
                    .collect();
                s.set();
                handles
            });
            rt.block_on(all_spawned.wait());
            let handles = collector.join().unwrap();
            rt.block_on(async move {
                for h in handles {
                    h.await.unwrap();
                }
            });
        }
    });
    assert!(runs.iter().all(|r| r.load(Ordering::SeqCst) == 1));
}

#[test]
fn thousands_of_wakes_from_several_threads_to_a_sleeping_loop_cost_at_most_one_wakeup_per_poll() {
    const THREADS: usize = 4;
    const TASKS: usize = 16;
    const WAKES_PER_THREAD: usize = 5000;
    within(Duration::from_secs(60), || {
        let rt = ioloop::Runtime::new().unwrap();
        let polls = Arc::new(AtomicUsize::new(0));
        // Tasks that park and count their polls until their signal is set.
        let signals: Arc<Vec<_>> = Arc::new((0..TASKS).map(|_| signal()).collect());
        let tasks: Vec<_> = (0..TASKS)
            .map(|i| {
                let (s, p) = (signals[i].clone(), polls.clone());
                rt.spawn(async move {
                    std::future::poll_fn(|cx| {
                        p.fetch_add(1, Ordering::SeqCst);
                        let waiting = s.wait();
                        let mut waiting = std::pin::pin!(waiting);
                        waiting.as_mut().poll(cx)
                    })
                    .await
                })
            })
            .collect();
        let wakers: Vec<_> = (0..THREADS)
            .map(|k| {
                let signals = signals.clone();
                std::thread::spawn(move || {
                    for n in 0..WAKES_PER_THREAD {
                        signals[(k + n) % TASKS].poke();
                    }
                })
            })
            .collect();
        let metrics = rt.block_on(async move {
            // Let the storm hit a loop with nothing else to do: it sleeps
            // in the poller between wake-ups.
            for w in wakers {
                while !w.is_finished() {
                    ioloop::time::sleep(Duration::from_millis(1)).await;
                }
            }
            for s in signals.iter() {
                s.set();
            }
            for t in tasks {
                t.await.unwrap();
            }
            ioloop::yield_now().await;
            ioloop::Handle::current().metrics()
        });
        // Each poller wake-up ends one blocking poll, so there cannot be
        // more of them than polls (ticks); and nothing was lost: every task
        // finished.
        assert!(
            metrics.poller_wakeups <= metrics.ticks,
            "{} wake-ups in {} ticks",
            metrics.poller_wakeups,
            metrics.ticks
        );
        eprintln!(
            "{} foreign wakes -> {} poller wake-ups, {} task polls, {} ticks",
            THREADS * WAKES_PER_THREAD,
            metrics.poller_wakeups,
            polls.load(Ordering::SeqCst),
            metrics.ticks
        );
    });
}

/// `Runtime::enter`: `spawn` works outside `block_on` under the guard, and
/// the tasks run at the next `block_on`; the guard restores what was there.
#[test]
fn spawn_under_runtime_enter_runs_at_the_next_block_on() {
    let rt = ioloop::Runtime::new().unwrap();
    let (task, nested) = {
        let _guard = rt.enter();
        assert!(ioloop::Handle::try_current().is_some());
        let task = ioloop::spawn(async {
            ioloop::time::sleep(Duration::from_millis(1)).await;
            1
        });
        let nested = {
            let other = ioloop::Runtime::new().unwrap();
            let _inner = other.enter();
            ioloop::Handle::try_current().is_some()
        };
        (task, nested)
    };
    assert!(nested);
    assert!(ioloop::Handle::try_current().is_none());
    assert_eq!(rt.block_on(task).unwrap(), 1);
}

/// `Handle::block_on` from a blocking job: the future spawns and sleeps on
/// the runtime whose loop runs on the other thread.
#[test]
fn handle_block_on_from_a_blocking_job_reaches_the_runtime() {
    let rt = ioloop::Runtime::new().unwrap();
    let handle = rt.handle().clone();
    let got = rt.block_on(async move {
        ioloop::spawn_blocking(move || {
            handle.block_on(async {
                ioloop::time::sleep(Duration::from_millis(2)).await;
                ioloop::spawn(async { 21 }).await.unwrap() * 2
            })
        })
        .await
        .unwrap()
    });
    assert_eq!(got, 42);
}

/// `Handle::id`: the same for every handle to a runtime, from inside its
/// `block_on`, a task and a blocking job; another runtime's differs.
#[test]
fn handle_id_is_the_runtimes_own() -> std::io::Result<()> {
    let (a, b) = (ioloop::Runtime::new()?, ioloop::Runtime::new()?);
    let id = a.handle().id();
    assert_ne!(id, b.handle().id());
    assert_eq!(a.handle().clone().id(), id);
    let (inside, in_task, in_job) = a.block_on(async {
        let in_task = ioloop::spawn(async { ioloop::Handle::current().id() });
        let in_job = ioloop::spawn_blocking(|| ioloop::Handle::current().id());
        (ioloop::Handle::current().id(), in_task.await, in_job.await)
    });
    assert_eq!([inside, in_task?, in_job?], [id; 3]);
    assert_eq!(
        b.block_on(async { ioloop::Handle::current().id() }),
        b.handle().id()
    );
    // Printed as a number; usable as a key.
    assert!(id.to_string().parse::<u64>().is_ok());
    let ids: std::collections::HashSet<ioloop::RuntimeId> = [id, b.handle().id(), id].into();
    assert_eq!(ids.len(), 2);
    Ok(())
}
