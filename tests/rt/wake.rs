//! Wakes from other threads: never lost, and coalesced into at most one
//! poller wake-up.

use std::future::poll_fn;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Poll, Waker};
use std::time::{Duration, Instant};

use testkit::util;
use util::{signal, within};

#[test]
fn a_thread_wakes_the_main_future_out_of_the_poller() {
    let (elapsed, metrics) = within(Duration::from_secs(10), || {
        let rt = ioloop::Runtime::new().unwrap();
        let s = signal();
        let s2 = s.clone();
        let start = Instant::now();
        let waker = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(100));
            s2.set();
        });
        // No timers, no I/O: the loop blocks in epoll_wait with no timeout
        // until the other thread's wake reaches it through the poller's waker.
        rt.block_on(s.wait());
        waker.join().unwrap();
        (start.elapsed(), rt.handle().metrics())
    });
    assert!(elapsed >= Duration::from_millis(100));
    assert!(metrics.poller_wakeups >= 1, "{metrics:?}");
}

#[test]
fn a_thread_wakes_a_spawned_task_out_of_the_poller() {
    let metrics = within(Duration::from_secs(10), || {
        let rt = ioloop::Runtime::new().unwrap();
        let s = signal();
        let s2 = s.clone();
        let task = rt.spawn(async move { s2.wait().await });
        let t = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(100));
            s.set();
        });
        rt.block_on(task).unwrap();
        t.join().unwrap();
        rt.handle().metrics()
    });
    assert!(metrics.poller_wakeups >= 1, "{metrics:?}");
}

/// A task that counts its polls and parks its waker where another thread
/// can reach it, until `stop` is set.
struct Target {
    waker: Mutex<Option<Waker>>,
    polls: AtomicUsize,
    stop: AtomicBool,
}

#[test]
fn a_storm_of_foreign_wakes_while_the_loop_is_busy_costs_no_poller_wakeup() {
    within(Duration::from_secs(30), || {
        ioloop::block_on(async {
            let target = Arc::new(Target {
                waker: Mutex::new(None),
                polls: AtomicUsize::new(0),
                stop: AtomicBool::new(false),
            });
            let t = target.clone();
            let parked = ioloop::spawn(poll_fn(move |cx| {
                t.polls.fetch_add(1, Ordering::SeqCst);
                *t.waker.lock().unwrap() = Some(cx.waker().clone());
                if t.stop.load(Ordering::SeqCst) {
                    Poll::Ready(())
                } else {
                    Poll::Pending
                }
            }));
            while target.waker.lock().unwrap().is_none() {
                ioloop::yield_now().await;
            }
            let before = ioloop::Handle::current().metrics();

            let done = Arc::new(AtomicBool::new(false));
            let (t, d) = (target.clone(), done.clone());
            let storm = std::thread::spawn(move || {
                for _ in 0..10_000 {
                    let waker = t.waker.lock().unwrap().clone().unwrap();
                    waker.wake();
                }
                t.stop.store(true, Ordering::SeqCst);
                let waker = t.waker.lock().unwrap().clone().unwrap();
                waker.wake();
                d.store(true, Ordering::SeqCst);
            });
            // Keep the loop busy (never parked) until the storm is over.
            while !done.load(Ordering::SeqCst) {
                ioloop::yield_now().await;
            }
            storm.join().unwrap();
            // The last wake, sent after `stop`, must not be lost.
            parked.await.unwrap();
            let after = ioloop::Handle::current().metrics();
            assert!(
                after.poller_wakeups - before.poller_wakeups <= 1,
                "{before:?} -> {after:?}"
            );
            // Coalesced: far fewer polls than wakes, but at least one more.
            let polls = target.polls.load(Ordering::SeqCst);
            assert!((2..=10_002).contains(&polls), "{polls}");
        });
    });
}

#[test]
fn many_threads_waking_many_tasks_lose_nothing() {
    const TASKS: usize = 64;
    const THREADS: usize = 4;
    within(Duration::from_secs(30), || {
        let rt = ioloop::Runtime::new().unwrap();
        let signals: Vec<_> = (0..TASKS).map(|_| signal()).collect();
        let tasks: Vec<_> = signals
            .iter()
            .map(|s| {
                let s = s.clone();
                rt.spawn(async move { s.wait().await })
            })
            .collect();
        let signals = Arc::new(signals);
        let threads: Vec<_> = (0..THREADS)
            .map(|k| {
                let signals = signals.clone();
                std::thread::spawn(move || {
                    for (i, s) in signals.iter().enumerate() {
                        // Spurious wakes from everyone, the real one from
                        // the thread that owns the task.
                        s.poke();
                        if i % THREADS == k {
                            s.set();
                        }
                    }
                })
            })
            .collect();
        rt.block_on(async move {
            for task in tasks {
                task.await.unwrap();
            }
        });
        for t in threads {
            t.join().unwrap();
        }
    });
}
