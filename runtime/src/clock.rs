//! A runtime's clock, below the core: it imports nothing of the crate but
//! the lock, and the core's timers and tick read it as the time layer
//! does.
//!
//! The real one, until the runtime is paused; from then on, a virtual one
//! that moves only when told to (see `pause.rs`). The loop keeps its own
//! copy of the state (`LoopClock`, read without a lock); `Clock`, in
//! `Shared`, is what other threads read: a blocking job, or a `block_on`
//! waiting its turn, asking the time. Time is counted in ticks,
//! nanoseconds from a process-wide origin.

use std::cell::Cell;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::sync::lock::Mutex;

/// The instant timer ticks count from: a century before the first use, so
/// any instant a program can name, past or future, is a tick.
fn origin() -> Instant {
    static ORIGIN: OnceLock<Instant> = OnceLock::new();
    *ORIGIN.get_or_init(|| {
        let now = Instant::now();
        now.checked_sub(Duration::from_secs(100 * 365 * 86_400))
            .unwrap_or(now)
    })
}

/// `instant` in ticks: nanoseconds since the process-wide origin, 8 bytes
/// where an `Instant` takes 16 (a `Sleep` holds one). Saturates at the
/// ends, 584 years apart.
pub(crate) fn ticks(instant: Instant) -> u64 {
    // u64 arithmetic, not `as_nanos`'s u128: this runs a few times per
    // echoed message (a timeout per line).
    let since = instant.saturating_duration_since(origin());
    since
        .as_secs()
        .saturating_mul(1_000_000_000)
        .saturating_add(u64::from(since.subsec_nanos()))
}

/// The current time in ticks: what `ticks(Instant::now())` returns, for
/// less. A server reads the clock for every timeout it arms, and most of
/// `ticks`' cost is `std`'s `Instant` subtraction (normalizing, checking),
/// not the clock: where the origin's raw `CLOCK_MONOTONIC` reading is known
/// (see `raw_origin`), the clock is read raw and the nanoseconds counted
/// from it directly. Exact: the same reading `Instant::now` would take,
/// counted from the same origin.
#[inline]
pub(crate) fn now() -> u64 {
    #[cfg(target_os = "linux")]
    if let Some(origin) = raw_origin()
        && let Some(now) = raw_now()
    {
        return raw_ticks(now, origin);
    }
    ticks(Instant::now())
}

/// A raw clock reading: seconds and nanoseconds.
#[cfg(target_os = "linux")]
type Raw = (i64, i64);

/// `CLOCK_MONOTONIC`, which `std`'s `Instant::now` reads on Linux.
#[cfg(target_os = "linux")]
#[inline]
fn raw_now() -> Option<Raw> {
    use nix::time::{ClockId, clock_gettime};
    let now = clock_gettime(ClockId::CLOCK_MONOTONIC).ok()?;
    Some((now.tv_sec(), now.tv_nsec()))
}

/// `now` (a raw reading) in ticks from `origin` (a raw reading in
/// nanoseconds). No saturation needed: the origin is a century before the
/// first use and the clock counts from boot, so every value here, the
/// difference included (a century plus the uptime), fits an `i64` of
/// nanoseconds (292 years).
#[cfg(target_os = "linux")]
#[inline]
fn raw_ticks(now: Raw, origin: i64) -> u64 {
    now.0
        .wrapping_mul(1_000_000_000)
        .wrapping_add(now.1)
        .wrapping_sub(origin) as u64
}

/// The raw clock reading of `origin()`, in nanoseconds (negative: before
/// boot), if it can be known exactly.
///
/// `std` offers no way to a `std::time::Instant`'s clock reading but its
/// `Debug` output, which on Linux is `Instant { tv_sec: S, tv_nsec: N }`.
/// That is read once; since it is no promise, the result is checked: a raw
/// reading taken between two `Instant::now()`s must fall between them,
/// counted from the origin this way and `ticks`' way. If the format
/// changes, or the clocks differ, `now` keeps to `ticks(Instant::now())`.
#[cfg(target_os = "linux")]
fn raw_origin() -> Option<i64> {
    static RAW_ORIGIN: OnceLock<Option<i64>> = OnceLock::new();
    *RAW_ORIGIN.get_or_init(|| {
        let text = format!("{:?}", origin());
        let field = |name: &str| -> Option<i64> {
            let start = text.find(name)? + name.len();
            let digits = &text[start..];
            let end = digits
                .find(|c: char| c != '-' && !c.is_ascii_digit())
                .unwrap_or(digits.len());
            digits[..end].parse().ok()
        };
        let (secs, nanos) = (field("tv_sec: ")?, field("tv_nsec: ")?);
        if !(0..1_000_000_000).contains(&nanos) {
            return None;
        }
        let origin = secs.checked_mul(1_000_000_000)?.checked_add(nanos)?;
        let before = ticks(Instant::now());
        let raw = raw_ticks(raw_now()?, origin);
        let after = ticks(Instant::now());
        (before <= raw && raw <= after).then_some(origin)
    })
}

/// Ticks back as an `Instant`: exact for every instant `ticks` did not
/// saturate.
pub(crate) fn instant(ticks: u64) -> Instant {
    origin() + Duration::from_nanos(ticks)
}

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
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum ClockState {
    /// The real clock.
    #[default]
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
            ClockState::Real => now(),
            ClockState::Paused { now } => now,
            ClockState::Resumed { real, at } => at.saturating_add(now().saturating_sub(real)),
        }
    }

    /// Whether the clock is paused: auto-advance may move it.
    pub(crate) fn is_paused(self) -> bool {
        matches!(self, ClockState::Paused { .. })
    }
}

/// The clock's state where other threads can read it.
#[derive(Default)]
pub(crate) struct Clock {
    state: Mutex<ClockState>,
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

/// The loop's clock, kept by the loop thread (`Core::clock`) and read
/// without a lock: the latest reading it took, and which clock it reads.
pub(crate) struct LoopClock {
    /// The latest reading of the runtime's clock that the loop took, to
    /// fire timers or for a sleep's poll, in ticks. Every reading is of a
    /// clock that never steps back, so this is never ahead of the clock.
    /// On a paused runtime, the virtual time itself.
    now: Cell<u64>,
    /// Which clock the runtime reads: the real one but for tests that pause
    /// it (`time/pause.rs`). `Shared::clock` holds a copy for other threads.
    /// Its tag is the one branch a read costs a runtime never paused.
    state: Cell<ClockState>,
}

impl LoopClock {
    pub(crate) fn new() -> Self {
        LoopClock {
            now: Cell::new(now()),
            state: Cell::new(ClockState::Real),
        }
    }

    /// The latest reading, without reading the clock.
    pub(crate) fn now(&self) -> u64 {
        self.now.get()
    }

    /// Reads the runtime's clock and keeps the reading: later sleep polls
    /// then find a deadline passed without reading again.
    #[inline]
    pub(crate) fn read_now(&self) -> u64 {
        let now = self.state.get().now();
        self.now.set(now);
        now
    }

    /// Which clock the runtime reads.
    pub(crate) fn state(&self) -> ClockState {
        self.state.get()
    }

    /// Switches to `state`, and takes its reading.
    pub(crate) fn set(&self, state: ClockState) {
        self.state.set(state);
        self.now.set(state.now());
    }
}

/// The time on the clock of the runtime this thread works for, in ticks:
/// the real clock, read here with no look for the runtime, while no
/// runtime in the process has a virtual clock; else `current`'s.
#[inline]
pub(crate) fn read(current: impl FnOnce() -> ClockState) -> u64 {
    if !any_virtual() {
        return now();
    }
    current().now()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cheap_clock_read_agrees_with_instant_now() {
        #[cfg(target_os = "linux")]
        assert!(raw_origin().is_some(), "std's Instant Debug format changed");
        for _ in 0..1000 {
            let before = ticks(Instant::now());
            let read = now();
            let after = ticks(Instant::now());
            assert!(before <= read && read <= after);
        }
        // And it converts back exactly.
        let read = now();
        assert_eq!(ticks(instant(read)), read);
    }
}
