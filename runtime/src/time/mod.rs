//! Time: sleeping, timeouts and intervals, driven by the loop's timer heap.
//!
//! - [`sleep`], [`sleep_until`] → [`Sleep`]
//! - [`timeout`], [`timeout_at`] → [`Timeout`], failing with [`Elapsed`]
//! - [`interval`], [`interval_at`] → [`Interval`], with a
//!   [`MissedTickBehavior`]
//! - [`Instant`]: the time on the runtime's clock
//! - [`pause`], [`resume`], [`advance`]: virtual time, for tests
//!
//! Each runtime reads its own clock: the real one, until it is
//! [paused](pause); then only [`advance`] and auto-advance move it.

mod instant;
mod interval;
mod pause;
mod sleep;
mod timeout;

pub use instant::Instant;
pub use interval::{Interval, MissedTickBehavior, interval, interval_at};
pub(crate) use pause::pause_core;
pub use pause::{advance, pause, resume};
pub use sleep::{Sleep, sleep, sleep_until};
/// std's `Duration`, here so `ioloop::time` names every type its functions take.
pub use std::time::Duration;
pub use timeout::{Elapsed, Timeout, timeout, timeout_at};
