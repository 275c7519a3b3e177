//! The timer heap: deadlines in a binary heap, wakers in a slab.
//!
//! This is the lesson's heap of deadlines. The loop fires what has expired
//! and turns the nearest remaining deadline into the poll timeout.
//!
//! A cancelled timer (a dropped `Sleep`) frees its slot at once but leaves
//! its heap entry behind: removing from the middle of a binary heap is
//! O(n), skipping a dead entry when it reaches the top is O(log n). So that
//! a server arming a million per-request timeouts and cancelling nearly all
//! of them does not grow the heap without bound, the heap is rebuilt from
//! the live slots whenever dead entries outnumber live ones.
//!
//! After a burst, once three quarters of the slots are free, the loop (when
//! it goes idle) drops the free slots at the end of the table and rebuilds
//! the heap, so memory follows the number of armed timers down as well as
//! up (see `shrink_if_sparse`).

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::num::NonZeroU32;
use std::sync::OnceLock;
use std::sync::atomic::{self, AtomicU32};
use std::task::Waker;
use std::time::{Duration, Instant};

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

/// Ticks back as an `Instant`: exact for every instant `ticks` did not
/// saturate.
pub(crate) fn instant(ticks: u64) -> Instant {
    origin() + Duration::from_nanos(ticks)
}

/// Heaps smaller than this are never compacted: not worth the pass.
const COMPACT_MIN: usize = 1024;

/// Identifies one armed timer: its slot, and a stamp no other timer armed
/// recently, in any runtime, shares, so a key that outlived its timer (or
/// was carried to another runtime) matches nothing. Stamps come from one
/// global counter and wrap after four billion timers; 0 is never used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TimerKey {
    key: u32,
    // Non-zero, so an `Option<TimerKey>` (what a `Sleep` holds) is 8 bytes.
    stamp: NonZeroU32,
}

fn next_stamp() -> NonZeroU32 {
    static NEXT: AtomicU32 = AtomicU32::new(1);
    loop {
        if let Some(stamp) = NonZeroU32::new(NEXT.fetch_add(1, atomic::Ordering::Relaxed)) {
            return stamp;
        }
    }
}

/// A slot: the waker of an armed timer, or a link in the free list.
struct Slot {
    /// The armed timer's stamp; 0 while the slot is free.
    stamp: u32,
    /// The next free slot, while this one is free.
    next_free: u32,
    waker: Option<Waker>,
}

/// A heap entry, 16 bytes: the deadline in ticks, and the stamp and slot of
/// its timer. Compared field by field, and kept in the heap `Reverse`d, so
/// the `BinaryHeap` (a max-heap) yields the earliest deadline first, and
/// timers with equal deadlines in the order they were armed (stamps grow).
#[derive(PartialEq, Eq, PartialOrd, Ord)]
struct Entry {
    at: u64,
    stamp: u32,
    key: u32,
}

/// Every armed timer of one runtime. Owned by the loop thread.
///
/// Sizes are what a server with many timers pays per timer: 16 bytes in
/// the heap and 24 in the slot table (their sum was 64 with `Instant`s and
/// 64-bit ids, and a million armed timers showed it).
pub(crate) struct Timers {
    heap: BinaryHeap<Reverse<Entry>>,
    slots: Vec<Slot>,
    /// Head of the free-slot list; `u32::MAX` when empty.
    free: u32,
    armed: usize,
    /// Slots freed since the table was last checked for shrinking.
    freed: usize,
}

impl Default for Timers {
    fn default() -> Self {
        Timers {
            heap: BinaryHeap::new(),
            slots: Vec::new(),
            free: u32::MAX,
            armed: 0,
            freed: 0,
        }
    }
}

impl Timers {
    fn slot(&self, timer: TimerKey) -> Option<&Slot> {
        self.slots
            .get(timer.key as usize)
            .filter(|slot| slot.stamp == timer.stamp.get())
    }

    /// Arms a timer that wakes `waker` once `at` (in ticks) has passed.
    pub(crate) fn insert(&mut self, at: u64, waker: Waker) -> TimerKey {
        let stamp = next_stamp();
        let slot = Slot {
            stamp: stamp.get(),
            next_free: u32::MAX,
            waker: Some(waker),
        };
        let key = if self.free != u32::MAX {
            let key = self.free;
            self.free = self.slots[key as usize].next_free;
            self.slots[key as usize] = slot;
            key
        } else {
            let key = u32::try_from(self.slots.len()).expect("fewer than 4 billion timers");
            self.slots.push(slot);
            key
        };
        self.armed += 1;
        self.heap.push(Reverse(Entry {
            at,
            stamp: stamp.get(),
            key,
        }));
        TimerKey { key, stamp }
    }

    /// Points an armed timer at a new waker. Returns the old waker, for the
    /// caller to drop once it no longer borrows the timers, or `Err` if the
    /// timer already fired or was removed.
    pub(crate) fn update(&mut self, timer: TimerKey, waker: &Waker) -> Result<Option<Waker>, ()> {
        self.slot(timer).ok_or(())?;
        let slot = &mut self.slots[timer.key as usize];
        match &slot.waker {
            Some(old) if old.will_wake(waker) => Ok(None),
            _ => Ok(slot.waker.replace(waker.clone())),
        }
    }

    /// Moves an armed timer to `at` (in ticks), keeping its slot and waker.
    /// Returns its new key, or `None` if it already fired or was removed.
    ///
    /// The old heap entry is left behind, dead (its stamp no longer
    /// matches), as a removal's is.
    pub(crate) fn reset(&mut self, timer: TimerKey, at: u64) -> Option<TimerKey> {
        self.slot(timer)?;
        let stamp = next_stamp();
        self.slots[timer.key as usize].stamp = stamp.get();
        self.heap.push(Reverse(Entry {
            at,
            stamp: stamp.get(),
            key: timer.key,
        }));
        self.sweep_if_sparse();
        Some(TimerKey {
            key: timer.key,
            stamp,
        })
    }

    /// Frees the slot of an armed timer and returns its waker.
    fn release(&mut self, key: u32) -> Option<Waker> {
        let slot = &mut self.slots[key as usize];
        slot.stamp = 0;
        slot.next_free = self.free;
        self.free = key;
        self.armed -= 1;
        self.freed += 1;
        slot.waker.take()
    }

    /// Disarms a timer. Returns its waker (to be dropped by the caller after
    /// the borrow ends) if it was still armed.
    pub(crate) fn remove(&mut self, timer: TimerKey) -> Option<Waker> {
        self.slot(timer)?;
        let waker = self.release(timer.key);
        self.sweep_if_sparse();
        waker
    }

    /// Rebuilds the heap from the live timers once dead entries outnumber
    /// them.
    fn sweep_if_sparse(&mut self) {
        if self.heap.len() > COMPACT_MIN && self.heap.len() > 2 * self.armed {
            let slots = &self.slots;
            self.heap
                .retain(|Reverse(e)| slots[e.key as usize].stamp == e.stamp);
        }
    }

    /// Moves the wakers of every timer due at `now` (in ticks) into `out`.
    pub(crate) fn fire(&mut self, now: u64, out: &mut Vec<Waker>) {
        while let Some(Reverse(top)) = self.heap.peek() {
            if top.at > now {
                break;
            }
            let Reverse(entry) = self.heap.pop().expect("peeked");
            if self.slots[entry.key as usize].stamp == entry.stamp {
                out.extend(self.release(entry.key));
            }
        }
    }

    /// Gives back the memory a burst of timers left behind, once three
    /// quarters of the slots are free. A slot's index is in its timer's
    /// key, so live slots cannot move: the free slots at the end are
    /// dropped, the free list is rebuilt lowest first (new timers then fill
    /// the front, and the next pass can drop more), and the heap is rebuilt
    /// from the live timers. Done at most once per quarter-table of slots
    /// freed, which keeps the O(n) pass amortized O(1).
    pub(crate) fn shrink_if_sparse(&mut self) {
        let len = self.slots.len();
        if len <= COMPACT_MIN || self.armed > len / 4 || self.freed < len / 4 {
            return;
        }
        self.freed = 0;
        while self.slots.last().is_some_and(|slot| slot.stamp == 0) {
            self.slots.pop();
        }
        self.slots.shrink_to_fit();
        self.free = u32::MAX;
        for (key, slot) in self.slots.iter_mut().enumerate().rev() {
            if slot.stamp == 0 {
                slot.next_free = self.free;
                self.free = key as u32;
            }
        }
        // Dead entries may name dropped slots: keep only the live ones.
        let slots = &self.slots;
        self.heap.retain(|Reverse(e)| {
            slots
                .get(e.key as usize)
                .is_some_and(|s| s.stamp == e.stamp)
        });
        self.heap.shrink_to_fit();
    }

    /// Slots in the table, armed and free.
    #[cfg(test)]
    fn slots_len(&self) -> usize {
        self.slots.len()
    }

    /// The deadline the loop should wake at: the heap's earliest entry, or
    /// `None` with no timer armed.
    ///
    /// The entry may be dead (its timer cancelled): then the loop wakes
    /// early for nothing, once, and `fire` pops it. Popping dead entries
    /// here instead, every tick, cost a heap sift per cancelled timer, the
    /// largest item in an echo server's profile whose every read has a
    /// timeout; left in place, most are swept in bulk by the compaction in
    /// `remove` long before their deadline.
    pub(crate) fn next_deadline(&self) -> Option<u64> {
        if self.armed == 0 {
            return None;
        }
        self.heap.peek().map(|Reverse(top)| top.at)
    }

    /// Whether no timer is armed.
    pub(crate) fn is_empty(&self) -> bool {
        self.armed == 0
    }

    /// Number of armed timers.
    pub(crate) fn len(&self) -> usize {
        self.armed
    }

    /// Number of heap entries, live and dead.
    pub(crate) fn heap_len(&self) -> usize {
        self.heap.len()
    }

    /// Calls `f` with the deadline (in ticks) and waker data pointer of
    /// every armed timer, for a dump.
    pub(crate) fn for_each_waiter(&self, mut f: impl FnMut(u64, *const ())) {
        for Reverse(entry) in self.heap.iter() {
            let slot = &self.slots[entry.key as usize];
            if slot.stamp == entry.stamp
                && let Some(waker) = &slot.waker
            {
                f(entry.at, waker.data());
            }
        }
    }

    /// Disarms everything, handing back the wakers.
    pub(crate) fn clear(&mut self) -> Vec<Waker> {
        self.heap.clear();
        self.free = u32::MAX;
        self.armed = 0;
        self.slots.drain(..).filter_map(|slot| slot.waker).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn fires_in_deadline_order_and_skips_removed() {
        let mut timers = Timers::default();
        let t0 = Instant::now();
        let late = timers.insert(ticks(t0 + Duration::from_millis(20)), Waker::noop().clone());
        let early = timers.insert(ticks(t0 + Duration::from_millis(10)), Waker::noop().clone());
        assert_eq!(
            timers.next_deadline(),
            Some(ticks(t0 + Duration::from_millis(10)))
        );
        assert!(timers.remove(early).is_some());
        assert!(timers.remove(early).is_none());
        // The cancelled entry may still set the wake-up; firing drops it.
        let mut out = Vec::new();
        timers.fire(ticks(t0 + Duration::from_millis(10)), &mut out);
        assert!(out.is_empty());
        assert_eq!(
            timers.next_deadline(),
            Some(ticks(t0 + Duration::from_millis(20)))
        );
        timers.fire(ticks(t0 + Duration::from_millis(19)), &mut out);
        assert!(out.is_empty());
        timers.fire(ticks(t0 + Duration::from_millis(20)), &mut out);
        assert_eq!(out.len(), 1);
        assert!(timers.update(late, Waker::noop()).is_err());
        assert_eq!(timers.len(), 0);
    }

    #[test]
    fn dead_entries_never_outnumber_live_ones_for_long() {
        let mut timers = Timers::default();
        let far = ticks(Instant::now() + Duration::from_secs(3600));
        let keep: Vec<_> = (0..100)
            .map(|_| timers.insert(far, Waker::noop().clone()))
            .collect();
        for _ in 0..1_000_000 {
            let t = timers.insert(far, Waker::noop().clone());
            timers.remove(t);
            assert!(timers.heap_len() <= (2 * timers.len()).max(COMPACT_MIN) + 1);
        }
        assert_eq!(timers.len(), keep.len());
    }

    #[test]
    fn the_tables_shrink_when_a_burst_is_over() {
        let mut timers = Timers::default();
        let t0 = Instant::now();
        let keep = timers.insert(ticks(t0 + Duration::from_secs(3600)), Waker::noop().clone());
        let burst: Vec<_> = (0..100_000)
            .map(|i| timers.insert(ticks(t0 + Duration::from_millis(i)), Waker::noop().clone()))
            .collect();
        assert!(timers.slots_len() > 100_000);
        // Half are cancelled, the rest fire.
        for timer in burst.iter().step_by(2) {
            timers.remove(*timer);
        }
        let mut out = Vec::new();
        timers.fire(ticks(t0 + Duration::from_secs(200)), &mut out);
        assert_eq!(out.len(), 50_000);
        assert_eq!(timers.len(), 1);
        timers.shrink_if_sparse();
        assert!(timers.slots_len() <= 1, "{} slots", timers.slots_len());
        assert!(timers.heap_len() <= 1);
        // The survivor still fires, and the table still works.
        assert!(timers.update(keep, Waker::noop()).is_ok());
        let again = timers.insert(ticks(t0), Waker::noop().clone());
        timers.fire(ticks(t0 + Duration::from_secs(3600)), &mut out);
        assert_eq!(out.len(), 50_002);
        assert!(timers.remove(again).is_none());
    }
}
