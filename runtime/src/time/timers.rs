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

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::sync::atomic::{self, AtomicU64};
use std::task::Waker;
use std::time::Instant;

use slab::Slab;

/// Heaps smaller than this are never compacted: not worth the pass.
const COMPACT_MIN: usize = 1024;

/// Identifies one armed timer: its slot, and an id no other timer in any
/// runtime shares (so a key outliving its timer, or moved to another
/// runtime, matches nothing).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TimerKey {
    key: usize,
    id: u64,
}

fn next_id() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(1, atomic::Ordering::Relaxed)
}

struct Slot {
    id: u64,
    waker: Waker,
}

/// A heap entry, ordered so the `BinaryHeap` (a max-heap) yields the
/// earliest deadline first, and timers with equal deadlines in the order
/// they were armed.
struct Entry {
    deadline: Instant,
    id: u64,
    key: usize,
}

impl Ord for Entry {
    fn cmp(&self, other: &Self) -> Ordering {
        (other.deadline, other.id).cmp(&(self.deadline, self.id))
    }
}

impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id
    }
}

impl Eq for Entry {}

/// Every armed timer of one runtime. Owned by the loop thread.
#[derive(Default)]
pub(crate) struct Timers {
    heap: BinaryHeap<Entry>,
    slots: Slab<Slot>,
}

impl Timers {
    /// Arms a timer that wakes `waker` once `deadline` has passed.
    pub(crate) fn insert(&mut self, deadline: Instant, waker: Waker) -> TimerKey {
        let id = next_id();
        let key = self.slots.insert(Slot { id, waker });
        self.heap.push(Entry { deadline, id, key });
        TimerKey { key, id }
    }

    /// Points an armed timer at a new waker. Returns the old waker, for the
    /// caller to drop once it no longer borrows the timers, or `Err` if the
    /// timer already fired or was removed.
    pub(crate) fn update(&mut self, timer: TimerKey, waker: &Waker) -> Result<Option<Waker>, ()> {
        match self.slots.get_mut(timer.key) {
            Some(slot) if slot.id == timer.id => {
                if slot.waker.will_wake(waker) {
                    Ok(None)
                } else {
                    Ok(Some(std::mem::replace(&mut slot.waker, waker.clone())))
                }
            }
            _ => Err(()),
        }
    }

    /// Disarms a timer. Returns its waker (to be dropped by the caller after
    /// the borrow ends) if it was still armed.
    pub(crate) fn remove(&mut self, timer: TimerKey) -> Option<Waker> {
        match self.slots.get(timer.key) {
            Some(slot) if slot.id == timer.id => {}
            _ => return None,
        }
        let slot = self.slots.remove(timer.key);
        if self.heap.len() > COMPACT_MIN && self.heap.len() > 2 * self.slots.len() {
            let slots = &self.slots;
            self.heap
                .retain(|e| slots.get(e.key).is_some_and(|s| s.id == e.id));
        }
        Some(slot.waker)
    }

    /// Moves the wakers of every timer due at `now` into `out`.
    pub(crate) fn fire(&mut self, now: Instant, out: &mut Vec<Waker>) {
        while let Some(top) = self.heap.peek() {
            if top.deadline > now {
                break;
            }
            let entry = self.heap.pop().expect("peeked");
            if let Some(slot) = self.slots.get(entry.key)
                && slot.id == entry.id
            {
                out.push(self.slots.remove(entry.key).waker);
            }
        }
    }

    /// The earliest deadline of an armed timer, dropping dead entries that
    /// sit on top so they cannot cut a poll short.
    pub(crate) fn next_deadline(&mut self) -> Option<Instant> {
        while let Some(top) = self.heap.peek() {
            match self.slots.get(top.key) {
                Some(slot) if slot.id == top.id => return Some(top.deadline),
                _ => {
                    self.heap.pop();
                }
            }
        }
        None
    }

    /// Whether no timer is armed.
    pub(crate) fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Number of armed timers.
    pub(crate) fn len(&self) -> usize {
        self.slots.len()
    }

    /// Number of heap entries, live and dead.
    pub(crate) fn heap_len(&self) -> usize {
        self.heap.len()
    }

    /// Disarms everything, handing back the wakers.
    pub(crate) fn clear(&mut self) -> Vec<Waker> {
        self.heap.clear();
        self.slots.drain().map(|slot| slot.waker).collect()
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
        let late = timers.insert(t0 + Duration::from_millis(20), Waker::noop().clone());
        let early = timers.insert(t0 + Duration::from_millis(10), Waker::noop().clone());
        assert_eq!(timers.next_deadline(), Some(t0 + Duration::from_millis(10)));
        assert!(timers.remove(early).is_some());
        assert!(timers.remove(early).is_none());
        assert_eq!(timers.next_deadline(), Some(t0 + Duration::from_millis(20)));
        let mut out = Vec::new();
        timers.fire(t0 + Duration::from_millis(19), &mut out);
        assert!(out.is_empty());
        timers.fire(t0 + Duration::from_millis(20), &mut out);
        assert_eq!(out.len(), 1);
        assert!(timers.update(late, Waker::noop()).is_err());
        assert_eq!(timers.len(), 0);
    }

    #[test]
    fn dead_entries_never_outnumber_live_ones_for_long() {
        let mut timers = Timers::default();
        let far = Instant::now() + Duration::from_secs(3600);
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
}
