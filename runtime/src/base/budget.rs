//! The state of the cooperative budget, per thread: what is left of the
//! running task's budget, whether it asked to yield, and which task poll
//! this is. The tick resets it before each poll and reads the yield flag
//! after running its jobs; what spends it is `task/budget.rs`.

use std::cell::Cell;

/// Operations a task may complete per poll.
pub(crate) const PER_POLL: u32 = 128;

/// No limit: outside a runtime's tasks (a registration polled by another
/// executor, or on a thread whose loop has returned).
pub(crate) const UNLIMITED: u32 = u32::MAX;

thread_local! {
    // A thread-local of its own rather than a field of the loop's core: it
    // is touched on every readiness check, and a `Cell` here costs a load
    // and a store, where reaching the core costs a `RefCell` borrow too.
    pub(crate) static LEFT: Cell<u32> = const { Cell::new(UNLIMITED) };
    /// A task asked to go behind the next poll of the OS (it yielded, or
    /// ran out of budget) since the loop last polled it.
    pub(crate) static YIELDED: Cell<bool> = const { Cell::new(false) };
    /// The number of the job running on this thread (0 before the first):
    /// which task poll this is, so that a `Sleep` can tell whether it is
    /// polled in the poll that made it (see `Sleep::poll_local`). Wraps.
    pub(crate) static JOB: Cell<u32> = const { Cell::new(0) };
}

/// Asks the loop on this thread to poll the OS before it runs the task
/// again: the task yielded.
pub(crate) fn yield_to_poll() {
    YIELDED.set(true);
}

/// Whether a task asked for a poll of the OS since the last call.
pub(crate) fn take_yielded() -> bool {
    YIELDED.replace(false)
}

/// Gives the job about to run on this thread a fresh budget, and the next
/// job number.
pub(crate) fn reset() {
    LEFT.set(PER_POLL);
    JOB.set(JOB.get().wrapping_add(1));
}

/// The number of the job running on this thread: it changes with every
/// task poll the loop makes (and wraps after four billion).
#[inline]
pub(crate) fn job() -> u32 {
    JOB.get()
}
