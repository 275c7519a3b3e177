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
//! - [`Instant`]: the time on the runtime's clock
//! - [`pause`], [`resume`], [`advance`]: virtual time, for tests
//!
//! # The runtime's clock
//!
//! Each runtime reads the time from its own clock: the real one, until it
//! is [paused](pause). A paused clock moves only by [`advance`], or by
//! auto-advance when the runtime has nothing else to do, so a test that
//! sleeps an hour finishes at once. Everything here reads the time through
//! the current runtime's clock; [`Instant`] is the type it tells the time
//! in.

mod error;
mod instant;
mod interval;
mod pause;
mod sleep;
mod timeout;

pub use error::Elapsed;
pub use instant::Instant;
pub use interval::{Interval, MissedTickBehavior, interval, interval_at};
pub(crate) use pause::pause_core;
pub use pause::{advance, pause, resume};
pub use sleep::{Sleep, sleep, sleep_until};
pub use timeout::{Timeout, timeout, timeout_at};
