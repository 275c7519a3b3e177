//! A runtime's clock: the real one, until the runtime is paused; from then
//! on, a virtual one that moves only when told to (see `pause.rs`).
//!
//! The loop keeps its own copy of the state (`Core::clock`, read without a
//! lock); this one, in `Shared`, is what other threads read: a blocking
//! job, or a `block_on` waiting its turn, asking the time.

use std::sync::atomic::{AtomicUsize, Ordering};

use parking_lot::Mutex;

use super::timers;

/// Runtimes in this process whose clock is not the real one: paused, or
/// resumed after a pause. While it is zero, reading the time is reading the
/// real clock, with no look for the current runtime: one relaxed load is
/// all a program that never pauses pays.
static VIRTUAL: AtomicUsize = AtomicUsize::new(0);

/// Whether some runtime in the process has a virtual clock; if not, every
/// clock is the real one.
pub(crate) fn any_virtual() -> bool {
    VIRTUAL.load(Ordering::Relaxed) != 0
}

/// What a runtime's clock reads, in timer ticks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ClockState {
    /// The real clock.
    Real,
    /// Stopped at `now`: it moves only by `advance` or auto-advance.
    Paused { now: u64 },
    /// Running again after a pause, from where it stopped: it read `at`
    /// when the real clock read `real`. Never steps back.
    Resumed { real: u64, at: u64 },
}

impl ClockState {
    /// The time, in ticks.
    #[inline]
    pub(crate) fn now(self) -> u64 {
        match self {
            ClockState::Real => timers::now(),
            ClockState::Paused { now } => now,
            ClockState::Resumed { real, at } => {
                at.saturating_add(timers::now().saturating_sub(real))
            }
        }
    }

    pub(crate) fn is_paused(self) -> bool {
        matches!(self, ClockState::Paused { .. })
    }
}

/// The clock's state where other threads can read it.
pub(crate) struct Clock {
    state: Mutex<ClockState>,
}

impl Default for Clock {
    fn default() -> Self {
        Clock {
            state: Mutex::new(ClockState::Real),
        }
    }
}

impl Clock {
    pub(crate) fn get(&self) -> ClockState {
        *self.state.lock()
    }

    /// Sets the state; only the loop thread does, with its own copy.
    pub(crate) fn set(&self, state: ClockState) {
        let mut current = self.state.lock();
        if *current == ClockState::Real && state != ClockState::Real {
            VIRTUAL.fetch_add(1, Ordering::Relaxed);
        }
        *current = state;
    }
}

impl Drop for Clock {
    fn drop(&mut self) {
        if *self.state.get_mut() != ClockState::Real {
            VIRTUAL.fetch_sub(1, Ordering::Relaxed);
        }
    }
}
