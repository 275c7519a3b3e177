//! `sleep`, `sleep_until` and their future, `Sleep`.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, ready};
use std::time::{Duration, Instant};

use super::timers::TimerKey;
use crate::context;

/// Waits until `duration` has passed.
///
/// The clock starts when `sleep` is called, not when the future is first
/// polled. The future wakes no earlier than the deadline, and at most about
/// a millisecond after it when the loop is idle (the poller's timeout is in
/// whole milliseconds, rounded up).
///
/// # Panics
///
/// The returned future panics if polled outside an ioloop runtime.
///
/// # Cancellation
///
/// Dropping the future disarms the timer; nothing is left behind.
///
/// # Examples
///
/// ```
/// use std::time::{Duration, Instant};
///
/// ioloop::block_on(async {
///     let start = Instant::now();
///     ioloop::time::sleep(Duration::from_millis(20)).await;
///     assert!(start.elapsed() >= Duration::from_millis(20));
/// });
/// ```
#[doc(alias = "call_later")]
pub fn sleep(duration: Duration) -> Sleep {
    sleep_until(saturating_add(Instant::now(), duration))
}

/// `instant + duration`, saturating at thirty years from `instant` instead
/// of panicking on overflow: a deadline that far out means "never".
pub(crate) fn saturating_add(instant: Instant, duration: Duration) -> Instant {
    const NEVER: Duration = Duration::from_secs(86_400 * 365 * 30);
    instant.checked_add(duration.min(NEVER)).unwrap_or(instant)
}

/// Waits until `deadline`.
///
/// # Panics
///
/// The returned future panics if polled outside an ioloop runtime.
///
/// # Cancellation
///
/// Dropping the future disarms the timer; nothing is left behind.
///
/// # Examples
///
/// ```
/// use std::time::{Duration, Instant};
///
/// ioloop::block_on(async {
///     let deadline = Instant::now() + Duration::from_millis(10);
///     ioloop::time::sleep_until(deadline).await;
///     assert!(Instant::now() >= deadline);
/// });
/// ```
#[doc(alias = "call_at")]
pub fn sleep_until(deadline: Instant) -> Sleep {
    Sleep {
        deadline,
        timer: None,
    }
}

/// The future returned by [`sleep`] and [`sleep_until`].
///
/// It checks its own deadline whenever it is polled, against the loop's
/// clock (read each tick that has timers to fire, and never ahead of the
/// real time), so it never completes early, whatever woke it. It arms a
/// timer in the runtime's heap only when polled before its deadline.
///
/// `Sleep` is `Unpin`: it can be polled in place and
/// [`reset`](Sleep::reset) without pinning.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
///
/// ioloop::block_on(async {
///     let sleep: ioloop::time::Sleep = ioloop::time::sleep(Duration::from_millis(1));
///     sleep.await;
/// });
/// ```
#[derive(Debug)]
#[must_use = "futures do nothing unless you `.await` or poll them"]
pub struct Sleep {
    deadline: Instant,
    timer: Option<TimerKey>,
}

impl Sleep {
    /// The instant this future completes at.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::{Duration, Instant};
    ///
    /// let at = Instant::now() + Duration::from_secs(5);
    /// assert_eq!(ioloop::time::sleep_until(at).deadline(), at);
    /// ```
    pub fn deadline(&self) -> Instant {
        self.deadline
    }

    /// Returns `true` if the deadline has passed.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::{Duration, Instant};
    ///
    /// assert!(ioloop::time::sleep_until(Instant::now()).is_elapsed());
    /// assert!(!ioloop::time::sleep(Duration::from_secs(60)).is_elapsed());
    /// ```
    pub fn is_elapsed(&self) -> bool {
        Instant::now() >= self.deadline
    }

    /// Moves the deadline, whether or not the old one has passed. The next
    /// poll arms a timer for the new one.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::{Duration, Instant};
    ///
    /// ioloop::block_on(async {
    ///     let mut sleep = ioloop::time::sleep(Duration::from_secs(3600));
    ///     sleep.reset(Instant::now());
    ///     (&mut sleep).await;
    ///     assert!(sleep.is_elapsed());
    /// });
    /// ```
    pub fn reset(&mut self, deadline: Instant) {
        self.disarm();
        self.deadline = deadline;
    }

    /// Removes the armed timer, if any, from the runtime on this thread.
    fn disarm(&mut self) {
        let Some(timer) = self.timer.take() else {
            return;
        };
        context::with_core(|core| {
            // Off the loop thread (dropped elsewhere, or after the runtime
            // is gone) the timer stays armed until it fires, which frees it.
            if let Some(core) = core {
                let waker = core.timers.borrow_mut().remove(timer);
                drop(waker);
            }
        });
    }
}

impl Future for Sleep {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.get_mut();
        let pending = context::with_core(|core| {
            // First the loop's clock, read when it last fired timers: never
            // ahead of the real time, so it cannot end a sleep early, and it
            // answers without a `clock_gettime` for a sleep its timer woke.
            // Only if that says "not yet" is the real clock asked.
            let loop_now = core.map(|core| core.now());
            if loop_now.is_some_and(|now| now >= this.deadline) || Instant::now() >= this.deadline {
                return false;
            }
            let core = core.expect("ioloop: a Sleep was polled outside an ioloop runtime");
            let mut timers = core.timers.borrow_mut();
            let old = match this.timer.map(|t| timers.update(t, cx.waker())) {
                Some(Ok(old)) => old,
                // Never armed, or already fired (the timer fires once its
                // deadline is past the loop's clock). Arm a fresh one.
                None | Some(Err(())) => {
                    this.timer = Some(timers.insert(this.deadline, cx.waker().clone()));
                    None
                }
            };
            drop(timers);
            drop(old);
            true
        });
        if pending {
            return Poll::Pending;
        }
        // An elapsed sleep spends the task's budget like a readiness check:
        // a loop of `sleep(ZERO)` would otherwise never yield. Only this
        // path spends it: a poll that arms the timer is already a yield, and
        // must arm it whatever the budget says.
        ready!(crate::task::budget::poll_proceed(cx));
        this.disarm();
        Poll::Ready(())
    }
}

impl Drop for Sleep {
    fn drop(&mut self) {
        self.disarm();
    }
}
