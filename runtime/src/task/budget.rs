//! The cooperative budget: how many I/O operations a task may complete in
//! one poll before it is made to yield.
//!
//! A task only gives the loop back when it returns `Pending`. A task whose
//! sockets are always ready (an echo loop on loopback, an accept loop under
//! a burst of connections) never does, and would starve every other task,
//! the timers and the poller. So each poll starts with a budget; every
//! readiness check on a registration spends one unit, and when none is
//! left the check returns `Pending` after waking the task, which sends it
//! to the back of the run queue, behind the next poll of the OS.
//!
//! 128 operations per poll: large enough that a busy connection does
//! useful batches between yields, small enough that one task cannot hold
//! the loop for long.

use std::cell::Cell;
use std::task::{Context, Poll};

use crate::context;

/// Operations a task may complete per poll.
pub(crate) const PER_POLL: u32 = 128;

/// No limit: outside a runtime's tasks (a registration polled by another
/// executor, or on a thread whose loop has returned).
const UNLIMITED: u32 = u32::MAX;

thread_local! {
    // A thread-local of its own rather than a field of the loop's core: it
    // is touched on every readiness check, and a `Cell` here costs a load
    // and a store, where reaching the core costs a `RefCell` borrow too.
    static LEFT: Cell<u32> = const { Cell::new(UNLIMITED) };
}

/// Gives the job about to run on this thread a fresh budget.
pub(crate) fn reset() {
    LEFT.set(PER_POLL);
}

/// Lifts the limit: the loop on this thread has stopped running jobs.
pub(crate) fn lift() {
    LEFT.set(UNLIMITED);
}

/// Spends one unit of the current task's budget, or, if it is used up,
/// wakes the task, sends it behind the next poll of the OS, and returns
/// `Pending`.
pub(crate) fn poll_proceed(cx: &mut Context<'_>) -> Poll<()> {
    let left = LEFT.get();
    if left == 0 {
        context::with_core(|core| {
            if let Some(core) = core {
                core.note_yield();
            }
        });
        cx.waker().wake_by_ref();
        return Poll::Pending;
    }
    if left != UNLIMITED {
        LEFT.set(left - 1);
    }
    Poll::Ready(())
}
