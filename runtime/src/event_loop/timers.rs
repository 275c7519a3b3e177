//! A runtime's timers: deadlines in a binary heap, wakers in a slab, on
//! the clock of `clock.rs`.
//!
//! # The heap
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
//! # Reviving dead entries
//!
//! Most timers a server arms are timeouts that never fire: a read with an
//! idle timeout arms one, the line arrives, the timer is removed, and the
//! next read arms another a little later. The free list is LIFO, so that
//! next timer takes the very slot just freed, whose dead entry is still in
//! the heap. Each slot therefore remembers its latest heap entry (the
//! entry's stamp, kept apart from the timer's identity stamp, or none once
//! that entry has left the heap) and a deadline no earlier than that
//! entry's. A new timer whose deadline is strictly later than that takes
//! the dead entry over instead of pushing one: the entry becomes live
//! again, now early, and the slot holds the timer's real deadline. When
//! `fire` pops an early entry, it pushes it again at the real deadline,
//! under the stamp the timer was armed with, rather than waking anyone. A
//! connection that echoes a line every millisecond under a 30-second
//! timeout thus pushes to the heap once per 30 seconds, not once per line.
//!
//! What stays true:
//! - a timer never fires before its real deadline (an early entry is only
//!   ever pushed again, later);
//! - equal deadlines fire in the order the timers were armed: an entry
//!   pushed again carries its timer's arm stamp, and an entry is revived
//!   only for a strictly later deadline, so it is never compared at the
//!   real deadline under its old stamp;
//! - an early entry may set the poll timeout (or a paused clock's
//!   auto-advance) to before the real deadline: the loop then wakes once
//!   for nothing, as it does for a dead entry;
//! - compaction (`sweep_if_sparse`, `shrink_if_sparse`) drops every dead
//!   entry and forgets it in its slot, so a slot never names an entry that
//!   is no longer in the heap.
//!
//! After a burst, once three quarters of the slots are free, the loop (when
//! it goes idle) drops the free slots at the end of the table and rebuilds
//! the heap, so memory follows the number of armed timers down as well as
//! up (see `shrink_if_sparse`). Slots cannot move (a key names its slot),
//! so a timer still armed near the end of the table holds the table at
//! that length until that timer is gone and another quarter of the table
//! has been freed, when the next pass drops the free end. (A slot freed
//! near the end is reused first, the free list being LIFO: a server whose
//! few remaining connections re-arm timers keeps its high-water table.)
//!
//! # Homes
//!
//! Each runtime's heap has a number, its home, in every key it hands out,
//! and the runtime is entered (weakly) in a process-wide table under it
//! (`core.rs`, above this file). That is how a thread that is not
//! the loop's reaches the heap of a timer it holds the key of: a `Sleep`
//! moved earlier, or dropped, there hands the loop the move or the removal
//! (see `Sleep::reset`). The loop's own timer work only compares a key's
//! home with its heap's.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU32, Ordering};
use std::task::Waker;

use crate::base::set_waker;

/// Heaps smaller than this are never compacted: not worth the pass.
const COMPACT_MIN: usize = 1024;

/// Identifies one armed timer: its slot, a stamp no other timer armed
/// recently, in any runtime, shares, so a key that outlived its timer (or
/// was carried to another runtime) matches nothing, and the runtime whose
/// heap holds it (its home, `core.rs`), so another thread can reach it.
/// Stamps come from one global counter and wrap after four billion timers;
/// 0 is never used. 12 bytes, which keeps a `Sleep` at 24.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TimerKey {
    key: u32,
    stamp: NonZeroU32,
    home: u32,
}

impl TimerKey {
    /// The number of the runtime whose heap holds this timer.
    pub(crate) fn home(self) -> u32 {
        self.home
    }
}

fn next_stamp() -> NonZeroU32 {
    static NEXT: AtomicU32 = AtomicU32::new(1);
    loop {
        if let Some(stamp) = NonZeroU32::new(NEXT.fetch_add(1, Ordering::Relaxed)) {
            return stamp;
        }
    }
}

/// A slot: an armed timer, or a link in the free list; 32 bytes.
///
/// Free exactly when `waker` is `None` (an armed timer always has one).
#[derive(Default)]
struct Slot {
    /// While armed, the timer's stamp (its `TimerKey`'s); while free, the
    /// next free slot's key plus one (0 for none).
    tag: u32,
    /// The stamp of this slot's latest heap entry, which is still in the
    /// heap; 0 if none is. Armed, that entry is the timer's (live, perhaps
    /// early); free, it is dead but may be revived by the next timer.
    /// Every other entry naming this slot is dead for good.
    entry: u32,
    /// While armed, the timer's real deadline, never earlier than its
    /// entry's; while free, the last timer's, still no earlier than the
    /// dead entry's (a bound for reviving it).
    deadline: u64,
    waker: Option<Waker>,
}

impl Slot {
    /// Whether `entry` (naming this slot) is the slot's latest, and so
    /// still counts; else it is dead for good. Forgets the latest entry if
    /// it is dead, for the caller is taking it out of the heap.
    fn keep(&mut self, entry: &Entry) -> bool {
        if self.entry != entry.stamp {
            return false;
        }
        if self.waker.is_none() {
            self.entry = 0;
            return false;
        }
        true
    }
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
/// the heap and 32 in the slot table (their sum was 64 with `Instant`s and
/// 64-bit ids, and a million armed timers showed it; the slot's real
/// deadline, for reviving dead entries, added 8).
#[derive(Default)]
pub(crate) struct Timers {
    heap: BinaryHeap<Reverse<Entry>>,
    slots: Vec<Slot>,
    /// Head of the free-slot list, as a key plus one; 0 when empty.
    free: u32,
    armed: usize,
    /// Slots freed since the table was last checked for shrinking.
    freed: usize,
    /// The runtime these timers belong to, named in every key (its number
    /// in the table of homes, `core.rs`; 0 for no runtime).
    home: u32,
}

impl Timers {
    /// The timers of the runtime numbered `home` in the table of homes.
    pub(crate) fn with_home(home: u32) -> Self {
        Timers {
            home,
            ..Timers::default()
        }
    }

    /// The number in this heap's keys; see [`TimerKey::home`].
    #[inline]
    pub(crate) fn home(&self) -> u32 {
        self.home
    }

    /// The slot of `timer`, if it is armed in this heap. A key from another
    /// runtime's heap matches nothing, stamp or not.
    fn slot_mut(&mut self, timer: TimerKey) -> Option<&mut Slot> {
        if timer.home != self.home {
            return None;
        }
        self.slots
            .get_mut(timer.key as usize)
            .filter(|slot| slot.waker.is_some() && slot.tag == timer.stamp.get())
    }

    /// Arms a timer that wakes `waker` once `at` (in ticks) has passed.
    ///
    /// Takes the last freed slot; if its dead entry is still in the heap
    /// and due before `at`, revives it instead of pushing a new one (see
    /// the module doc).
    pub(crate) fn insert(&mut self, at: u64, waker: Waker) -> TimerKey {
        let key = if self.free != 0 {
            let key = self.free - 1;
            self.free = self.slots[key as usize].tag;
            key
        } else {
            // A new slot, with no entry in the heap to revive.
            self.slots.push(Slot::default());
            u32::try_from(self.slots.len() - 1).expect("fewer than 4 billion timers")
        };
        let id = next_stamp();
        let stamp = id.get();
        let slot = &mut self.slots[key as usize];
        if slot.entry == 0 || at <= slot.deadline {
            slot.entry = stamp;
            self.heap.push(Reverse(Entry { at, stamp, key }));
        }
        slot.tag = stamp;
        slot.deadline = at;
        slot.waker = Some(waker);
        self.armed += 1;
        TimerKey {
            key,
            stamp: id,
            home: self.home,
        }
    }

    /// Points an armed timer at `waker`, due at `at` (in ticks). Returns
    /// its key (a new one if `at` moved it: see [`reset`](Self::reset)) and
    /// the old waker, for the caller to drop once it no longer borrows the
    /// timers; or `Err` if the timer already fired or was removed.
    ///
    /// This is a sleep's poll: its deadline may have moved later since the
    /// timer was armed (`Sleep::reset` leaves a later deadline for the next
    /// poll to bring here), and its waker may have changed.
    pub(crate) fn update(
        &mut self,
        timer: TimerKey,
        at: u64,
        waker: &Waker,
    ) -> Result<(TimerKey, Option<Waker>), ()> {
        let slot = self.slot_mut(timer).ok_or(())?;
        let old = set_waker(&mut slot.waker, waker);
        if slot.deadline == at {
            return Ok((timer, old));
        }
        Ok((self.move_to(timer.key, at), old))
    }

    /// Moves an armed timer to `at` (in ticks), keeping its slot and waker.
    /// Returns its new key, or `None` if it already fired or was removed.
    ///
    /// Moved later, the timer keeps its heap entry, which is now early (as
    /// a revived one is). Moved earlier (or to the same deadline), it gets
    /// a new entry and the old one is left behind, dead, as a removal's
    /// is. Either way it counts as armed now, for the order of equal
    /// deadlines.
    pub(crate) fn reset(&mut self, timer: TimerKey, at: u64) -> Option<TimerKey> {
        self.slot_mut(timer)?;
        Some(self.move_to(timer.key, at))
    }

    /// `reset` for the armed timer in slot `key`. Always inline: `update`
    /// runs it once per echoed line, and out of line it cost 30 instructions.
    #[inline(always)]
    fn move_to(&mut self, key: u32, at: u64) -> TimerKey {
        let id = next_stamp();
        let stamp = id.get();
        let slot = &mut self.slots[key as usize];
        slot.tag = stamp;
        let earlier = at <= slot.deadline;
        slot.deadline = at;
        if earlier {
            slot.entry = stamp;
            self.heap.push(Reverse(Entry { at, stamp, key }));
            // Only a push can tip the heap into sweeping.
            self.sweep_if_sparse();
        }
        TimerKey {
            key,
            stamp: id,
            home: self.home,
        }
    }

    /// Moves an armed timer earlier to `at`, keeping its key: for a move
    /// made on another thread's behalf, which cannot hand the holder a new
    /// key (see `Sleep::reset`). It gets a new heap entry; the old one is
    /// left behind, dead. Does nothing if the timer fired or was removed,
    /// if `at` is its deadline (it fires then as it is), or later (the
    /// holder's next poll moves it then).
    pub(crate) fn move_earlier_keeping_key(&mut self, timer: TimerKey, at: u64) {
        let Some(slot) = self.slot_mut(timer) else {
            return;
        };
        if at >= slot.deadline {
            return;
        }
        // A fresh stamp for the entry only: the old entry must be dead, the
        // timer's identity (`tag`) stays what the key says.
        let (stamp, key) = (next_stamp().get(), timer.key);
        slot.entry = stamp;
        slot.deadline = at;
        self.heap.push(Reverse(Entry { at, stamp, key }));
        self.sweep_if_sparse();
    }

    /// Frees the slot of an armed timer and returns its waker. The slot's
    /// entry and deadline stay, for the next timer to revive.
    fn release(&mut self, key: u32) -> Option<Waker> {
        let slot = &mut self.slots[key as usize];
        slot.tag = self.free;
        self.free = key + 1;
        self.armed -= 1;
        self.freed += 1;
        slot.waker.take()
    }

    /// Disarms a timer. Returns its waker (to be dropped by the caller after
    /// the borrow ends) if it was still armed.
    pub(crate) fn remove(&mut self, timer: TimerKey) -> Option<Waker> {
        self.slot_mut(timer)?;
        let waker = self.release(timer.key);
        self.sweep_if_sparse();
        waker
    }

    /// Rebuilds the heap from the live timers once dead entries outnumber
    /// them.
    fn sweep_if_sparse(&mut self) {
        if self.heap.len() > COMPACT_MIN && self.heap.len() > 2 * self.armed {
            let slots = &mut self.slots;
            self.heap.retain(|Reverse(e)| slots[e.key as usize].keep(e));
        }
    }

    /// Moves the wakers of every timer due at `now` (in ticks) into `out`,
    /// earliest first. An early entry (revived, or of a timer moved later)
    /// that comes due is pushed again at its timer's real deadline.
    pub(crate) fn fire(&mut self, now: u64, out: &mut Vec<Waker>) {
        while let Some(Reverse(top)) = self.heap.peek() {
            if top.at > now {
                break;
            }
            let Reverse(mut entry) = self.heap.pop().expect("peeked");
            let slot = &mut self.slots[entry.key as usize];
            if !slot.keep(&entry) {
                continue;
            }
            if slot.deadline > entry.at {
                // Pushed again even if already due: it then fires in
                // deadline order, after what is due before it.
                slot.entry = slot.tag;
                (entry.at, entry.stamp) = (slot.deadline, slot.tag);
                self.heap.push(Reverse(entry));
                continue;
            }
            slot.entry = 0;
            out.extend(self.release(entry.key));
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
        while self.slots.last().is_some_and(|slot| slot.waker.is_none()) {
            self.slots.pop();
        }
        self.slots.shrink_to_fit();
        self.free = 0;
        for (key, slot) in self.slots.iter_mut().enumerate().rev() {
            if slot.waker.is_none() {
                slot.tag = self.free;
                self.free = key as u32 + 1;
            }
        }
        // Dead entries may name dropped slots: keep only the live ones.
        let slots = &mut self.slots;
        self.heap.retain(|Reverse(e)| {
            slots
                .get_mut(e.key as usize)
                .is_some_and(|slot| slot.keep(e))
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
            if slot.entry == entry.stamp
                && let Some(waker) = &slot.waker
            {
                f(slot.deadline, waker.data());
            }
        }
    }

    /// Disarms everything, handing back the wakers.
    pub(crate) fn clear(&mut self) -> Vec<Waker> {
        self.heap.clear();
        self.free = 0;
        self.armed = 0;
        self.slots.drain(..).filter_map(|slot| slot.waker).collect()
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::*;
    use crate::clock::ticks;

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
        assert!(timers.update(late, 0, Waker::noop()).is_err());
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
        assert!(
            timers
                .update(keep, ticks(t0 + Duration::from_secs(3600)), Waker::noop())
                .is_ok()
        );
        let again = timers.insert(ticks(t0), Waker::noop().clone());
        timers.fire(ticks(t0 + Duration::from_secs(3600)), &mut out);
        assert_eq!(out.len(), 50_002);
        assert!(timers.remove(again).is_none());
    }

    /// The slots shrink only while at most a quarter of them are armed:
    /// 2,048 timers, the first 511, 512 or 513 kept and the rest removed.
    #[test]
    fn the_slots_shrink_at_a_quarter_armed_and_not_above() {
        let far = ticks(Instant::now() + Duration::from_secs(3600));
        for (armed, shrinks) in [(511, true), (512, true), (513, false)] {
            let mut timers = Timers::default();
            let keys: Vec<_> = (0..2048)
                .map(|_| timers.insert(far, Waker::noop().clone()))
                .collect();
            for key in &keys[armed..] {
                timers.remove(*key);
            }
            timers.shrink_if_sparse();
            let slots = timers.slots_len();
            assert_eq!(slots < 2048, shrinks, "{armed} armed: {slots} slots");
        }
    }

    /// A waker told apart from others by `data()`.
    fn tagged() -> Waker {
        struct Tag;
        impl std::task::Wake for Tag {
            fn wake(self: std::sync::Arc<Self>) {}
        }
        Waker::from(std::sync::Arc::new(Tag))
    }

    /// The order `wakers` came out in, as indices into `armed`.
    fn order(armed: &[&Waker], wakers: &[Waker]) -> Vec<usize> {
        wakers
            .iter()
            .map(|w| {
                armed
                    .iter()
                    .position(|a| a.data() == w.data())
                    .expect("a waker that was armed")
            })
            .collect()
    }

    #[test]
    fn a_slot_reused_for_a_later_deadline_does_not_grow_the_heap() {
        let mut timers = Timers::default();
        let mut t = timers.insert(1_000, Waker::noop().clone());
        for at in 1_001..101_000 {
            timers.remove(t);
            t = timers.insert(at, Waker::noop().clone());
            assert_eq!(timers.heap_len(), 1);
        }
        // The one entry is early: it is pushed again once, at the real
        // deadline, when it comes due.
        let mut out = Vec::new();
        timers.fire(1_000, &mut out);
        assert!(out.is_empty());
        assert_eq!(timers.heap_len(), 1);
        assert_eq!(timers.next_deadline(), Some(100_999));
        timers.fire(100_998, &mut out);
        assert!(out.is_empty());
        timers.fire(100_999, &mut out);
        assert_eq!(out.len(), 1);
        assert!(timers.is_empty());
        assert!(timers.remove(t).is_none());
    }

    #[test]
    fn a_revived_timer_fires_at_its_own_deadline_never_the_dead_ones() {
        let mut timers = Timers::default();
        let dead = timers.insert(10, Waker::noop().clone());
        timers.remove(dead);
        let revived = timers.insert(20, tagged());
        assert_eq!(timers.heap_len(), 1);
        // The old key does not reach the new timer in the same slot.
        assert!(timers.remove(dead).is_none());
        assert!(timers.update(dead, 10, Waker::noop()).is_err());
        let mut out = Vec::new();
        for now in [10, 15, 19] {
            timers.fire(now, &mut out);
            assert!(out.is_empty(), "fired at {now}, due at 20");
        }
        assert_eq!(timers.len(), 1);
        // Firing far past the deadline fires it once.
        timers.fire(1_000, &mut out);
        assert_eq!(out.len(), 1);
        assert!(timers.update(revived, 20, Waker::noop()).is_err());
        // A slot whose timer fired has no entry left to revive: the next
        // timer pushes one, and fires.
        let next = timers.insert(2_000, Waker::noop().clone());
        assert_eq!(timers.heap_len(), 1);
        timers.fire(2_000, &mut out);
        assert_eq!(out.len(), 2);
        assert!(timers.remove(next).is_none());
    }

    #[test]
    fn an_earlier_or_equal_deadline_pushes_a_new_entry() {
        let mut timers = Timers::default();
        let first = timers.insert(20, Waker::noop().clone());
        timers.remove(first);
        // Earlier: the dead entry (20) would be late.
        let early = timers.insert(10, Waker::noop().clone());
        assert_eq!(timers.heap_len(), 2);
        let mut out = Vec::new();
        timers.fire(10, &mut out);
        assert_eq!(out.len(), 1);
        assert!(timers.remove(early).is_none());
        // The dead entry is still there; dropped when it comes due.
        timers.fire(20, &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(timers.heap_len(), 0);
    }

    #[test]
    fn equal_deadlines_fire_in_arm_order_revived_or_not() {
        let mut timers = Timers::default();
        let (a, b, c, d, e) = (tagged(), tagged(), tagged(), tagged(), tagged());
        // Slot 0's dead entry is due at 10, under a stamp older than b's.
        let old = timers.insert(10, Waker::noop().clone());
        timers.insert(20, b.clone());
        timers.remove(old);
        // c revives it (20 > 10); pushed again at 20, it must follow b.
        timers.insert(20, c.clone());
        assert_eq!(timers.heap_len(), 2);
        // An equal deadline is not revived: d's dead entry (20, older than
        // e's stamp) would fire it ahead of e, armed before it.
        let gone = timers.insert(20, Waker::noop().clone());
        timers.insert(20, e.clone());
        timers.remove(gone);
        timers.insert(20, d.clone());
        // A plain one, armed last.
        timers.insert(20, a.clone());
        let mut out = Vec::new();
        timers.fire(20, &mut out);
        assert_eq!(order(&[&a, &b, &c, &d, &e], &out), [1, 2, 4, 3, 0]);
    }

    #[test]
    fn a_revived_timer_fires_after_earlier_deadlines_due_in_the_same_tick() {
        let mut timers = Timers::default();
        let (late, mid) = (tagged(), tagged());
        let old = timers.insert(10, Waker::noop().clone());
        timers.remove(old);
        timers.insert(30, late.clone());
        timers.insert(20, mid.clone());
        let mut out = Vec::new();
        timers.fire(100, &mut out);
        assert_eq!(order(&[&late, &mid], &out), [1, 0]);
    }

    #[test]
    fn reset_later_keeps_the_entry_and_earlier_pushes_one() {
        let mut timers = Timers::default();
        let t = timers.insert(10, Waker::noop().clone());
        let t = timers.reset(t, 30).expect("armed");
        assert_eq!(timers.heap_len(), 1);
        let mut out = Vec::new();
        timers.fire(29, &mut out);
        assert!(out.is_empty());
        let t = timers.reset(t, 25).expect("armed");
        assert_eq!(timers.heap_len(), 2);
        timers.fire(25, &mut out);
        assert_eq!(out.len(), 1);
        assert!(timers.remove(t).is_none());
        timers.fire(30, &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(timers.heap_len(), 0);
    }

    #[test]
    fn an_update_moves_the_timer_to_the_deadline_it_is_given() {
        let mut timers = Timers::default();
        let waker = tagged();
        let t = timers.insert(10, waker.clone());
        // The same deadline and waker: nothing moves, nothing to drop.
        let (same, old) = timers.update(t, 10, &waker).expect("armed");
        assert_eq!(same, t);
        assert!(old.is_none());
        // Later: the entry stays (early), the key changes, the old key is
        // dead.
        let (later, old) = timers.update(t, 30, &waker).expect("armed");
        assert!(old.is_none());
        assert_ne!(later, t);
        assert!(timers.remove(t).is_none());
        assert_eq!(timers.heap_len(), 1);
        let mut out = Vec::new();
        timers.fire(29, &mut out);
        assert!(out.is_empty());
        // Earlier, with another waker: a new entry, and the old waker back.
        let other = tagged();
        let (earlier, old) = timers.update(later, 20, &other).expect("armed");
        assert_eq!(old.map(|w| w.data()), Some(waker.data()));
        assert_eq!(timers.heap_len(), 2);
        timers.fire(20, &mut out);
        assert_eq!(order(&[&other], &out), [0]);
        assert!(timers.update(earlier, 20, &other).is_err());
        timers.fire(30, &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(timers.heap_len(), 0);
    }

    #[test]
    fn compaction_keeps_revived_timers_and_forgets_swept_entries() {
        let mut timers = Timers::default();
        let n = 4 * COMPACT_MIN as u64;
        let keys: Vec<_> = (0..n)
            .map(|i| timers.insert(1_000 + i, Waker::noop().clone()))
            .collect();
        // Revive one slot in four with a later deadline (each removal then
        // insert takes the slot just freed), and free the rest, which
        // sweeps the heap once dead entries outnumber live ones.
        let mut revived = Vec::new();
        let mut swept = false;
        for (i, key) in keys.iter().enumerate() {
            let before = timers.heap_len();
            timers.remove(*key);
            swept |= timers.heap_len() < before;
            if i % 4 == 0 {
                revived.push(timers.insert(1_000_000 + i as u64, Waker::noop().clone()));
            }
        }
        assert!(swept);
        assert_eq!(timers.len(), revived.len());
        assert!(timers.heap_len() <= 2 * timers.len() + 1);
        // Refill every free slot: those whose dead entry was swept must
        // push a fresh one, or their timers would never fire.
        let fresh = n as usize - revived.len();
        for i in 0..fresh {
            timers.insert(2_000_000 + i as u64, Waker::noop().clone());
        }
        assert_eq!(timers.slots_len(), n as usize);
        let mut out = Vec::new();
        timers.fire(999_999, &mut out);
        assert!(out.is_empty());
        timers.fire(1_000_000 + n, &mut out);
        assert_eq!(out.len(), revived.len());
        timers.fire(2_000_000 + fresh as u64, &mut out);
        assert_eq!(out.len(), n as usize);
        assert!(timers.is_empty());
        // And the tables shrink with revived slots about.
        let again = timers.insert(3_000_000, Waker::noop().clone());
        timers.remove(again);
        let last = timers.insert(3_000_001, Waker::noop().clone());
        timers.shrink_if_sparse();
        assert_eq!(timers.heap_len(), 1);
        timers.fire(3_000_000, &mut out);
        assert_eq!(timers.len(), 1);
        timers.fire(3_000_001, &mut out);
        assert!(timers.is_empty());
        assert!(timers.remove(last).is_none());
    }

    #[test]
    fn a_move_earlier_keeping_the_key_fires_once_at_the_new_deadline() {
        let mut timers = Timers::default();
        let waker = tagged();
        let t = timers.insert(100, waker.clone());
        // Later: left for the holder's poll.
        timers.move_earlier_keeping_key(t, 200);
        assert_eq!(timers.next_deadline(), Some(100));
        timers.move_earlier_keeping_key(t, 50);
        assert_eq!(timers.heap_len(), 2);
        assert_eq!(timers.next_deadline(), Some(50));
        // The key still reaches it: the holder's poll finds it in place.
        let (same, old) = timers.update(t, 50, &waker).expect("armed");
        assert_eq!(same, t);
        assert!(old.is_none());
        let mut out = Vec::new();
        timers.fire(49, &mut out);
        assert!(out.is_empty());
        timers.fire(50, &mut out);
        assert_eq!(order(&[&waker], &out), [0]);
        // The old entry is dead: nothing fires at 100.
        timers.fire(100, &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(timers.heap_len(), 0);
        // A key that no longer holds anything moves nothing.
        timers.move_earlier_keeping_key(t, 10);
        assert_eq!(timers.heap_len(), 0);
    }

    /// A move to the deadline a timer has adds no entry, whether its entry
    /// is at that deadline or early (left there by a move later), and the
    /// timer fires at that deadline once.
    #[test]
    fn a_move_keeping_the_key_to_the_same_deadline_adds_nothing() {
        let mut timers = Timers::default();
        let waker = tagged();
        let t = timers.insert(100, waker.clone());
        timers.move_earlier_keeping_key(t, 100);
        assert_eq!(timers.heap_len(), 1);
        let t = timers.reset(t, 200).expect("armed");
        assert_eq!(timers.next_deadline(), Some(100));
        timers.move_earlier_keeping_key(t, 200);
        assert_eq!(timers.heap_len(), 1);
        timers.move_earlier_keeping_key(t, 199);
        assert_eq!(timers.heap_len(), 2);
        let mut out = Vec::new();
        timers.fire(198, &mut out);
        assert!(out.is_empty());
        timers.fire(199, &mut out);
        assert_eq!(out.len(), 1);
        timers.fire(200, &mut out);
        assert_eq!(out.len(), 1);
    }

    #[test]
    fn sizes_per_timer() {
        assert_eq!(std::mem::size_of::<Entry>(), 16);
        assert_eq!(std::mem::size_of::<Slot>(), 32);
    }
}
