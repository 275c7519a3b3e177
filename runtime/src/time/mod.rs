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
//! [paused](pause); a paused clock moves only by [`advance`], or by
//! auto-advance when the runtime has nothing else to do.

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
