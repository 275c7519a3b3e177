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

use std::task::{Context, Poll};

use crate::context;

/// Operations a task may complete per poll.
pub(crate) const PER_POLL: u32 = 128;

/// Spends one unit of the current task's budget, or, if it is used up,
/// wakes the task and returns `Pending`. Off the loop thread (a
/// registration polled by another executor) there is no budget to spend.
pub(crate) fn poll_proceed(cx: &mut Context<'_>) -> Poll<()> {
    if context::with_core(|core| core.is_none_or(|core| core.spend_budget())) {
        Poll::Ready(())
    } else {
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}
