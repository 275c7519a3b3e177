//! Deterministic simulation's side of the runtime: [`Rng`],
//! [`schedule_hash`], and the [`Backend`] a loop built with
//! [`Builder::build_simulated`](crate::Builder::build_simulated) polls.

mod rng;

pub use crate::event_loop::backend::{Backend, Ready};
pub use rng::{Rng, TraceHash};

use crate::event_loop::{backend, core};

/// A hash of the order the loop on this thread ran its jobs in so far, if
/// it is seeded ([`Builder::seed`](crate::Builder::seed)): the same seed,
/// the same hash. `None` outside a seeded runtime.
pub fn schedule_hash() -> Option<u64> {
    core::with_core(|core| core.and_then(|core| core.schedule_hash()))
}

/// The tag of the task running on this thread; 0 if none. In a seeded
/// runtime each task carries the tag that was current when it was spawned
/// (its spawner's): a simulation tags a host's first task with the host,
/// and every task that one spawns is the host's too.
pub fn tag() -> u32 {
    backend::tag()
}

/// Runs `f` with `tag` current: a task it spawns on a seeded runtime
/// carries `tag`.
pub fn with_tag<R>(tag: u32, f: impl FnOnce() -> R) -> R {
    struct Restore(u32);
    impl Drop for Restore {
        fn drop(&mut self) {
            backend::set_tag(self.0);
        }
    }
    let _restore = Restore(backend::set_tag(tag));
    f()
}
