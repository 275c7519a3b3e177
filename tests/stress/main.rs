//! Scenarios at scale, and the ones that watch the whole process: tens of
//! thousands of connections, timers and wakes, fd exhaustion, panics
//! everywhere, a soak; the descriptors, resident memory and eventfds of
//! this very process.
//!
//! One at a time: every test here holds [`one_at_a_time`] for its whole
//! run, so each has the process (and the machine's two cores) to itself,
//! as it had when it was a binary of its own. The servers run in child
//! processes (this binary again, running only the calling test) where
//! their descriptors, memory and CPU are measured, or where an abort must
//! show as a failed exit.

use std::sync::{Mutex, MutexGuard, PoisonError};

mod close;
mod connections;
mod edge_wake;
mod edge_writer;
mod emfile;
mod panics;
mod soak;
mod tcp_fd_count;
mod timers;

/// The lock every test of this binary holds while it runs: descriptor
/// numbers reused at once, the process's open descriptors, its resident
/// memory and its eventfds are only this test's while no other runs.
fn one_at_a_time() -> MutexGuard<'static, ()> {
    static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());
    // A failed test poisons the lock; the next test owes it nothing.
    ONE_AT_A_TIME.lock().unwrap_or_else(PoisonError::into_inner)
}
