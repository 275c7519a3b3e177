//! What a seeded runtime (`Builder::scheduler`) answers through the
//! core's `Pick` seam: the hash of the order its jobs ran in, and a
//! simulated host's crash, its tasks aborted by tag. The scheduler itself
//! is the simulation's (`ioloop-sim`'s `Seeded`).

use crate::event_loop::cell::Task;
use crate::event_loop::core;

/// A hash of the order the loop on this thread ran its jobs in so far, if
/// it is seeded ([`Builder::scheduler`](crate::Builder::scheduler)): the same seed,
/// the same hash. `None` outside a seeded runtime.
pub fn schedule_hash() -> Option<u64> {
    core::with_core(|core| core.and_then(|core| core.schedule_hash()))
}

/// Aborts every task of the seeded runtime on this thread that carries
/// `tag`, as `JoinHandle::abort` would (each stops at its next turn, and
/// what it held, its sockets included, is dropped): a simulated host's
/// crash. Returns how many; none outside a seeded runtime.
pub fn abort_tagged(tag: u32) -> usize {
    let tasks: Vec<Task> = core::with_core(|core| {
        let Some((core, pick)) = core.and_then(|core| Some((core, core.seeded.as_deref()?))) else {
            return Vec::new();
        };
        let list = core.shared.tasks.lock();
        list.slab
            .iter()
            .filter(|&(key, _)| pick.tag(key) == tag)
            .map(|(_, listed)| listed.task.clone())
            .collect()
    });
    // Aborted once the task list's lock is let go: an abort queues the
    // task, which is a wake.
    let count = tasks.len();
    tasks.into_iter().for_each(Task::abort);
    count
}
