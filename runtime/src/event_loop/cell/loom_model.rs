//! loom models of the task state machine: a task's state word, its stage
//! and the waker its `JoinHandle` leaves in the scheduler's table of
//! joiners, raced by a waker, `abort` or the `JoinHandle` on another thread
//! while the loop runs the task.
//!
//! ```text
//! RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=3 \
//!     cargo test -p ioloop-runtime --release --lib loom --target-dir target/loom
//! ```
//!
//! The loop's side is `run` on the model's main thread, then running
//! whatever was queued meanwhile (`Queue::run_all`): a task knows only its
//! scheduler, so the models need no runtime behind it.

use std::future::{Future, poll_fn};
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use loom::thread;

use super::{COMPLETE, DETACHED, Runnable, Schedule, Stage, TaskCell, Typed};
use crate::sync::harness::{Counted, Flag, Queue};
use crate::sync::{AtomicBool, AtomicUsize, Mutex, Ordering};
use crate::task::{JoinError, JoinHandle};

/// Spawns `future` the way `ioloop::spawn` does, minus the task list.
fn spawn<F>(future: F) -> (Typed<F, Queue>, JoinHandle<F::Output>)
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    let task = TaskCell::allocate(
        future,
        Arc::new(Queue::default()),
        std::panic::Location::caller(),
    );
    let handle = JoinHandle::new(&task);
    (task, handle)
}

/// Polls `handle` once with `waker`.
fn poll_join<T>(handle: &mut JoinHandle<T>, waker: &Waker) -> Poll<Result<T, JoinError>> {
    pin!(handle).poll(&mut Context::from_waker(waker))
}

/// A waker fired from another thread before, during or after the loop's
/// poll of the task: the task is always polled again, and completes. The
/// loop clears `SCHEDULED` before it polls, so that a wake landing during
/// the poll queues the task again instead of finding the bit still set.
#[test]
fn loom_wake_while_running() {
    loom::model(|| {
        let ready = Arc::new(AtomicBool::new(false));
        let slot = Arc::new(Mutex::new(None::<Waker>));
        let polls = Arc::new(AtomicUsize::new(0));
        let (task, mut handle) = spawn({
            let (ready, slot, polls) = (ready.clone(), slot.clone(), polls.clone());
            poll_fn(move |cx| {
                polls.fetch_add(1, Ordering::Relaxed);
                *slot.lock() = Some(cx.waker().clone());
                if ready.load(Ordering::Acquire) {
                    Poll::Ready(())
                } else {
                    Poll::Pending
                }
            })
        });

        let waker = thread::spawn(move || {
            ready.store(true, Ordering::Release);
            let waker = slot.lock().take();
            if let Some(waker) = waker {
                waker.wake();
            }
        });
        task.task().run();
        waker.join().unwrap();
        task.scheduler.run_all();

        assert!(matches!(
            poll_join(&mut handle, Waker::noop()),
            Poll::Ready(Ok(()))
        ));
        // Woken at most once after a `Pending`: no spurious second entry.
        assert!(polls.load(Ordering::Relaxed) <= 2);
    });
}

/// A waker fired from another thread while the task completes, or after:
/// nothing happens. A wake that slipped in before `COMPLETE` may leave one
/// stale queue entry, and running it neither polls the future again nor
/// reports a second completion; a wake after it queues nothing.
#[test]
fn loom_wake_after_completion() {
    loom::model(|| {
        let slot = Arc::new(Mutex::new(None::<Waker>));
        let polls = Arc::new(AtomicUsize::new(0));
        let (task, mut handle) = spawn({
            let (slot, polls) = (slot.clone(), polls.clone());
            poll_fn(move |cx| {
                polls.fetch_add(1, Ordering::Relaxed);
                *slot.lock() = Some(cx.waker().clone());
                Poll::Ready(7)
            })
        });

        let waker = thread::spawn(move || {
            let waker = slot.lock().take();
            if let Some(waker) = &waker {
                waker.wake_by_ref();
            }
            waker
        });
        assert!(task.task().run(), "the first run completes the task");
        let waker = waker.join().unwrap();
        let stale = task.scheduler.take();
        assert!(stale.len() <= 1);
        for job in stale {
            assert!(!job.run(), "a stale entry reports no second completion");
        }
        if let Some(waker) = waker {
            waker.wake_by_ref();
            waker.wake();
            assert!(task.scheduler.take().is_empty());
        }

        assert_eq!(polls.load(Ordering::Relaxed), 1);
        assert!(matches!(
            poll_join(&mut handle, Waker::noop()),
            Poll::Ready(Ok(7))
        ));
    });
}

/// `abort` from another thread racing the loop's poll of the task, which
/// either completes it (`completes`) or leaves it pending: exactly one
/// outcome (the output if and only if the future produced it, cancelled
/// otherwise), the future dropped exactly once whichever wins, and an
/// abort that lands after the poll is never lost.
fn abort_racing_poll(completes: bool) {
    loom::model(move || {
        let (future_guard, future_drops) = Counted::new();
        let (output, output_drops) = Counted::new();
        let mut output = Some(output);
        let produced = Arc::new(AtomicBool::new(false));
        let (task, handle) = spawn({
            let produced = produced.clone();
            poll_fn(move |_| {
                let _hold = &future_guard;
                if !completes {
                    return Poll::Pending;
                }
                produced.store(true, Ordering::Relaxed);
                Poll::Ready(output.take().expect("polled once"))
            })
        });

        let aborter = thread::spawn(move || {
            handle.abort();
            handle
        });
        task.task().run();
        let mut handle = aborter.join().unwrap();
        task.scheduler.run_all();

        assert_eq!(future_drops.load(Ordering::Acquire), 1);
        match poll_join(&mut handle, Waker::noop()) {
            Poll::Ready(Ok(output)) => {
                assert!(produced.load(Ordering::Relaxed));
                drop(output);
            }
            Poll::Ready(Err(err)) => {
                assert!(err.is_cancelled());
                assert!(!produced.load(Ordering::Relaxed), "the output was lost");
            }
            Poll::Pending => panic!("the abort was lost: the task never finished"),
        }
        // Dropped with the future if the abort won, by the handle's owner
        // if the task did: once either way.
        assert_eq!(output_drops.load(Ordering::Acquire), 1);
    });
}

#[test]
fn loom_abort_racing_completion() {
    abort_racing_poll(true);
}

#[test]
fn loom_abort_racing_a_pending_poll() {
    abort_racing_poll(false);
}

/// `cancel` (a wake from another thread finding the runtime shut down)
/// racing the loop's poll, which leaves the future pending: whoever holds
/// the stage drops the future (the poller, when the cancel lands during its
/// poll; the canceller, before or after it), exactly once, and with nothing
/// queued to finish the job later.
#[test]
fn loom_cancel_racing_a_pending_poll() {
    loom::model(|| {
        let (future_guard, future_drops) = Counted::new();
        let (task, mut handle) = spawn(poll_fn(move |_| {
            let _hold = &future_guard;
            Poll::<()>::Pending
        }));

        let canceller = thread::spawn({
            let task = task.clone();
            move || task.cancel(JoinError::cancelled())
        });
        task.task().run();
        canceller.join().unwrap();

        assert_eq!(future_drops.load(Ordering::Acquire), 1);
        assert!(matches!(
            poll_join(&mut handle, Waker::noop()),
            Poll::Ready(Err(err)) if err.is_cancelled()
        ));
    });
}

/// Three at once around a pending poll: a `cancel` on one thread, an
/// `abort` followed by the handle's drop on another, the loop's poll (and
/// whatever the abort queued) on the main thread. Whoever holds the stage
/// when the task is cancelled drops the future, once; nobody else touches
/// the stage (loom checks every access), and it ends `Consumed`: the error
/// nobody will read is dropped with the task.
#[test]
#[allow(unsafe_code)]
fn loom_cancel_abort_and_detach_racing_a_pending_poll() {
    loom::model(|| {
        let (future_guard, future_drops) = Counted::new();
        let (task, handle) = spawn(poll_fn(move |_| {
            let _hold = &future_guard;
            Poll::<()>::Pending
        }));

        let canceller = thread::spawn({
            let task = task.clone();
            move || task.cancel(JoinError::cancelled())
        });
        let aborter = thread::spawn(move || {
            handle.abort();
            drop(handle);
        });
        task.task().run();
        canceller.join().unwrap();
        aborter.join().unwrap();
        task.scheduler.run_all();

        assert_eq!(future_drops.load(Ordering::Acquire), 1);
        assert_ne!(task.header.state.load(Ordering::Acquire) & COMPLETE, 0);
        assert!(task.stage.with_mut(|stage| matches!(
            // SAFETY: every other thread is done with the task.
            unsafe { &*stage },
            Stage::Consumed
        )));
    });
}

/// The `JoinHandle` dropped on another thread while the loop runs the task
/// to completion: whichever of the two sets the second of `COMPLETE` and
/// `DETACHED` drops the output, so it is dropped exactly once, and before
/// the task itself goes away (nobody keeps it alive for nothing).
#[test]
#[allow(unsafe_code)]
fn loom_detach_while_running() {
    loom::model(|| {
        let (future_guard, future_drops) = Counted::new();
        let (output, output_drops) = Counted::new();
        let mut output = Some(output);
        let (task, handle) = spawn(poll_fn(move |_| {
            let _hold = &future_guard;
            Poll::Ready(output.take().expect("polled once"))
        }));

        let detacher = thread::spawn(move || drop(handle));
        task.task().run();
        detacher.join().unwrap();

        assert_eq!(
            task.header.state.load(Ordering::Acquire) & (COMPLETE | DETACHED),
            COMPLETE | DETACHED
        );
        assert_eq!(future_drops.load(Ordering::Acquire), 1);
        assert_eq!(output_drops.load(Ordering::Acquire), 1);
        // Both threads are done: the stage is nobody's, and loom checks
        // this read against every access they made.
        assert!(task.stage.with_mut(|stage| matches!(
            // SAFETY: no other thread is left to reach the stage.
            unsafe { &*stage },
            Stage::Consumed
        )));
    });
}

/// The `JoinHandle` polled on another thread (once, or twice with a second
/// waker replacing the first) while the loop completes the task: a poll
/// that returned `Pending` is always followed by a wake of the last waker
/// it registered, never a lost one.
fn join_waker_racing_completion(polls: usize) {
    loom::model(move || {
        let (task, handle) = spawn(async { 5 });
        let joiner = thread::spawn(move || {
            let mut handle = handle;
            let mut last = None;
            for _ in 0..polls {
                let flag = Flag::new();
                if poll_join(&mut handle, &flag.waker()).is_ready() {
                    return (handle, None);
                }
                last = Some(flag);
            }
            (handle, last)
        });
        task.task().run();
        let (mut handle, pending) = joiner.join().unwrap();

        if let Some(flag) = pending {
            assert!(flag.take(), "the join waker was never woken");
            assert!(matches!(
                poll_join(&mut handle, Waker::noop()),
                Poll::Ready(Ok(5))
            ));
        }
        assert_eq!(joiners_left(&task), 0, "a waker outlived the wait");
    });
}

/// How many wakers the task's scheduler keeps for waiting handles.
fn joiners_left<F: Future>(task: &Typed<F, Queue>) -> usize {
    task.scheduler.joiners().waiting()
}

/// The `JoinHandle` polled once and then dropped on another thread while
/// the loop completes the task: the waker it left is taken by exactly one
/// of the two (and woken, if the completion took it), never left in the
/// table.
#[test]
fn loom_waiting_handle_dropped_racing_completion() {
    loom::model(|| {
        let (task, handle) = spawn(async { 5 });
        let flag = Flag::new();
        let joiner = {
            let flag = flag.clone();
            thread::spawn(move || {
                let mut handle = handle;
                let _ = poll_join(&mut handle, &flag.waker());
                drop(handle);
            })
        };
        task.task().run();
        joiner.join().unwrap();
        assert_eq!(joiners_left(&task), 0, "a waker outlived its handle");
        assert_eq!(Arc::strong_count(&flag), 1, "a join waker was leaked");
        drop(task);
    });
}

#[test]
fn loom_join_waker_racing_completion() {
    join_waker_racing_completion(1);
}

#[test]
fn loom_join_waker_replaced_racing_completion() {
    join_waker_racing_completion(2);
}

/// The `JoinHandle` polled on another thread while the loop completes the
/// task, then dropped once it has the output: the output comes back
/// through the handle and the task never drops it as well (the poll that
/// returns it marks the handle detached, so the drop after it has nothing
/// to do), and no join waker is left in the table.
#[test]
fn loom_output_taken_then_handle_dropped_racing_completion() {
    loom::model(|| {
        let (output, output_drops) = Counted::new();
        let mut output = Some(output);
        let (task, handle) = spawn(poll_fn(move |_| {
            Poll::Ready(output.take().expect("polled once"))
        }));
        let flag = Flag::new();
        let joiner = {
            let flag = flag.clone();
            thread::spawn(move || {
                let mut handle = handle;
                match poll_join(&mut handle, &flag.waker()) {
                    Poll::Ready(out) => (None, Some(out.expect("completed"))),
                    Poll::Pending => (Some(handle), None),
                }
            })
        };
        task.task().run();
        let (handle, out) = joiner.join().unwrap();
        let out = match (handle, out) {
            (None, Some(out)) => out,
            (Some(mut handle), None) => {
                assert!(flag.take(), "the join waker was never woken");
                match poll_join(&mut handle, Waker::noop()) {
                    Poll::Ready(out) => out.expect("completed"),
                    Poll::Pending => panic!("completed, yet pending"),
                }
            }
            _ => unreachable!(),
        };
        assert_ne!(task.header.state.load(Ordering::Acquire) & DETACHED, 0);
        assert_eq!(
            output_drops.load(Ordering::Acquire),
            0,
            "dropped by the task"
        );
        drop(out);
        assert_eq!(output_drops.load(Ordering::Acquire), 1);
        assert_eq!(joiners_left(&task), 0, "a waker outlived the wait");
        drop(task);
        assert_eq!(
            Arc::strong_count(&flag),
            1,
            "a join waker outlived the task"
        );
    });
}
