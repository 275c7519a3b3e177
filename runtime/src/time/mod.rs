//! Time: sleeping, timeouts and intervals, driven by the loop's timer heap.
//!
//! Each armed timer sits in one heap per runtime (`timers.rs`). Every tick
//! the loop fires the timers that are due and sleeps in the poller until
//! the nearest remaining deadline, rounded up to whole milliseconds so a
//! timer a few hundred microseconds away never turns into a spin of
//! zero-timeout polls.
//!
//! - [`sleep`], [`sleep_until`] → [`Sleep`]
//! - [`timeout`], [`timeout_at`] → [`Timeout`], failing with [`Elapsed`]
//! - [`interval`], [`interval_at`] → [`Interval`], with a
//!   [`MissedTickBehavior`]

mod error;
mod interval;
mod sleep;
mod timeout;
pub(crate) mod timers;

pub use error::Elapsed;
pub use interval::{Interval, MissedTickBehavior, interval, interval_at};
pub(crate) use sleep::saturating_add;
pub use sleep::{Sleep, sleep, sleep_until};
pub use timeout::{Timeout, timeout, timeout_at};
