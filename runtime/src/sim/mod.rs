//! Deterministic simulation's side of the runtime: [`Rng`],
//! [`schedule_hash`], and the [`Backend`] a loop built with
//! [`Builder::build_simulated`](crate::Builder::build_simulated) polls.

mod rng;

pub use crate::event_loop::backend::{Backend, Ready};
pub use rng::Rng;

use crate::event_loop::core;

/// A hash of the order the loop on this thread ran its jobs in so far, if
/// it is seeded ([`Builder::seed`](crate::Builder::seed)): the same seed,
/// the same hash. `None` outside a seeded runtime.
pub fn schedule_hash() -> Option<u64> {
    core::with_core(|core| core.and_then(|core| core.schedule_hash()))
}
