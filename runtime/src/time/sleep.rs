//! `sleep`, `sleep_until` and their future, `Sleep`.

use std::future::Future;
use std::mem;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker, ready};
use std::time::Duration;

use super::instant::{Instant, current_clock};
use crate::base::{budget, set_waker};
use crate::clock::{self, instant, ticks};
use crate::event_loop::core::{self, Core};
use crate::event_loop::timers::TimerKey;
use crate::handle::Handle;
use crate::sync::lock::{self, Mutex};

/// Waits until `duration` has passed.
///
/// The clock starts when `sleep` is called, not when the future is first
/// polled. The future wakes no earlier than the deadline, and at most about
/// a millisecond after it when the loop is idle (the poller's timeout is in
/// whole milliseconds, rounded up).
///
/// The time is the current runtime's clock (see [`Instant::now`]): on a
/// [paused](super::pause) runtime, the deadline is on its virtual clock.
///
/// Creating the future needs no runtime: only polling it does, so a
/// `Sleep` (or a [`timeout`](super::timeout)) may be made before it is
/// handed to `block_on`. tokio's `sleep` panics outside a runtime at once.
///
/// # Panics
///
/// The returned future panics if polled outside an ioloop runtime (a
/// loop, a blocking job, or a `block_on` waiting its turn), or after its
/// runtime has shut down.
///
/// # Cancellation
///
/// Dropping the future disarms the timer; nothing is left behind.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use ioloop::time::Instant;
///
/// ioloop::block_on(async {
///     let start = Instant::now();
///     ioloop::time::sleep(Duration::from_millis(20)).await;
///     assert!(start.elapsed() >= Duration::from_millis(20));
/// });
/// ```
#[doc(alias = "call_later")]
pub fn sleep(duration: Duration) -> Sleep {
    // In ticks straight away: one conversion, not an `Instant` sum and a
    // conversion (a server makes a sleep per request).
    let nanos = capped_nanos(duration);
    Sleep {
        deadline: clock::read(current_clock).saturating_add(nanos),
        // A shorter sleep may well be due by its first poll: that poll
        // reads the clock to see (see `Sleep::poll_local`). A longer one
        // is never read for, first poll or not.
        timer: if (MADE_MIN..=CLOCK_SLACK).contains(&nanos) {
            Timer::Made(budget::job())
        } else {
            Timer::Unarmed
        },
    }
}

/// The shortest sleep whose first poll, in the task poll that made it,
/// trusts the clock reading taken when it was made (see
/// `Sleep::poll_local`): a millisecond, the poller's own resolution.
const MADE_MIN: u64 = 1_000_000;

/// A wait this long means "never": durations are capped here rather than
/// overflow the clock.
pub(super) const NEVER: Duration = Duration::from_secs(86_400 * 365 * 30);

/// `duration` in nanoseconds, capped at [`NEVER`]: u64 arithmetic, not
/// `as_nanos`'s u128 (a server does this for every sleep it makes or moves).
#[inline]
pub(super) fn capped_nanos(duration: Duration) -> u64 {
    const NEVER_NANOS: u64 = NEVER.as_secs() * 1_000_000_000;
    if duration >= NEVER {
        return NEVER_NANOS;
    }
    duration.as_secs() * 1_000_000_000 + u64::from(duration.subsec_nanos())
}

/// `instant + duration`, saturating at thirty years from `instant` instead
/// of panicking on overflow: a deadline that far out means "never".
pub(crate) fn saturating_add(instant: Instant, duration: Duration) -> Instant {
    instant.checked_add(duration.min(NEVER)).unwrap_or(instant)
}

/// How far past the loop's clock a deadline may be and still have the real
/// clock asked whether it has passed; see `Sleep::poll_local`.
const CLOCK_SLACK: u64 = 1_000_000_000;

/// Waits until `deadline`, on the current runtime's clock (see
/// [`Instant::now`]).
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
/// use std::time::Duration;
/// use ioloop::time::Instant;
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
        deadline: ticks(deadline.into_std()),
        timer: Timer::Unarmed,
    }
}

/// The future returned by [`sleep`] and [`sleep_until`].
///
/// It checks its own deadline whenever it is polled, against the loop's
/// clock (read each tick that has timers to fire, and never ahead of the
/// runtime's clock), so it never completes early, whatever woke it; and
/// against the runtime's clock itself when the deadline is within a second
/// of the loop's, so a deadline that has just passed completes at once. Otherwise it arms a
/// timer in the runtime's heap, which fires on the next tick if the
/// deadline had in fact passed.
///
/// One exception saves a clock read where it is nearly always wasted: the
/// first poll of a sleep of a millisecond or more, made by [`sleep`] (or
/// [`timeout`](super::timeout)) in the same task poll, trusts the reading
/// taken when the sleep was made. So a task that makes a sleep, then runs
/// longer than its duration before polling it, sees it complete on the
/// next tick rather than at once (tokio reports every elapsed sleep a tick
/// late); never early.
///
/// Polled off the loop thread (in a blocking job, or by a `block_on`
/// waiting its turn), it hands its timer to the loop through the injection
/// queue, at the cost of one allocation. So it does when a timer armed in
/// a loop's heap is moved earlier ([`reset`](Sleep::reset)) or dropped on
/// another thread: the loop makes the move, or the removal, on its next
/// tick, and nothing is left in its heap until the old deadline.
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
    /// In timer ticks: 8 bytes where an `Instant` takes 16, which keeps a
    /// `Sleep` at 24 bytes (a server holds one per connection).
    deadline: u64,
    timer: Timer,
}

/// Where a `Sleep`'s timer is armed.
#[derive(Debug)]
enum Timer {
    /// Nowhere: never polled before its deadline, fired, or disarmed.
    Unarmed,
    /// Nowhere yet: made by [`sleep`] during job number `.0` of its thread
    /// (see `budget::job`), from a clock reading taken then, and never
    /// polled since (see `Sleep::poll_local`).
    Made(u32),
    /// In the heap of the loop running on this thread.
    Local(TimerKey),
    /// In the heap of a loop running on another thread.
    Remote(Arc<RemoteTimer>),
}

impl Sleep {
    /// The instant this future completes at.
    pub fn deadline(&self) -> Instant {
        Instant::from_std(instant(self.deadline))
    }

    /// Returns `true` if the deadline has passed by the current runtime's
    /// clock (the real clock outside a runtime; see [`Instant::now`]),
    /// whether or not the future has been polled since.
    ///
    /// tokio's `is_elapsed` means "the timer has fired", which lags the
    /// clock until the loop gets round to it and stays `false` for a sleep
    /// never polled; this answers "is it time?" at once, without a runtime.
    /// On a [paused](super::pause) runtime it turns `true` as soon as the
    /// virtual clock reaches the deadline, by [`advance`](super::advance)
    /// or auto-advance.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use ioloop::time::Instant;
    ///
    /// assert!(ioloop::time::sleep_until(Instant::now()).is_elapsed());
    /// assert!(!ioloop::time::sleep(Duration::from_secs(60)).is_elapsed());
    /// ```
    pub fn is_elapsed(&self) -> bool {
        clock::read(current_clock) >= self.deadline
    }

    /// Moves the deadline, earlier or later, whether or not the old one has
    /// passed. A task already waiting on this sleep completes it at the new
    /// deadline, on the runtime's clock (virtual, if it is paused), from
    /// whatever thread the sleep was reset.
    ///
    /// Moved earlier on the loop thread, the armed timer moves at once.
    /// Moved earlier from another thread (a plain thread, a blocking job,
    /// another runtime's loop), the loop is handed the move, at the cost of
    /// an allocation, and makes it on its next tick, so the waiter wakes at
    /// the new deadline (tokio's `reset` does the same through its driver).
    /// Moved later, from any thread, it moves at the sleep's next poll: a
    /// timer only ever fires early then, and a sleep whose timer fires
    /// before its deadline is still pending and arms another. So a task
    /// that resets and polls in one go (an idle timer moved on as each
    /// message arrives, see [`reset_after`](Self::reset_after)) touches the
    /// timers once, and a task parked on a sleep that another task moved
    /// later is woken once at the old deadline, for nothing, and waits on.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use ioloop::time::Instant;
    ///
    /// ioloop::block_on(async {
    ///     let mut sleep = ioloop::time::sleep(Duration::from_secs(3600));
    ///     sleep.reset(Instant::now());
    ///     (&mut sleep).await;
    ///     assert!(sleep.is_elapsed());
    /// });
    /// ```
    pub fn reset(&mut self, deadline: Instant) {
        self.reset_ticks(ticks(deadline.into_std()));
    }

    /// Moves the deadline to `duration` from now: what
    /// `reset(Instant::now() + duration)` does, for one clock read and no
    /// `Instant` arithmetic, as [`sleep`] counts. For a timer moved on
    /// again and again, such as a connection's idle timeout.
    ///
    /// # Examples
    ///
    /// An idle timeout: the connection is dropped once nothing has
    /// arrived for a second, however long it lives.
    ///
    /// ```
    /// use std::future::poll_fn;
    /// use std::pin::{Pin, pin};
    /// use std::task::Poll;
    /// use std::time::Duration;
    ///
    /// # async fn next_message() -> Option<u32> { None }
    /// ioloop::block_on(async {
    ///     const IDLE: Duration = Duration::from_secs(1);
    ///     let mut idle = ioloop::time::sleep(IDLE);
    ///     loop {
    ///         let mut message = pin!(next_message());
    ///         // The message, or `None` once the connection has been idle too long.
    ///         let got = poll_fn(|cx| match message.as_mut().poll(cx) {
    ///             Poll::Ready(m) => Poll::Ready(Some(m)),
    ///             Poll::Pending => Pin::new(&mut idle).poll(cx).map(|()| None),
    ///         })
    ///         .await;
    ///         match got {
    ///             Some(Some(_message)) => idle.reset_after(IDLE),
    ///             Some(None) | None => break, // closed, or idle for a second
    ///         }
    ///     }
    /// });
    /// ```
    #[inline]
    pub fn reset_after(&mut self, duration: Duration) {
        self.reset_ticks(clock::read(current_clock).saturating_add(capped_nanos(duration)));
    }

    /// `reset` in ticks.
    #[inline]
    fn reset_ticks(&mut self, deadline: u64) {
        let later = deadline >= self.deadline;
        self.deadline = deadline;
        // Later, an armed timer is left for the poll to move (see `reset`):
        // no lookup of the loop here.
        if !(later && matches!(self.timer, Timer::Local(_))) {
            self.move_timer(deadline);
        }
    }

    /// `reset_ticks` for a timer that must move now, or a sleep with none.
    fn move_timer(&mut self, deadline: u64) {
        self.timer = match mem::replace(&mut self.timer, Timer::Unarmed) {
            Timer::Unarmed | Timer::Made(_) => Timer::Unarmed,
            Timer::Local(timer) => {
                // On the thread of the loop whose heap holds it: moved at
                // once. `None` on any other thread, that of another
                // runtime's loop included.
                let moved = core::with_core(|core| {
                    let mut timers = core?.timers.borrow_mut();
                    (timers.home() == timer.home()).then(|| timers.reset(timer, deadline))
                });
                match moved {
                    // Not moved: it fired already (the task was woken and
                    // will arm a new one).
                    Some(moved) => moved.map_or(Timer::Unarmed, Timer::Local),
                    None => {
                        // Only earlier comes here (see `reset_ticks`), and
                        // the waiter must not sleep through it.
                        from_afar(timer, Some(deadline));
                        Timer::Local(timer)
                    }
                }
            }
            Timer::Remote(remote) => {
                // Wake the waiter to arm a timer for the new deadline.
                remote.wake();
                Timer::Unarmed
            }
        };
    }

    /// Ready once the deadline has passed; else arms a timer that wakes
    /// `cx` then. Spends no budget.
    pub(super) fn poll_deadline(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        core::with_core(|core| core.map(|core| self.poll_local(core, cx)))
            .unwrap_or_else(|| self.poll_remote(cx))
    }

    /// `poll_deadline` on the loop thread.
    fn poll_local(&mut self, core: &Core, cx: &mut Context<'_>) -> Poll<()> {
        // First the loop's clock, read when it last fired timers: never
        // ahead of the runtime's clock, so it cannot end a sleep early, and
        // it answers without a `clock_gettime` for a sleep its timer woke.
        // Only if that says "not yet", and the deadline is within a second
        // of it, is the runtime's clock asked (on a paused runtime, the
        // loop's clock is the virtual one, always up to date). A deadline further out is taken
        // as not reached: the timer armed for it fires on the next tick if
        // the loop's clock lagged that much (one tick late, never early),
        // and a per-request timeout of seconds costs no clock read.
        //
        // Nor is it asked on the first poll of a sleep of a millisecond or
        // more that `sleep` made in this same task poll: the clock was read
        // when it was made, moments ago as a rule, and the deadline is at
        // least a millisecond after that. (A task that runs longer than the
        // sleep's duration before polling it has the sleep complete on the
        // next tick, not at once: late by a tick, never early; a timer
        // wheel such as tokio's reports every elapsed sleep that way.) A
        // sleep polled as soon as it is made, the usual `sleep(d).await` or
        // `timeout(d, ..)`, so costs one clock read, not two.
        //
        // A reading taken here becomes the loop's clock: a task polling many
        // sleeps whose deadlines passed while it ran (a million armed in one
        // poll, a join of many timeouts) reads the clock for the first and
        // finds the rest passed by that reading, one read instead of one each.
        let now = core.clock.now();
        if now >= self.deadline
            || (self.deadline - now <= CLOCK_SLACK
                && !matches!(self.timer, Timer::Made(job) if job == budget::job())
                && core.clock.read_now() >= self.deadline)
        {
            // Disarmed here, with the core at hand, so that `poll`'s
            // `disarm` after it has nothing left to do (it would look the
            // core up again, for a timer that has nearly always fired).
            // If the budget then says "not now", the deadline has still
            // passed, and the next poll is ready at once.
            if let Timer::Local(timer) = mem::replace(&mut self.timer, Timer::Unarmed) {
                remove_local(core, timer);
            }
            return Poll::Ready(());
        }
        let mut timers = core.timers.borrow_mut();
        if let Timer::Local(timer) = self.timer
            && let Ok((timer, old_waker)) = timers.update(timer, self.deadline, cx.waker())
        {
            self.timer = Timer::Local(timer);
            drop(timers);
            // A waker's drop may run code that reaches the timers.
            drop(old_waker);
            return Poll::Pending;
        }
        // Never armed here, or already fired (the timer fires once its
        // deadline is past the loop's clock). Arm a fresh one.
        let timer = timers.insert(self.deadline, cx.waker().clone());
        let home = timers.home();
        drop(timers);
        match mem::replace(&mut self.timer, Timer::Local(timer)) {
            Timer::Remote(remote) => remote.cancel(),
            // Armed in another runtime's heap (polled there before): it
            // must not stay there until it fires.
            Timer::Local(old) if old.home() != home => from_afar(old, None),
            _ => {}
        }
        Poll::Pending
    }

    /// `poll_deadline` off the loop thread, working for a runtime whose
    /// loop runs elsewhere.
    fn poll_remote(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        if self.is_elapsed() {
            return Poll::Ready(());
        }
        let fired = match &self.timer {
            Timer::Remote(remote) => remote.set_waker(cx.waker()),
            _ => {
                let handle = Handle::try_current()
                    .expect("ioloop: a Sleep was polled outside an ioloop runtime");
                let remote = Arc::new(RemoteTimer(Mutex::new(Some(cx.waker().clone()))));
                let armed = handle
                    .shared()
                    .arm_remote(self.deadline, Waker::from(remote.clone()));
                assert!(armed.is_ok(), "{SHUT_DOWN}");
                // A timer armed in a loop's heap (polled there before) is
                // handed to that loop to remove.
                if let Timer::Local(old) = mem::replace(&mut self.timer, Timer::Remote(remote)) {
                    from_afar(old, None);
                }
                false
            }
        };
        // The loop fires a timer only past its deadline, so a fired timer
        // means the deadline has passed, or the runtime shut down.
        if fired {
            assert!(self.is_elapsed(), "{SHUT_DOWN}");
            return Poll::Ready(());
        }
        Poll::Pending
    }

    /// Removes the armed timer, if any, from the runtime on this thread.
    ///
    /// Inline for its first check: most sleeps that complete, and many
    /// that are dropped, have no timer left (the ready poll disarmed it).
    #[inline]
    fn disarm(&mut self) {
        if matches!(self.timer, Timer::Unarmed | Timer::Made(_)) {
            return;
        }
        self.disarm_armed();
    }

    /// `disarm` for a sleep with a timer.
    fn disarm_armed(&mut self) {
        match mem::replace(&mut self.timer, Timer::Unarmed) {
            Timer::Unarmed | Timer::Made(_) => {}
            Timer::Local(timer) => core::with_core(|core| match core {
                Some(core) => remove_local(core, timer),
                // Dropped off the loop thread: the loop is handed the
                // removal (nothing, if the runtime is gone).
                None => from_afar(timer, None),
            }),
            Timer::Remote(remote) => remote.cancel(),
        }
    }
}

/// The panic of a sleep polled after its runtime shut down.
const SHUT_DOWN: &str = "ioloop: a Sleep was polled after its runtime shut down";

/// Moves `timer`, armed in the heap of a loop that is not running on this
/// thread, to `deadline` (earlier), or with `None` removes it: the loop is
/// handed a job that does it on its next tick, the one way into its heap
/// from here. A moved timer keeps its key, so the sleep holding it still
/// finds it, and its waker, which is then woken at the new deadline; a
/// removed one does not wait in the heap until it fires. Costs an
/// allocation; a runtime already gone has no timers left to touch.
#[cold]
fn from_afar(timer: TimerKey, deadline: Option<u64>) {
    let Some(shared) = core::home(timer.home()) else {
        return;
    };
    let job = Waker::from(Arc::new(AfarJob { timer, deadline }));
    // Armed as a timer due at once (tick 0, a century ago): the loop fires
    // it on its next tick, which runs the job. Refused only once the
    // runtime has shut down, which woke every timer's waiter.
    let _ = shared.arm_remote(0, job);
}

/// A move (to an earlier deadline) or removal of a timer, asked for off its
/// loop, run by the loop when it fires this as a timer due at once (see
/// `from_afar`).
struct AfarJob {
    timer: TimerKey,
    /// Where to move it; `None` to remove it.
    deadline: Option<u64>,
}

impl Wake for AfarJob {
    fn wake(self: Arc<Self>) {
        let removed = core::with_core(|core| {
            // The loop fires its timers' wakers with the heap unborrowed;
            // `try_` only so that no other path could ever panic here.
            let mut timers = core?.timers.try_borrow_mut().ok()?;
            match self.deadline {
                Some(deadline) => {
                    timers.move_earlier_keeping_key(self.timer, deadline);
                    None
                }
                None => timers.remove(self.timer),
            }
        });
        // Dropped with the heap unborrowed: a waker's drop may reach it.
        drop(removed);
    }
}

/// Removes `timer` from `core`'s heap, if it is still armed there; hands
/// the removal to its own loop if `core` is another runtime's. Its waker is
/// dropped after the borrow of the timers ends: a waker's drop may run
/// code that reaches them.
fn remove_local(core: &Core, timer: TimerKey) {
    let mut timers = core.timers.borrow_mut();
    let removed = (timers.home() == timer.home()).then(|| timers.remove(timer));
    drop(timers);
    if removed.is_none() {
        from_afar(timer, None);
    }
}

impl Future for Sleep {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.get_mut();
        ready!(this.poll_deadline(cx));
        // An elapsed sleep spends the task's budget like a readiness check:
        // a loop of `sleep(ZERO)` would otherwise never yield. Only this
        // path spends it: a poll that arms the timer is already a yield, and
        // must arm it whatever the budget says.
        ready!(budget::poll_budget(cx));
        this.disarm();
        Poll::Ready(())
    }
}

impl Drop for Sleep {
    fn drop(&mut self) {
        self.disarm();
    }
}

/// A timer armed from off the loop thread: the loop's heap holds a waker
/// made from it, which passes the wake on to the waiting task's waker.
/// `None` once fired (or cancelled, after which nobody asks).
#[derive(Debug)]
struct RemoteTimer(Mutex<Option<Waker>>);

impl RemoteTimer {
    /// Points the timer at `waker`; returns whether it has fired already.
    fn set_waker(&self, waker: &Waker) -> bool {
        let mut slot = self.0.lock();
        if slot.is_none() {
            return true;
        }
        let old = set_waker(&mut slot, waker);
        drop(slot);
        drop(old);
        false
    }

    /// The sleep is gone or re-armed: whoever fires this wakes nobody.
    fn cancel(&self) {
        let waker = self.0.lock().take();
        drop(waker);
    }
}

impl Wake for RemoteTimer {
    fn wake(self: Arc<Self>) {
        lock::assert_unlocked();
        let waker = self.0.lock().take();
        if let Some(waker) = waker {
            waker.wake();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A server holds a `Sleep` per connection (a per-read timeout): it
    /// stays three words, virtual time or not.
    #[test]
    fn a_sleep_is_24_bytes() {
        assert_eq!(std::mem::size_of::<Sleep>(), 24);
        assert_eq!(
            std::mem::size_of::<Instant>(),
            std::mem::size_of::<std::time::Instant>()
        );
    }
}
