//! The tasks waiting for one direction of a source to become ready.

use std::collections::VecDeque;
use std::task::Waker;

use slab::Slab;

/// Poll-function callers kept besides the inline one (see [`Waiters`]).
const SHARED_LIMIT: usize = 64;

/// A slab of waiting futures with room for more than this many is freed
/// once it is empty, so its memory follows the live waiters.
const KEEP_CAPACITY: usize = 64;

/// The tasks waiting for one direction of a source to become ready.
///
/// Two kinds of waiter:
///
/// - A *waiting future* (`readable()`, `recv_from`, `accept`: any future
///   made by a [`Waiter`](crate::io::Waiter)) holds a key, a slot of its
///   own in a slab: taken at its first `Pending`, updated in place on later
///   polls, given back by its `Drop`. Registering is O(1) however many
///   wait, and a future that stops waiting (dropped, cancelled) takes its
///   waker, and with it its task, out at once: the set holds the live
///   waiters, no others. The slab's memory is freed once it is empty.
/// - A *poll-function caller* (`poll_read_ready`, `poll_recv_from`,
///   `AsyncRead::poll_read`: no future object to hold a key) has no way to
///   say it stopped waiting. The first is kept inline (no allocation: the
///   hot path, one reader and one writer per connection), and up to
///   [`SHARED_LIMIT`] more, oldest first, distinct by `will_wake` (a scan
///   bounded by the limit). One more wakes the oldest, who registers again
///   if it still waits: so poll-function callers that moved on hold at most
///   that many tasks, and many more than that, all live, take turns being
///   woken, which is correct but busy. A crowd should wait through futures.
///
/// The next readiness event in the direction wakes them all; one that then
/// finds nothing to do (another took the datagram, the connection)
/// registers again and waits for the next event. A waiting future keeps
/// its slot, emptied, in between.
#[derive(Default)]
pub(crate) struct Waiters {
    first: Option<Waker>,
    more: Option<Box<More>>,
}

#[derive(Default)]
struct More {
    /// Poll-function callers besides `first`, oldest first.
    shared: VecDeque<Waker>,
    /// Waiting futures, each at its key; `None` once woken, until it
    /// registers again or drops.
    keyed: Slab<Option<Waker>>,
}

impl Waiters {
    /// Adds the waker of a poll-function caller, unless it wakes a task
    /// already waiting. Returns a waker to wake once the caller's lock is
    /// released: none, unless the oldest caller had to make room.
    #[inline]
    pub(crate) fn register(&mut self, waker: &Waker) -> Option<Waker> {
        match &self.first {
            None => {
                self.first = Some(waker.clone());
                None
            }
            Some(first) if first.will_wake(waker) => None,
            Some(_) => self.register_shared(waker),
        }
    }

    /// `register` for a second poll-function caller and beyond.
    #[cold]
    fn register_shared(&mut self, waker: &Waker) -> Option<Waker> {
        let shared = &mut self.more.get_or_insert_with(Box::default).shared;
        if shared.iter().any(|w| w.will_wake(waker)) {
            return None;
        }
        shared.push_back(waker.clone());
        if shared.len() > SHARED_LIMIT {
            shared.pop_front()
        } else {
            None
        }
    }

    /// Parks the waker of a waiting future at `key`, taking a slot for it
    /// if it has none yet. O(1). Returns a waker it replaced (the future
    /// moved to another task), to be dropped once the lock is released.
    pub(crate) fn register_keyed(
        &mut self,
        key: &mut Option<usize>,
        waker: &Waker,
    ) -> Option<Waker> {
        let keyed = &mut self.more.get_or_insert_with(Box::default).keyed;
        if let Some(slot) = key.and_then(|key| keyed.get_mut(key)) {
            return match slot {
                Some(parked) if parked.will_wake(waker) => None,
                _ => slot.replace(waker.clone()),
            };
        }
        *key = Some(keyed.insert(Some(waker.clone())));
        None
    }

    /// Gives back the slot at `key`: its future stopped waiting. Returns
    /// the waker still parked there, to be dropped once the lock is
    /// released.
    pub(crate) fn remove_keyed(&mut self, key: usize) -> Option<Waker> {
        let more = self.more.as_mut()?;
        let parked = more.keyed.try_remove(key).flatten();
        if more.keyed.is_empty() && more.keyed.capacity() > KEEP_CAPACITY {
            more.keyed = Slab::new();
        }
        parked
    }

    /// Moves every waiter into `out`, to be woken. The waiting futures keep
    /// their slots.
    #[inline]
    pub(crate) fn take_into(&mut self, out: &mut Vec<Waker>) {
        if let Some(waker) = self.first.take() {
            out.push(waker);
        }
        if let Some(more) = &mut self.more {
            more.take_into(out);
        }
    }

    /// The data pointer of every waiter's waker, for a dump.
    pub(crate) fn for_each_data(&self, mut f: impl FnMut(*const ())) {
        self.first.iter().for_each(|waker| f(waker.data()));
        if let Some(more) = &self.more {
            more.shared.iter().for_each(|waker| f(waker.data()));
            more.keyed
                .iter()
                .filter_map(|(_, waker)| waker.as_ref())
                .for_each(|waker| f(waker.data()));
        }
    }
}

impl More {
    /// `Waiters::take_into` beyond the inline waiter.
    #[cold]
    fn take_into(&mut self, out: &mut Vec<Waker>) {
        // `drain` leaves the deque empty with its capacity kept.
        out.extend(self.shared.drain(..));
        out.extend(self.keyed.iter_mut().filter_map(|(_, waker)| waker.take()));
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::task::Wake;

    struct Count(AtomicUsize);

    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn waker() -> (Arc<Count>, Waker) {
        let count = Arc::new(Count(AtomicUsize::new(0)));
        (count.clone(), Waker::from(count))
    }

    #[test]
    fn keyed_waiters_hold_their_slot_and_give_it_back() {
        let mut waiters = Waiters::default();
        let (_, a) = waker();
        let (_, b) = waker();
        let (mut ka, mut kb) = (None, None);
        assert!(waiters.register_keyed(&mut ka, &a).is_none());
        assert!(waiters.register_keyed(&mut kb, &b).is_none());
        // Again with the same waker: in place, nothing added.
        assert!(waiters.register_keyed(&mut ka, &a).is_none());
        let mut out = Vec::new();
        waiters.for_each_data(|_| out.push(()));
        assert_eq!(out.len(), 2);
        // Woken: the slots stay, emptied, and take the waker back in place.
        let mut woken = Vec::new();
        waiters.take_into(&mut woken);
        assert_eq!(woken.len(), 2);
        assert!(waiters.register_keyed(&mut ka, &a).is_none());
        // Dropped: the waker goes with the slot.
        assert!(waiters.remove_keyed(ka.unwrap()).is_some());
        assert!(waiters.remove_keyed(kb.unwrap()).is_none());
        let mut left = 0;
        waiters.for_each_data(|_| left += 1);
        assert_eq!(left, 0);
    }

    #[test]
    fn an_empty_slab_of_many_waiters_is_freed() {
        let mut waiters = Waiters::default();
        let (_, a) = waker();
        let keys: Vec<_> = (0..1_000)
            .map(|_| {
                let mut key = None;
                waiters.register_keyed(&mut key, &a);
                key.unwrap()
            })
            .collect();
        for key in keys {
            waiters.remove_keyed(key);
        }
        assert_eq!(waiters.more.as_ref().unwrap().keyed.capacity(), 0);
    }

    #[test]
    fn poll_function_callers_beyond_the_limit_wake_the_oldest() {
        let mut waiters = Waiters::default();
        let callers: Vec<_> = (0..SHARED_LIMIT + 2).map(|_| waker()).collect();
        for (_, waker) in &callers[..SHARED_LIMIT + 1] {
            assert!(waiters.register(waker).is_none());
            // Again: already there.
            assert!(waiters.register(waker).is_none());
        }
        // The inline one and the limit are full: the oldest shared one
        // (the second caller) makes room.
        let evicted = waiters.register(&callers[SHARED_LIMIT + 1].1).unwrap();
        assert!(evicted.will_wake(&callers[1].1));
        let mut woken = Vec::new();
        waiters.take_into(&mut woken);
        assert_eq!(woken.len(), SHARED_LIMIT + 1);
    }
}
