//! Tasks, made and ended 100,000 at a time in every way a task ends:
//! joined, aborted, aborted with their `JoinSet`, local, and detached
//! (handle dropped before the task finished). After each burst, once the
//! loop has gone idle, the heap is back where it was: the task list and
//! the run queue give back what the burst made them grow to.

use std::rc::Rc;
use std::time::Duration;

use ioloop::task::JoinSet;
use testkit::account::{self, Held};
use testkit::util;

/// Far longer than any of these tests takes; never what is measured.
const SAFETY: Duration = Duration::from_secs(120);

/// Tasks per burst.
const N: usize = 100_000;

/// Heap the runtime may keep after a burst of `N` tasks: a few small
/// tables at their minimum size. A task is a few hundred bytes, a slot in
/// the task list or the run queue tens: keeping either at the burst's
/// size is megabytes.
const SLACK: isize = 64 * 1024;

/// Lets the loop go idle (it gives back what a burst left behind then).
/// The task waits for certain (it hands its waker to another thread
/// before it says `Pending`), and the wake comes from that thread, into
/// the injection queue, so the loop reaches its park decision with
/// nothing to run. A 2 ms sleep did this until 2026-12-05 and failed on a
/// loaded machine (the sleep already due at the park decision, its task
/// ready, the loop never idle: 4 MB kept); so did a channel whose sender
/// could send before the first poll.
async fn idle() {
    let mut handed = false;
    std::future::poll_fn(|cx| {
        if std::mem::replace(&mut handed, true) {
            return std::task::Poll::Ready(());
        }
        let waker = cx.waker().clone();
        std::thread::spawn(move || waker.wake());
        std::task::Poll::Pending
    })
    .await;
}

/// Runs `burst` twice and checks, after each, that the heap is where it
/// was before the first: the task list, the run queue and the injection
/// queue give back what the burst made them grow to once the loop goes
/// idle (the run queue kept 2 MB after 100,000 tasks queued at once until
/// 2026-12-03). `burst` makes `N` tasks and returns once they have all
/// ended.
async fn check<F, Fut>(what: &str, mut burst: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    idle().await;
    let before = Held::now();
    for round in ["first", "second"] {
        burst().await;
        idle().await;
        assert_eq!(ioloop::Handle::current().metrics().live_tasks, 0, "{what}");
        before.assert_back(&format!("{what}, {round} burst"), SLACK);
    }
}

/// Runs `test` on a fresh runtime, holding the accounting lock.
fn run<Fut: std::future::Future<Output = ()>>(test: impl FnOnce() -> Fut + Send + 'static) {
    let _serial = account::serial();
    util::within(SAFETY, || account::runtime().unwrap().block_on(test()));
}

#[test]
fn tasks_spawned_and_joined_leave_nothing() {
    run(|| async {
        check("100,000 tasks spawned and joined", || async {
            let handles: Vec<_> = (0..N).map(|i| ioloop::spawn(async move { i })).collect();
            for (i, handle) in handles.into_iter().enumerate() {
                assert_eq!(handle.await.unwrap(), i);
            }
        })
        .await;
    });
}

#[test]
fn tasks_spawned_and_aborted_leave_nothing() {
    run(|| async {
        check("100,000 tasks spawned and aborted", || async {
            let handles: Vec<_> = (0..N)
                .map(|_| ioloop::spawn(std::future::pending::<()>()))
                .collect();
            // Each polled once, parked: then aborted.
            ioloop::yield_now().await;
            for handle in &handles {
                handle.abort();
            }
            for handle in handles {
                assert!(handle.await.unwrap_err().is_cancelled());
            }
        })
        .await;
    });
}

#[test]
fn tasks_in_a_dropped_join_set_leave_nothing() {
    run(|| async {
        check("100,000 tasks in a JoinSet dropped", || async {
            let mut set = JoinSet::new();
            for _ in 0..N {
                set.spawn(std::future::pending::<()>());
            }
            ioloop::yield_now().await;
            drop(set);
            // The aborted tasks end when the loop next runs them.
            while ioloop::Handle::current().metrics().live_tasks > 0 {
                ioloop::yield_now().await;
            }
        })
        .await;
    });
}

#[test]
fn local_tasks_spawned_and_joined_leave_nothing() {
    run(|| async {
        check("100,000 local tasks spawned and joined", || async {
            let shared = Rc::new(());
            let handles: Vec<_> = (0..N)
                .map(|_| {
                    let shared = shared.clone();
                    ioloop::spawn_local(async move {
                        ioloop::yield_now().await;
                        Rc::strong_count(&shared)
                    })
                })
                .collect();
            for handle in handles {
                assert!(handle.await.unwrap() >= 1);
            }
            assert_eq!(Rc::strong_count(&shared), 1);
        })
        .await;
    });
}

/// `N` tasks spawned into `set`, then joined one by one.
async fn burst_into(set: &mut JoinSet<usize>) {
    for i in 0..N {
        set.spawn(async move { i });
    }
    let mut sum = 0;
    while let Some(result) = set.join_next().await {
        sum += result.unwrap();
    }
    assert_eq!(sum, N * (N - 1) / 2);
    assert!(set.is_empty());
}

/// A `JoinSet` that lives on (a server's set of connections) and sees a
/// burst of 100,000 tasks, joined one by one: once it is empty again, it
/// holds no more than before the burst.
#[test]
fn a_join_set_that_lives_on_gives_back_what_a_burst_took() {
    run(|| async {
        // Warm, with a set of its own: the run queue's high-water mark
        // (see `check`).
        burst_into(&mut JoinSet::new()).await;
        idle().await;
        let mut set = JoinSet::new();
        let before = Held::now();
        burst_into(&mut set).await;
        idle().await;
        before.assert_back("a JoinSet drained after 100,000 tasks", SLACK);
        drop(set);
    });
}

#[test]
fn tasks_whose_handles_were_dropped_first_leave_nothing() {
    run(|| async {
        check("100,000 detached tasks", || async {
            let (release, released) = async_channel::bounded::<()>(1);
            for _ in 0..N {
                let released = released.clone();
                // Detached before the task even starts; it waits for the
                // channel to close.
                drop(ioloop::spawn(async move {
                    let _ = released.recv().await;
                }));
            }
            drop(released);
            ioloop::yield_now().await;
            drop(release);
            while ioloop::Handle::current().metrics().live_tasks > 0 {
                ioloop::yield_now().await;
            }
        })
        .await;
    });
}

#[test]
fn tasks_spawned_from_another_thread_in_one_burst_leave_nothing() {
    run(|| async {
        check("100,000 tasks spawned from another thread", || async {
            // The loop's thread waits while another spawns them all, so the
            // whole burst sits in the injection queue at once.
            let handle = ioloop::Handle::current();
            let handles = std::thread::spawn(move || {
                (0..N)
                    .map(|i| handle.spawn(async move { i }))
                    .collect::<Vec<_>>()
            })
            .join()
            .unwrap();
            for (i, handle) in handles.into_iter().enumerate() {
                assert_eq!(handle.await.unwrap(), i);
            }
        })
        .await;
    });
}

/// A task's wakers are references to it (the task counts its own since
/// 2026-12-03): 100,000 tasks each hand a clone of their waker to another
/// thread, which keeps some, clones them again, wakes some by reference
/// and some by value, and drops the rest, while and after the tasks end.
/// Every task is freed once its last waker goes (a count left too high
/// keeps its memory, one too low frees it twice).
#[test]
fn wakers_cloned_woken_and_dropped_on_other_threads_leave_nothing() {
    run(|| async {
        check(
            "100,000 tasks whose wakers go to another thread",
            || async {
                let (tx, rx) = std::sync::mpsc::channel::<std::task::Waker>();
                let other = std::thread::spawn(move || {
                    let mut kept = Vec::new();
                    for (i, waker) in rx.into_iter().enumerate() {
                        match i % 4 {
                            0 => waker.wake_by_ref(),
                            1 => waker.wake(),
                            2 => kept.push(waker.clone()),
                            _ => drop(waker.clone()),
                        }
                    }
                    // The tasks have ended by now: these wake and drop late.
                    for waker in kept {
                        waker.wake_by_ref();
                        waker.wake();
                    }
                });
                let handles: Vec<_> = (0..N)
                    .map(|i| {
                        let tx = tx.clone();
                        ioloop::spawn(std::future::poll_fn(move |cx| {
                            if tx.send(cx.waker().clone()).is_err() {
                                unreachable!("the other thread takes every waker");
                            }
                            std::task::Poll::Ready(i)
                        }))
                    })
                    .collect();
                drop(tx);
                for (i, handle) in handles.into_iter().enumerate() {
                    assert_eq!(handle.await.unwrap(), i);
                }
                // Every sender has gone with its task: the thread finishes.
                other.join().unwrap();
            },
        )
        .await;
    });
}
