//! One task's panic is its own; a waker's panic never reaches the loop.

use std::future::{Future, poll_fn};
use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use ioloop::io::Registration;
use testkit::util;
use util::{CountingWaker, panicking_waker, poll_once_with};

#[test]
fn a_panicking_task_yields_a_join_error_and_the_others_go_on() {
    let finished = Arc::new(AtomicUsize::new(0));
    let f = finished.clone();
    ioloop::block_on(async move {
        let tasks: Vec<_> = (0..10)
            .map(|i| {
                let f = f.clone();
                ioloop::spawn(async move {
                    ioloop::yield_now().await;
                    if i == 3 {
                        panic!("task {i} fails");
                    }
                    ioloop::yield_now().await;
                    f.fetch_add(1, Ordering::SeqCst);
                    i
                })
            })
            .collect();
        for (i, task) in tasks.into_iter().enumerate() {
            match task.await {
                Ok(n) => assert_eq!(n, i),
                Err(err) => {
                    assert_eq!(i, 3);
                    assert!(err.is_panic());
                    assert!(!err.is_cancelled());
                    assert_eq!(err.to_string(), "task panicked: task 3 fails");
                    let payload = err.into_panic();
                    assert_eq!(util::panic_text(&*payload), "task 3 fails");
                }
            }
        }
        // The loop itself is fine: timers and new tasks still work.
        ioloop::time::sleep(Duration::from_millis(1)).await;
        assert_eq!(ioloop::spawn(async { 1 }).await.unwrap(), 1);
    });
    assert_eq!(finished.load(Ordering::SeqCst), 9);
}

#[test]
fn a_detached_panicking_task_does_not_disturb_the_loop() {
    let out = ioloop::block_on(async {
        drop(ioloop::spawn(async { panic!("nobody is listening") }));
        for _ in 0..3 {
            ioloop::yield_now().await;
        }
        "still running"
    });
    assert_eq!(out, "still running");
}

#[test]
fn a_panicking_waker_on_a_timer_is_contained() {
    ioloop::block_on(async {
        let mut sleep = ioloop::time::sleep(Duration::from_millis(2));
        // Arm the timer with a waker that panics when the loop fires it.
        let (bad, calls) = panicking_waker();
        assert!(poll_once_with(&mut sleep, &bad).is_pending());
        drop(bad);
        // Outlive it: the loop fires the bad waker while this task sleeps.
        ioloop::time::sleep(Duration::from_millis(20)).await;
        assert!(sleep.is_elapsed());
        assert_eq!(calls.calls.load(Ordering::SeqCst), 1);
    });
}

/// Wakers fired together are woken in one pass (one `catch_unwind` around
/// them all); a waker that panics ends the pass, and the pass goes on
/// with the wakers after it: two panics in a row, then one more waker.
/// On a paused clock, so that no deadline can pass before its timer is
/// armed, however slowly the test runs (under valgrind, say).
#[test]
fn wakers_after_a_panicking_one_in_the_same_batch_are_still_woken() {
    let rt = ioloop::Runtime::builder()
        .start_paused(true)
        .build()
        .unwrap();
    rt.block_on(async {
        let deadline = ioloop::time::Instant::now() + Duration::from_millis(2);
        let first = Arc::new(CountingWaker::default());
        let (bad_1, calls_1) = panicking_waker();
        let (bad_2, calls_2) = panicking_waker();
        let last = Arc::new(CountingWaker::default());
        let wakers = [
            Waker::from(first.clone()),
            bad_1,
            bad_2,
            Waker::from(last.clone()),
        ];
        // One timer each, all due at the same tick: fired in one batch.
        let mut sleeps: Vec<_> = wakers
            .iter()
            .map(|waker| {
                let mut sleep = Box::pin(ioloop::time::sleep_until(deadline));
                assert!(
                    sleep
                        .as_mut()
                        .poll(&mut Context::from_waker(waker))
                        .is_pending()
                );
                sleep
            })
            .collect();
        drop(wakers);
        ioloop::time::sleep_until(deadline + Duration::from_millis(20)).await;
        assert!(sleeps.iter_mut().all(|sleep| sleep.is_elapsed()));
        assert_eq!(first.wakes.load(Ordering::SeqCst), 1);
        assert_eq!(calls_1.calls.load(Ordering::SeqCst), 1);
        assert_eq!(calls_2.calls.load(Ordering::SeqCst), 1);
        assert_eq!(last.wakes.load(Ordering::SeqCst), 1);
        // The loop goes on.
        assert_eq!(ioloop::spawn(async { 7 }).await.unwrap(), 7);
    });
}

#[test]
fn a_panicking_waker_on_an_io_source_is_contained() -> std::io::Result<()> {
    ioloop::block_on(async {
        let (a, mut b) = mio::net::UnixStream::pair()?;
        let a = Registration::new(a)?;
        // Registrations start optimistic; clear that so the next poll parks.
        let first = poll_fn(|cx| a.poll_read_ready(cx)).await?;
        a.clear_readiness(first);
        let (bad, calls) = panicking_waker();
        let mut cx = std::task::Context::from_waker(&bad);
        assert!(a.poll_read_ready(&mut cx).is_pending());
        drop(bad);
        // The event wakes the panicking waker inside the loop's dispatch.
        b.write_all(b"x")?;
        let woken = async {
            while calls.calls.load(Ordering::SeqCst) == 0 {
                ioloop::yield_now().await;
            }
        };
        ioloop::time::timeout(Duration::from_secs(10), woken)
            .await
            .expect("the event never reached the waker");
        let event = poll_fn(|cx| a.poll_read_ready(cx)).await?;
        assert!(event.is_readable());
        Ok(())
    })
}

#[test]
fn a_panicking_join_waker_is_contained() {
    ioloop::block_on(async {
        let mut task = ioloop::spawn(async {
            ioloop::yield_now().await;
            9
        });
        // Park a panicking waker as the handle's join waker.
        let (bad, calls) = panicking_waker();
        assert!(poll_once_with(&mut task, &bad).is_pending());
        drop(bad);
        while !task.is_finished() {
            ioloop::yield_now().await;
        }
        assert_eq!(calls.calls.load(Ordering::SeqCst), 1);
        assert_eq!(task.await.unwrap(), 9);
    });
}

/// A hand-written future that panics when polled, and records in its
/// destructor whether the thread was panicking then (tokio's `Boom`).
struct Boom(Arc<std::sync::Mutex<Option<bool>>>);

impl std::future::Future for Boom {
    type Output = ();

    fn poll(self: std::pin::Pin<&mut Self>, _cx: &mut std::task::Context<'_>) -> Poll<()> {
        panic!("boom");
    }
}

impl Drop for Boom {
    fn drop(&mut self) {
        *self.0.lock().unwrap() = Some(std::thread::panicking());
    }
}

/// tokio's `rt_common::panic_in_task`: a task's future is dropped while
/// its panic unwinds, as synchronous code drops its locals. An `async`
/// block's own locals always were (the compiler's unwinding drops them);
/// this is about the future value itself: a hand-written future, the
/// fields of a combinator.
#[test]
fn a_panicking_task_drops_its_future_while_unwinding() {
    let dropped = Arc::new(std::sync::Mutex::new(None));
    let d = dropped.clone();
    ioloop::block_on(async move {
        let task = ioloop::spawn(Boom(d));
        assert!(task.await.unwrap_err().is_panic());
    });
    assert_eq!(
        *dropped.lock().unwrap(),
        Some(true),
        "the future was dropped after the panic was caught"
    );
}

/// What that is for: a `std::sync::Mutex` guard in a local task's future
/// is dropped while the task's panic unwinds, so the mutex is poisoned,
/// as in synchronous code, instead of handing the half-updated value to
/// the next user as if nothing had happened.
#[test]
fn a_panicking_task_poisons_the_mutex_its_future_holds() {
    static SHARED: std::sync::Mutex<u32> = std::sync::Mutex::new(0);
    struct HalfUpdate(std::sync::MutexGuard<'static, u32>);
    impl std::future::Future for HalfUpdate {
        type Output = ();
        fn poll(mut self: std::pin::Pin<&mut Self>, _cx: &mut std::task::Context<'_>) -> Poll<()> {
            *self.0 = 1; // half of an update
            panic!("fails in the middle of an update");
        }
    }
    ioloop::block_on(async {
        let task = ioloop::spawn_local(HalfUpdate(SHARED.lock().unwrap()));
        assert!(task.await.unwrap_err().is_panic());
    });
    assert!(SHARED.is_poisoned(), "the panic left the mutex unpoisoned");
}

/// A future whose destructor panics too, while its own panic unwinds,
/// does not abort the process: the second panic is logged, the handle
/// gets the first, and the loop goes on. (A destructor of an `async`
/// block's local that panics while the block unwinds does abort, in any
/// runtime: the compiler's unwinding of the block cannot catch it.)
#[test]
fn a_destructor_that_panics_while_its_future_unwinds_is_contained() {
    struct PanicsTwice;
    impl std::future::Future for PanicsTwice {
        type Output = ();
        fn poll(self: std::pin::Pin<&mut Self>, _cx: &mut std::task::Context<'_>) -> Poll<()> {
            panic!("the task fails");
        }
    }
    impl Drop for PanicsTwice {
        fn drop(&mut self) {
            panic!("the destructor fails too");
        }
    }
    ioloop::block_on(async {
        let err = ioloop::spawn(PanicsTwice).await.unwrap_err();
        assert!(err.is_panic());
        assert_eq!(ioloop::spawn(async { 7 }).await.unwrap(), 7);
    });
}
