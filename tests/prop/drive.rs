//! Driving a stream future by hand, for the property tests: poll it until
//! it is ready (or drop it after a few polls, to test cancellation), and
//! fail if it ever returns `Pending` without arranging to be woken.
//!
//! No runtime is needed: the in-memory doubles (`ScriptedReader`'s pauses,
//! `PlannedWriter`'s `Pending`) wake the task inside the poll that returns
//! `Pending`, so polling again at once is what a runtime would do. The
//! world is closed, so a `Pending` with no wake behind it can only mean a
//! task that would sleep forever: a lost wakeup, which the runtime promises
//! never to allow. A runtime would show that as a hang; here it is an
//! assertion naming it.

use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll, Wake, Waker};

/// Far more polls than any generated case needs (one per chunk or planned
/// refusal, at most a few thousand); reaching it means no progress.
const MAX_POLLS: usize = 1_000_000;

#[derive(Default)]
struct Wakes(AtomicUsize);

impl Wake for Wakes {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }
    fn wake_by_ref(self: &Arc<Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// Polls `future` to completion and returns its output.
///
/// # Panics
///
/// If a poll returns `Pending` without waking the task, or the future is
/// still pending after [`MAX_POLLS`] polls.
pub fn drive<F: Future>(future: F) -> F::Output {
    match drive_at_most(future, usize::MAX) {
        Some(output) => output,
        None => unreachable!("drive_at_most(usize::MAX) never gives up"),
    }
}

/// Polls `future` at most `polls` times (at least once): its output if it
/// completed, or `None` after dropping it while it was still pending, the
/// way `timeout` or `select!` would cancel it.
///
/// # Panics
///
/// As [`drive`].
pub fn drive_at_most<F: Future>(future: F, polls: usize) -> Option<F::Output> {
    drive_counting(future, polls).0
}

/// [`drive_at_most`], also returning how many polls it took.
///
/// # Panics
///
/// As [`drive`].
pub fn drive_counting<F: Future>(future: F, polls: usize) -> (Option<F::Output>, usize) {
    let wakes = Arc::new(Wakes::default());
    let waker = Waker::from(wakes.clone());
    let mut cx = Context::from_waker(&waker);
    let mut future = pin!(future);
    for poll in 1..=MAX_POLLS {
        let before = wakes.0.load(Ordering::SeqCst);
        if let Poll::Ready(output) = future.as_mut().poll(&mut cx) {
            return (Some(output), poll);
        }
        assert!(
            wakes.0.load(Ordering::SeqCst) > before,
            "poll {poll} returned Pending without waking the task: a lost wakeup"
        );
        if poll >= polls {
            return (None, poll);
        }
    }
    panic!("still pending after {MAX_POLLS} polls: no progress");
}
