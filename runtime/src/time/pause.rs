//! Virtual time: `pause`, `resume`, `advance`. A paused clock is a number
//! the loop keeps (`LoopClock`, copied to `Shared::clock` for other
//! threads); it moves by [`advance`], or by auto-advance, which the tick
//! decides in `decide_park` (see the guide's chapter on the tick). The
//! pool wakes the loop when its last blocking job finishes (`Nudge`).

use std::sync::{Arc, Weak};
use std::task::{Wake, Waker};
use std::time::Duration;

use crate::event_loop::clock::ClockState;
use crate::event_loop::core::{self, Core};
use crate::event_loop::shared::Shared;

/// Stops the clock of the current runtime: from now on it moves only by
/// [`advance`], or by auto-advance when the runtime has nothing else to
/// do. For tests that wait on timers: an hour's [`sleep`](super::sleep)
/// completes at once, and timers fire in deadline order.
///
/// # What moves the clock
///
/// - [`advance(d)`](advance) moves it forward by `d` in one jump.
/// - **Auto-advance**: when the loop finds no task ready to run, it polls
///   the OS with a zero timeout. If that brings no I/O event and no work
///   from another thread (a wake, a spawn), and no
///   [`spawn_blocking`](crate::spawn_blocking) job of this runtime is
///   queued or running, the clock jumps to the earliest armed timer's
///   deadline, and that timer fires. An I/O event already waiting, or a
///   task it wakes, runs first; a blocking job in flight holds the clock
///   until it finishes (its result may schedule work). With no timer armed
///   and nothing else to do, the loop blocks in the OS as usual.
///
/// "No task ready" means the run queue is empty: no spawned task and no
/// `block_on` future has been woken and not yet polled. A task that
/// yields ([`yield_now`](crate::yield_now), or an exhausted budget) is
/// ready again at once, so a task that never waits holds the clock still:
/// a [`timeout`](super::timeout) around a future that is always busy never
/// elapses on a paused clock. Timers whose deadlines the clock reaches
/// fire together in one tick, earliest first (equal deadlines in the order
/// they were armed), and their tasks run in that order.
///
/// # What follows the paused clock
///
/// Everything in [`time`](super) that reads the time, through the current
/// runtime: [`Instant::now`](super::Instant::now), [`sleep`](super::sleep)
/// (its deadline is counted from the virtual clock),
/// [`sleep_until`](super::sleep_until), [`timeout`](super::timeout),
/// [`interval`](super::interval), [`Sleep::reset`](super::Sleep::reset),
/// [`Sleep::is_elapsed`](super::Sleep::is_elapsed). Read on the loop
/// thread or on a thread working for the runtime (a blocking job), they
/// read its virtual clock; elsewhere, the real one. `std::time::Instant`
/// and `std::thread::sleep` are untouched.
///
/// The clock starts from the real time of the call, so timers armed
/// before keep their deadlines: a sleep created before `pause` that had
/// 10 s left still has 10 s left, on the virtual clock, and completes when
/// it reaches them (at once, by auto-advance, if nothing else is going
/// on). A sleep or interval created outside any runtime read the real
/// clock when it was made.
///
/// Pausing is per runtime: other runtimes in the process, on other
/// threads, keep the real clock.
///
/// A blocking job that itself waits on this runtime's timers (through
/// [`Handle::block_on`](crate::Handle::block_on)) waits forever: its being
/// in flight stops auto-advance.
///
/// [`Builder::start_paused`](crate::Builder::start_paused) and
/// `#[ioloop::test(start_paused = true)]` start a runtime paused.
///
/// # Panics
///
/// If called off a runtime's loop thread (outside `block_on` and its
/// tasks; a blocking job is off it), or if the clock is already paused.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use ioloop::time::{Instant, advance, pause, sleep};
///
/// ioloop::block_on(async {
///     pause();
///     let start = Instant::now();
///     // Nothing else to do: the clock jumps to the deadline at once.
///     sleep(Duration::from_secs(3600)).await;
///     assert_eq!(start.elapsed(), Duration::from_secs(3600));
///     // Or move it by hand.
///     advance(Duration::from_secs(60)).await;
///     assert_eq!(start.elapsed(), Duration::from_secs(3660));
/// });
/// ```
#[track_caller]
pub fn pause() {
    let paused = core::with_core(|core| {
        let core = core?;
        let state = core.clock.state();
        if state.is_paused() {
            return Some(false);
        }
        pause_core(core, state.now());
        Some(true)
    });
    match paused {
        Some(true) => {}
        Some(false) => panic!("ioloop::time::pause: the clock is already paused"),
        None => panic!("{}", off_loop("pause")),
    }
}

/// Restarts the clock of the current runtime, paused by [`pause`]: it runs
/// at the real clock's pace again, from where it stood, so it never steps
/// back. If it was moved ahead, it stays ahead of the real clock by as
/// much; timers keep their deadlines on it.
///
/// # Panics
///
/// If called off a runtime's loop thread, or if the clock is not paused.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use ioloop::time::{Instant, advance, pause, resume};
///
/// ioloop::block_on(async {
///     pause();
///     let start = Instant::now();
///     advance(Duration::from_secs(10)).await;
///     resume();
///     assert!(start.elapsed() >= Duration::from_secs(10));
/// });
/// ```
#[track_caller]
pub fn resume() {
    let resumed = core::with_core(|core| {
        let core = core?;
        let ClockState::Paused { now } = core.clock.state() else {
            return Some(false);
        };
        let real = ClockState::Real.now();
        core.set_clock(ClockState::Resumed { real, at: now });
        core.shared.pool.set_on_quiet(None);
        Some(true)
    });
    match resumed {
        Some(true) => {}
        Some(false) => panic!("ioloop::time::resume: the clock is not paused"),
        None => panic!("{}", off_loop("resume")),
    }
}

/// Moves the paused clock of the current runtime forward by `duration`, in
/// one jump, then yields once so the loop fires the timers now due.
///
/// Every timer whose deadline the jump passed fires in the same tick,
/// earliest first; their tasks are queued but may not have run when this
/// returns (tokio's `advance` is the same). To let them run, yield or
/// await something. To stop at each deadline in turn, `sleep` instead and
/// let auto-advance move the clock.
///
/// A `duration` longer than thirty years is taken as thirty years.
///
/// # Panics
///
/// When awaited off a runtime's loop thread, or if the clock is not
/// paused (see [`pause`]).
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use ioloop::time::{Instant, advance, pause, sleep};
///
/// ioloop::block_on(async {
///     pause();
///     let start = Instant::now();
///     let mut nap = std::pin::pin!(sleep(Duration::from_secs(2)));
///     advance(Duration::from_secs(1)).await;
///     assert_eq!(Instant::now() - start, Duration::from_secs(1));
///     assert!(!nap.is_elapsed());
///     advance(Duration::from_secs(1)).await;
///     assert!(nap.is_elapsed());
///     nap.as_mut().await;
///     assert_eq!(Instant::now() - start, Duration::from_secs(2));
/// });
/// ```
pub async fn advance(duration: Duration) {
    let nanos = super::sleep::capped_nanos(duration);
    let moved = core::with_core(|core| {
        let core = core?;
        let ClockState::Paused { now } = core.clock.state() else {
            return Some(false);
        };
        core.set_clock(ClockState::Paused {
            now: now.saturating_add(nanos),
        });
        Some(true)
    });
    match moved {
        Some(true) => crate::task::yield_now().await,
        Some(false) => panic!(
            "ioloop::time::advance: the clock is not paused; call ioloop::time::pause() first, \
             or build the runtime with Builder::start_paused(true)"
        ),
        None => panic!("{}", off_loop("advance")),
    }
}

/// Pauses `core`'s clock at `now` (in ticks), and has its blocking pool
/// wake the loop when its last job finishes, so auto-advance can resume.
pub(crate) fn pause_core(core: &Core, now: u64) {
    core.set_clock(ClockState::Paused { now });
    let nudge = Waker::from(Arc::new(Nudge(Arc::downgrade(&core.shared))));
    core.shared.pool.set_on_quiet(Some(nudge));
}

/// The panic message of `what` called off a loop thread.
fn off_loop(what: &str) -> String {
    format!(
        "ioloop::time::{what} called off a runtime's loop thread: call it inside block_on or a \
         task (a blocking job is not on the loop thread), or build the runtime with \
         Builder::start_paused(true)"
    )
}

/// Wakes a paused loop out of the poller when its blocking pool goes
/// quiet, so it can look again whether to move its clock. Holds the
/// runtime weakly: the pool it sits in belongs to the runtime.
struct Nudge(Weak<Shared>);

impl Wake for Nudge {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        if let Some(shared) = self.0.upgrade() {
            shared.unpark();
        }
    }
}
