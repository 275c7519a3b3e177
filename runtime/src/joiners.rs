//! The wakers of `JoinHandle`s waiting for their tasks, one table per
//! runtime, keyed by the task's address.
//!
//! A task is joined while it runs far less often than it is spawned: a
//! server's connection tasks are detached, and a handle awaited after its
//! task finished never waits. A waker kept in every task (16 bytes) paid
//! for the rare case in each; kept here, it costs a task nothing until its
//! handle waits, and then an entry of this table. That took the task of a
//! future holding a `usize` from 72 bytes to 56: a 64-byte block of
//! `malloc` instead of an 80-byte one.
//!
//! The table's lock is taken by a handle that finds its task still
//! running, by the completion of a task whose handle waits (`JOINING`
//! set), by a handle dropped while it waits, and by a dump. No user code
//! runs under it: a waker is cloned before it is taken, and dropped or
//! woken after it is let go (a waker's clone that joined a task of the
//! same runtime would otherwise wait for itself). The key is the task's
//! address, unique while the task lives: its handle holds a reference,
//! and each of the three ways out of a wait removes the entry (the task
//! completing; the handle, when it left its waker as the task completed;
//! the handle dropped), so no entry outlives its task.
//!
//! A B-tree, not a hash table: no hasher to choose (std's is seeded at
//! random, and the library iterates nothing in a random order), and it
//! gives its nodes back as it empties, so a burst of a million waiting
//! handles leaves no room behind, while its root node, once made, stays
//! even when the table is empty: a warm join allocates nothing
//! (`tests/rt/alloc.rs`).

use std::collections::BTreeMap;
use std::collections::btree_map::Entry;
use std::task::Waker;

use crate::sync::Mutex;

/// The wakers of the handles waiting for this runtime's tasks.
#[derive(Default)]
pub(crate) struct Joiners(Mutex<BTreeMap<usize, Waker>>);

impl Joiners {
    /// Leaves a clone of `waker` as the waker of the task at `task`,
    /// unless the entry's waker would wake the same task. Returns the
    /// waker the table did not keep (the one replaced, or the clone), for
    /// the caller to drop after the call: a waker's drop is user code.
    pub(crate) fn register(&self, task: usize, waker: &Waker) -> Option<Waker> {
        // `base::set_waker`'s rule, but not it: it clones under the
        // caller's lock, and here the clone comes first (see above).
        let waker = waker.clone();
        match self.0.lock().entry(task) {
            Entry::Occupied(old) if old.get().will_wake(&waker) => Some(waker),
            Entry::Occupied(mut old) => Some(old.insert(waker)),
            Entry::Vacant(slot) => {
                slot.insert(waker);
                None
            }
        }
    }

    /// Takes the waker left for the task at `task`, if there is one, to
    /// wake or drop after the call.
    pub(crate) fn take(&self, task: usize) -> Option<Waker> {
        self.0.lock().remove(&task)
    }

    /// The data pointer of the waker left for the task at `task`: whose
    /// handle waits for it, as a dump shows.
    pub(crate) fn data(&self, task: usize) -> Option<*const ()> {
        self.0.lock().get(&task).map(Waker::data)
    }

    /// How many handles wait: for tests.
    #[cfg(test)]
    pub(crate) fn waiting(&self) -> usize {
        self.0.lock().len()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::task::{Wake, Waker};

    use super::Joiners;

    #[derive(Default)]
    struct Count(AtomicUsize);

    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn counting_waker() -> (Arc<Count>, Waker) {
        let count = Arc::new(Count::default());
        (count.clone(), Waker::from(count))
    }

    /// Addresses as tasks have them: 64 bytes apart.
    fn address(i: usize) -> usize {
        0x7f00_0000_0000 + i * 64
    }

    #[test]
    fn a_waker_that_wakes_the_same_task_is_kept_and_another_replaces_it() {
        let joiners = Joiners::default();
        let (first, waker) = counting_waker();
        assert!(joiners.register(address(0), &waker).is_none());
        let spare = joiners
            .register(address(0), &waker.clone())
            .expect("the clone");
        assert!(spare.will_wake(&waker));
        drop(spare);
        assert_eq!(Arc::strong_count(&first), 3, "kept once, not twice");
        assert_eq!(joiners.data(address(0)), Some(waker.data()));

        let (_second, other) = counting_waker();
        let old = joiners.register(address(0), &other).expect("replaced");
        assert!(old.will_wake(&waker));
        assert_eq!(joiners.data(address(0)), Some(other.data()));
        assert_eq!(joiners.waiting(), 1);

        let taken = joiners.take(address(0)).expect("left");
        assert!(taken.will_wake(&other));
        assert!(joiners.take(address(0)).is_none());
        assert_eq!(joiners.data(address(0)), None);
        assert_eq!(joiners.waiting(), 0);
    }

    /// Each task its own entry, taken in any order: 10,000 at once (a
    /// B-tree several levels deep), taken from both ends and the middle.
    #[test]
    fn each_task_has_its_own_entry() {
        let joiners = Joiners::default();
        let wakers: Vec<_> = (0..10_000).map(|_| counting_waker()).collect();
        for (i, (_, waker)) in wakers.iter().enumerate() {
            assert!(joiners.register(address(i), waker).is_none());
        }
        assert_eq!(joiners.waiting(), 10_000);
        let order = (0..5_000).flat_map(|i| [i, 9_999 - i]);
        for (taken, i) in order.enumerate() {
            assert_eq!(joiners.data(address(i)), Some(wakers[i].1.data()));
            joiners.take(address(i)).expect("left").wake();
            assert_eq!(wakers[i].0.0.load(Ordering::Relaxed), 1);
            assert_eq!(joiners.waiting(), 10_000 - taken - 1);
        }
        assert!(
            wakers
                .iter()
                .all(|(count, _)| count.0.load(Ordering::Relaxed) == 1)
        );
    }
}
