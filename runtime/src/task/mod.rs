//! Tasks: spawning, joining, yielding.
//!
//! - `cell`: the task itself (state bits, future, output) in one
//!   allocation, and how waking it schedules it.
//! - `join`: [`JoinHandle`], [`AbortHandle`] and [`JoinError`].
//! - `join_set`: [`JoinSet`], a group of tasks joined as they finish.
//! - `yield_now`: giving the loop a turn ([`yield_now()`]).
//! - `dump`: [`Dump`], the live tasks and what they wait on.

pub(crate) mod dump;
pub(crate) mod join;
mod join_set;
mod yield_now;

pub use crate::base::JoinError;
pub use crate::base::budget::{Unconstrained, consume_budget, poll_budget, unconstrained};
pub use crate::handle::{spawn, spawn_local};
pub use dump::{Dump, TaskDump, TaskState, WaitReason};
pub use join::{AbortHandle, JoinHandle};
pub use join_set::JoinSet;
pub use yield_now::{YieldNow, yield_now};
