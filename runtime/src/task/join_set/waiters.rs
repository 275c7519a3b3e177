//! The tasks waiting on a set.

use std::task::Waker;

use crate::event_loop::cell::wake_quietly;

/// The wakers of the tasks waiting on a set, each kept once (by
/// `will_wake`), until the next task finishes or the set is emptied
/// (`detach_all`): all are woken then. A set shared behind a lock can have
/// several waiters, and each must learn that the set moved on: with one
/// waker, the latest poller's, the others waited for good on a set that
/// another task had emptied (issue 40). A waiter that stopped waiting
/// meanwhile gets one spurious wake. The first is kept inline: a set has
/// one waiter, mostly, and waiting then allocates nothing.
#[derive(Default)]
pub(super) struct Waiters {
    first: Option<Waker>,
    more: Vec<Waker>,
}

impl Waiters {
    /// Keeps `waker`, unless one that wakes the same task is kept already.
    pub(super) fn add(&mut self, waker: &Waker) {
        let mut kept = self.first.iter().chain(&self.more);
        if kept.any(|kept| kept.will_wake(waker)) {
            return;
        }
        match self.first {
            None => self.first = Some(waker.clone()),
            Some(_) => self.more.push(waker.clone()),
        }
    }

    /// Wakes them all; a waker that panics is logged, and the others are
    /// still woken.
    pub(super) fn wake(self) {
        for waker in self.first.into_iter().chain(self.more) {
            wake_quietly(waker);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::task::{Wake, Waker};

    use super::Waiters;

    /// Counts its wakes; panics on each if told to.
    struct Counter(AtomicUsize, bool);

    impl Wake for Counter {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
            assert!(!self.1, "this waker panics on purpose");
        }
    }

    fn counter(panics: bool) -> (Arc<Counter>, Waker) {
        let counter = Arc::new(Counter(AtomicUsize::new(0), panics));
        (counter.clone(), Waker::from(counter))
    }

    /// A task that polls the set again and again is kept once, and woken
    /// once; each of three others is woken too, though the first of them
    /// panics in its wake.
    #[test]
    fn each_waiter_is_kept_once_and_every_one_woken() {
        let (again, again_waker) = counter(false);
        let others: Vec<_> = [true, false, false].map(counter).into();
        let mut waiters = Waiters::default();
        for _ in 0..3 {
            waiters.add(&again_waker);
            for (_, waker) in &others {
                waiters.add(waker);
            }
        }
        assert_eq!(waiters.more.len(), 3);
        waiters.wake();
        assert_eq!(again.0.load(Ordering::SeqCst), 1);
        for (other, _) in &others {
            assert_eq!(other.0.load(Ordering::SeqCst), 1);
        }
    }
}
