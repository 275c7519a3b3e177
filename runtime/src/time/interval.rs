//! `interval`, `interval_at`, and `Interval`'s missed-tick policy.

use std::future::Future;
use std::future::poll_fn;
use std::pin::Pin;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use super::instant::Instant;
use super::sleep::{Sleep, saturating_add, sleep_until};

/// What an [`Interval`] does when a tick is delivered after the next one
/// was due.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MissedTickBehavior {
    /// Deliver every missed tick, however many, back to back until caught
    /// up with the original schedule; each spends the task's
    /// [budget](crate::task::poll_budget) like any elapsed sleep.
    Burst,
    /// Restart the schedule: the next tick comes one whole period after the
    /// late one was delivered.
    Delay,
    /// Drop the missed ticks and resume on the original schedule at the
    /// next instant still in the future. The default.
    #[default]
    Skip,
}

/// Ticks every `period`, the first tick at once.
///
/// On the current runtime's clock, [paused](super::pause) or not (see
/// [`Instant::now`]); made outside a runtime, it starts from the real time.
///
/// # Panics
///
/// If `period` is zero. The returned `Interval` panics if polled outside an
/// ioloop runtime.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use ioloop::time::Instant;
///
/// ioloop::block_on(async {
///     let start = Instant::now();
///     let mut every = ioloop::time::interval(Duration::from_millis(10));
///     every.tick().await; // at once
///     every.tick().await;
///     every.tick().await;
///     assert!(start.elapsed() >= Duration::from_millis(20));
/// });
/// ```
pub fn interval(period: Duration) -> Interval {
    interval_at(Instant::now(), period)
}

/// Ticks every `period`, the first tick at `start`.
///
/// # Panics
///
/// As [`interval`].
pub fn interval_at(start: Instant, period: Duration) -> Interval {
    assert!(
        period > Duration::ZERO,
        "ioloop: an interval's period must be non-zero"
    );
    Interval {
        sleep: sleep_until(start),
        period,
        missed: MissedTickBehavior::default(),
    }
}

/// A stream of ticks, one per period, made by [`interval`]; also a
/// [`futures_core::Stream`] of the ticks' scheduled instants.
#[derive(Debug)]
pub struct Interval {
    sleep: Sleep,
    period: Duration,
    missed: MissedTickBehavior,
}

impl Interval {
    /// Waits for the next tick and returns the instant it was scheduled for.
    ///
    /// # Cancellation
    ///
    /// Cancel-safe: a tick is consumed only when this returns.
    pub async fn tick(&mut self) -> Instant {
        poll_fn(|cx| self.poll_tick(cx)).await
    }

    /// Polls for the next tick; on `Ready`, schedules the one after.
    pub fn poll_tick(&mut self, cx: &mut Context<'_>) -> Poll<Instant> {
        ready!(Pin::new(&mut self.sleep).poll(cx));
        let scheduled = self.sleep.deadline();
        let now = Instant::now();
        let next = saturating_add(scheduled, self.period);
        let next = match self.missed {
            _ if next > now => next,
            MissedTickBehavior::Burst => next,
            MissedTickBehavior::Delay => saturating_add(now, self.period),
            MissedTickBehavior::Skip => {
                // The first instant on the original grid after `now`,
                // counted from `now`: what is left of the period it falls
                // in. In u128 nanoseconds, so no count of missed periods is
                // capped (a 1 µs period after a 2 h stall misses 7.2
                // billion), and the step is at most one period, so it never
                // lands in the past. A step past u64 nanoseconds (584
                // years) is past what `saturating_add` caps it at anyway.
                let behind = now.duration_since(scheduled).as_nanos();
                let period = self.period.as_nanos();
                let left = u64::try_from(period - behind % period).unwrap_or(u64::MAX);
                saturating_add(now, Duration::from_nanos(left))
            }
        };
        self.sleep.reset(next);
        Poll::Ready(scheduled)
    }

    /// Restarts the schedule: the next tick comes one period from now, on
    /// the current runtime's clock.
    pub fn reset(&mut self) {
        self.reset_after(self.period);
    }

    /// Restarts the schedule from now: the next tick is due at once, the
    /// rest a period apart from it.
    pub fn reset_immediately(&mut self) {
        self.reset_at(Instant::now());
    }

    /// Restarts the schedule: the next tick comes `after` from now, the
    /// rest a period apart from it.
    pub fn reset_after(&mut self, after: Duration) {
        self.sleep.reset_after(after);
    }

    /// Restarts the schedule: the next tick is at `deadline`, even if that
    /// is more than a period away, the rest a period apart from it. Ticks
    /// missed before are forgotten; a `deadline` in the past is a missed
    /// tick, caught up on as the [`MissedTickBehavior`] says. As tokio's.
    ///
    /// ```
    /// use std::time::Duration;
    /// use ioloop::time::{Instant, interval};
    ///
    /// ioloop::block_on(async {
    ///     let mut every = interval(Duration::from_secs(3600));
    ///     every.tick().await; // at once
    ///     let soon = Instant::now() + Duration::from_millis(5);
    ///     every.reset_at(soon);
    ///     assert_eq!(every.tick().await, soon);
    /// });
    /// ```
    pub fn reset_at(&mut self, deadline: Instant) {
        self.sleep.reset(deadline);
    }

    /// The period between ticks.
    pub fn period(&self) -> Duration {
        self.period
    }

    /// The current missed-tick policy.
    pub fn missed_tick_behavior(&self) -> MissedTickBehavior {
        self.missed
    }

    /// Changes the missed-tick policy.
    pub fn set_missed_tick_behavior(&mut self, behavior: MissedTickBehavior) {
        self.missed = behavior;
    }
}

impl futures_core::Stream for Interval {
    type Item = Instant;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Instant>> {
        self.get_mut().poll_tick(cx).map(Some)
    }
}
