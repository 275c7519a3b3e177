//! Virtual time: `pause`, `resume`, `advance`. Auto-advance is decided
//! in the tick's `decide_park`; the pool wakes the loop when its last
//! blocking job finishes (`Nudge`).

use std::sync::{Arc, Weak};
use std::task::{Wake, Waker};
use std::time::Duration;

use crate::clock::ClockState;
use crate::event_loop::core::Shared;
use crate::event_loop::core::{self, Core};

/// Stops the clock of the current runtime: from now on it moves only by
/// [`advance`], or by auto-advance, for tests that wait on timers.
///
/// Auto-advance: when no task is ready to run, no I/O event or work from
/// another thread is waiting, and no [`spawn_blocking`](crate::spawn_blocking)
/// job of this runtime is queued or running, the clock jumps to the earliest
/// armed timer's deadline. Timers the clock reaches fire in one tick,
/// earliest first (equal deadlines in the order they were armed). A task
/// that never waits, only [yields](crate::yield_now), holds the clock still.
///
/// Everything in [`time`](super) reads the paused clock on the loop thread
/// and in this runtime's blocking jobs; other threads, other runtimes and
/// `std::time` keep the real one. The clock starts from the real time of
/// the call, so timers armed before keep their deadlines.
/// [`Builder::start_paused`](crate::Builder::start_paused) and
/// `#[ioloop::test(start_paused = true)]` start a runtime paused. The
/// guide's "The paused clock" has the details, and the traps.
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
    on_loop("pause", "the clock is already paused", |core| {
        let state = core.clock.state();
        if state.is_paused() {
            return false;
        }
        pause_core(core, state.now());
        true
    });
}

/// Restarts the clock of the current runtime, paused by [`pause`]: it runs
/// at the real clock's pace again, from where it stood (never stepping
/// back, so it stays ahead by as much as it was moved); timers keep their
/// deadlines on it.
///
/// # Panics
///
/// If called off a runtime's loop thread, or if the clock is not paused.
#[track_caller]
pub fn resume() {
    on_loop("resume", "the clock is not paused", |core| {
        let ClockState::Paused { now } = core.clock.state() else {
            return false;
        };
        let real = ClockState::Real.now();
        core.set_clock(ClockState::Resumed { real, at: now });
        core.shared.pool.set_on_quiet(None);
        true
    });
}

/// Moves the paused clock of the current runtime forward by `duration`, in
/// one jump, then yields once so the loop fires the timers now due.
///
/// Every timer the jump passed fires in the same tick, earliest first;
/// their tasks are queued, and may not have run when this returns. A
/// `duration` over thirty years is taken as thirty years.
///
/// # Panics
///
/// When awaited off a runtime's loop thread, or if the clock is not
/// paused (see [`pause`]).
pub async fn advance(duration: Duration) {
    let nanos = super::sleep::capped_nanos(duration);
    let refusal = "the clock is not paused; call ioloop::time::pause() first, or build the \
                   runtime with Builder::start_paused(true)";
    on_loop("advance", refusal, |core| {
        let ClockState::Paused { now } = core.clock.state() else {
            return false;
        };
        let now = now.saturating_add(nanos);
        core.set_clock(ClockState::Paused { now });
        true
    });
    crate::task::yield_now().await;
}

/// Pauses `core`'s clock at `now` (in ticks), and has its blocking pool
/// wake the loop when its last job finishes, so auto-advance can resume.
pub(crate) fn pause_core(core: &Core, now: u64) {
    core.set_clock(ClockState::Paused { now });
    let nudge = Waker::from(Arc::new(Nudge(Arc::downgrade(&core.shared))));
    core.shared.pool.set_on_quiet(Some(nudge));
}

/// Runs `f` on this thread's loop; panics if there is none, or if `f` refuses.
#[track_caller]
fn on_loop(what: &str, refusal: &str, f: impl FnOnce(&Core) -> bool) {
    let done = match core::with_core(|core| core.map(f)) {
        Some(done) => done,
        None => panic!(
            "ioloop::time::{what} called off a runtime's loop thread: call it inside block_on or \
             a task (a blocking job is not on the loop thread), or build the runtime with \
             Builder::start_paused(true)"
        ),
    };
    assert!(done, "ioloop::time::{what}: {refusal}");
}

/// Wakes a paused loop out of the poller when its blocking pool goes
/// quiet, so it can look again whether to move its clock. Holds the
/// runtime weakly: the pool it sits in belongs to the runtime.
struct Nudge(Weak<Shared>);

impl Wake for Nudge {
    fn wake(self: Arc<Self>) {
        crate::sync::lock::assert_unlocked();
        if let Some(shared) = self.0.upgrade() {
            shared.unpark();
        }
    }
}
