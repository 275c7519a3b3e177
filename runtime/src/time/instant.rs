//! `Instant`: a point in time on the clock of the runtime it is read in.

use std::fmt;
use std::ops::{Add, AddAssign, Sub, SubAssign};
use std::time::Duration;

use crate::clock::{self, ClockState, instant};
use crate::event_loop::core;
use crate::handle::Handle;

/// A point in time, read from the clock of the current runtime: the same
/// as [`std::time::Instant`] until the runtime is
/// [paused](super::pause), and the runtime's virtual clock from then on.
///
/// Code that measures time with this type (`Instant::now()`,
/// [`elapsed`](Instant::elapsed)) sees what the runtime's timers see: in a
/// test on a paused runtime, an hour's [`sleep`](super::sleep) takes an
/// hour of `Instant` time and no wall time. [`std::time::Instant`] always
/// reads the real clock.
///
/// Which clock [`now`](Instant::now) reads: that of the runtime whose loop
/// runs on this thread, or that this thread works for (a blocking job, a
/// `block_on` waiting its turn); anywhere else, the real clock. A runtime
/// never paused has the real clock: outside tests this is `std`'s instant,
/// read at the same cost.
///
/// The two convert both ways ([`from_std`](Instant::from_std),
/// [`into_std`](Instant::into_std), and `From`), and an `Instant` is the
/// same size as `std`'s. An instant read from a virtual clock is still an
/// instant on `std`'s timeline: the virtual clock starts from the real time
/// at which the runtime was paused.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use ioloop::time::{Instant, sleep};
///
/// ioloop::block_on(async {
///     let start = Instant::now();
///     sleep(Duration::from_millis(5)).await;
///     assert!(start.elapsed() >= Duration::from_millis(5));
///     assert!(Instant::now() - start >= Duration::from_millis(5));
/// });
/// ```
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Instant {
    std: std::time::Instant,
}

impl Instant {
    /// The current time on the clock of the runtime this thread belongs
    /// to; the real time outside a runtime, or if the runtime was never
    /// paused.
    ///
    /// # Examples
    ///
    /// ```
    /// let a = ioloop::time::Instant::now();
    /// let b = ioloop::time::Instant::now();
    /// assert!(b >= a);
    /// ```
    pub fn now() -> Instant {
        if !clock::any_virtual() {
            return Instant::from_std(std::time::Instant::now());
        }
        Instant::from_std(instant(current_clock().now()))
    }

    /// The same point in time as `std`'s instant `std`.
    ///
    /// # Examples
    ///
    /// ```
    /// let now = std::time::Instant::now();
    /// assert_eq!(ioloop::time::Instant::from_std(now).into_std(), now);
    /// ```
    pub fn from_std(std: std::time::Instant) -> Instant {
        Instant { std }
    }

    /// The same point in time as a [`std::time::Instant`].
    pub fn into_std(self) -> std::time::Instant {
        self.std
    }

    /// The time from `earlier` to `self`; zero if `earlier` is later.
    pub fn duration_since(&self, earlier: Instant) -> Duration {
        self.std.saturating_duration_since(earlier.std)
    }

    /// The time from `earlier` to `self`, or `None` if `earlier` is later.
    pub fn checked_duration_since(&self, earlier: Instant) -> Option<Duration> {
        self.std.checked_duration_since(earlier.std)
    }

    /// The time from `earlier` to `self`; zero if `earlier` is later.
    pub fn saturating_duration_since(&self, earlier: Instant) -> Duration {
        self.std.saturating_duration_since(earlier.std)
    }

    /// The time since `self` on the current runtime's clock (see
    /// [`now`](Instant::now)); zero if `self` is later.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use ioloop::time::{Instant, advance, pause};
    ///
    /// ioloop::block_on(async {
    ///     pause();
    ///     let start = Instant::now();
    ///     advance(Duration::from_secs(5)).await;
    ///     assert_eq!(start.elapsed(), Duration::from_secs(5));
    /// });
    /// ```
    pub fn elapsed(&self) -> Duration {
        Instant::now().duration_since(*self)
    }

    /// `self + duration`, or `None` if that cannot be represented.
    pub fn checked_add(&self, duration: Duration) -> Option<Instant> {
        self.std.checked_add(duration).map(Instant::from_std)
    }

    /// `self - duration`, or `None` if that cannot be represented.
    pub fn checked_sub(&self, duration: Duration) -> Option<Instant> {
        self.std.checked_sub(duration).map(Instant::from_std)
    }
}

/// The state of the clock this thread reads (see [`Instant::now`]).
pub(crate) fn current_clock() -> ClockState {
    core::with_core(|core| core.map(|core| core.clock.state()))
        .or_else(|| Handle::try_current().map(|handle| handle.shared().clock.get()))
        .unwrap_or(ClockState::Real)
}

impl From<std::time::Instant> for Instant {
    fn from(std: std::time::Instant) -> Instant {
        Instant::from_std(std)
    }
}

impl From<Instant> for std::time::Instant {
    fn from(instant: Instant) -> std::time::Instant {
        instant.std
    }
}

impl Add<Duration> for Instant {
    type Output = Instant;

    /// # Panics
    ///
    /// If the result cannot be represented; see
    /// [`checked_add`](Instant::checked_add).
    fn add(self, duration: Duration) -> Instant {
        Instant::from_std(self.std + duration)
    }
}

impl AddAssign<Duration> for Instant {
    fn add_assign(&mut self, duration: Duration) {
        *self = *self + duration;
    }
}

impl Sub<Duration> for Instant {
    type Output = Instant;

    /// # Panics
    ///
    /// If the result cannot be represented; see
    /// [`checked_sub`](Instant::checked_sub).
    fn sub(self, duration: Duration) -> Instant {
        Instant::from_std(self.std - duration)
    }
}

impl SubAssign<Duration> for Instant {
    fn sub_assign(&mut self, duration: Duration) {
        *self = *self - duration;
    }
}

impl Sub<Instant> for Instant {
    type Output = Duration;

    /// The time from `earlier` to `self`; zero if `earlier` is later.
    fn sub(self, earlier: Instant) -> Duration {
        self.duration_since(earlier)
    }
}

impl fmt::Debug for Instant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.std.fmt(f)
    }
}
