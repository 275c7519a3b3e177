//! The library's lock, and the rule it checks: **no waker is woken while a
//! lock of ours is held.** A waker runs code we do not control, which may
//! take the same lock again (issue 40: a socket's own waker, woken while a
//! write held its outbox's lock, blocked the loop thread on itself), or
//! another lock in the other order. So wakers are collected under a lock
//! and woken after it is released, everywhere: the reactor's table and
//! waiters, the injection queue, the task list, a socket's outbox, a
//! `JoinSet`'s state.
//!
//! In debug builds [`Mutex`] counts, per thread, the locks it holds, and
//! every place the library wakes a waker calls [`assert_unlocked`], which
//! panics while the count is not 0: a wake under a lock fails the first
//! test that reaches it, whether or not the waker would have deadlocked.
//! In release builds `Mutex` is parking_lot's own, re-exported, and the
//! check is nothing: the rule costs no instruction there.
//!
//! Every lock of the runtime and of ioloop-net is this one (net reaches it
//! as `ioloop_runtime::lock`, hidden from the docs), but for the two that a
//! `Condvar` waits on (the blocking pool's and the stall detector's), whose
//! holders wake nothing, and the loom models' own (`sync::Mutex` under
//! `--cfg loom`). Every lock of the library is a `Mutex` (a task's join
//! waker had a bit of its state word for a lock, counted by hand, until it
//! moved to the runtime's table of joiners, behind one).

#[cfg(not(debug_assertions))]
pub use parking_lot::{Mutex, MutexGuard};

#[cfg(debug_assertions)]
pub use checked::{Mutex, MutexGuard};

/// Panics (debug builds only) if this thread holds a lock of the library:
/// called wherever the library wakes a waker, or may (a park that may
/// evict, a budget that may yield). Nothing in release builds.
#[inline(always)]
#[track_caller]
pub fn assert_unlocked() {
    #[cfg(debug_assertions)]
    checked::assert_unlocked();
}

#[cfg(debug_assertions)]
mod checked {
    use std::cell::Cell;
    use std::ops::{Deref, DerefMut};

    thread_local! {
        /// The locks this thread holds now.
        static HELD: Cell<usize> = const { Cell::new(0) };
        /// The locks this thread has taken, ever: what a test of "takes no
        /// lock" reads.
        static TAKEN: Cell<u64> = const { Cell::new(0) };
    }

    pub(super) fn acquired() {
        HELD.set(HELD.get() + 1);
        TAKEN.set(TAKEN.get() + 1);
    }

    /// The locks this thread has taken so far.
    #[cfg(all(test, not(loom)))]
    pub(crate) fn taken() -> u64 {
        TAKEN.get()
    }

    pub(super) fn released() {
        HELD.set(HELD.get() - 1);
    }

    #[track_caller]
    pub(super) fn assert_unlocked() {
        let held = HELD.get();
        assert!(
            held == 0,
            "ioloop: a waker is woken while this thread holds {held} lock(s) of the library: \
             collect the waker under the lock and wake it after the lock is released"
        );
    }

    /// parking_lot's `Mutex`, counted while locked.
    #[derive(Debug, Default)]
    pub struct Mutex<T: ?Sized>(parking_lot::Mutex<T>);

    /// The guard of a [`Mutex`]: the lock counts as held while it lives.
    pub struct MutexGuard<'a, T: ?Sized>(parking_lot::MutexGuard<'a, T>);

    impl<T: ?Sized> Drop for MutexGuard<'_, T> {
        fn drop(&mut self) {
            released();
        }
    }

    impl<T> Mutex<T> {
        /// A new mutex around `value`.
        pub const fn new(value: T) -> Mutex<T> {
            Mutex(parking_lot::Mutex::new(value))
        }

        /// The value, the mutex gone.
        pub fn into_inner(self) -> T {
            self.0.into_inner()
        }
    }

    impl<T: ?Sized> Mutex<T> {
        /// Waits for the lock and takes it.
        #[inline]
        pub fn lock(&self) -> MutexGuard<'_, T> {
            let guard = self.0.lock();
            acquired();
            MutexGuard(guard)
        }

        /// The value, through a unique reference: no lock needed.
        pub fn get_mut(&mut self) -> &mut T {
            self.0.get_mut()
        }
    }

    impl<T: ?Sized> Deref for MutexGuard<'_, T> {
        type Target = T;

        fn deref(&self) -> &T {
            &self.0
        }
    }

    impl<T: ?Sized> DerefMut for MutexGuard<'_, T> {
        fn deref_mut(&mut self) -> &mut T {
            &mut self.0
        }
    }
}

/// The locks this thread has taken so far (debug builds' tests): a path
/// said to take no lock is tested by this count standing still.
#[cfg(all(test, debug_assertions, not(loom)))]
pub(crate) use checked::taken;

#[cfg(all(test, debug_assertions, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn locks_count_while_held_and_nested() {
        let before = taken();
        let (a, b) = (Mutex::new(1), Mutex::new(2));
        assert_unlocked();
        {
            let _a = a.lock();
            {
                let _b = b.lock();
            }
            assert!(std::panic::catch_unwind(|| assert_unlocked()).is_err());
            let _b = b.lock();
        }
        assert_unlocked();
        assert_eq!(taken() - before, 3, "a once, b twice");
    }

    #[test]
    #[should_panic(expected = "a waker is woken while this thread holds 1 lock(s)")]
    fn a_wake_site_under_a_lock_panics() {
        let lock = Mutex::new(());
        let _guard = lock.lock();
        assert_unlocked();
    }

    /// The check where it matters: a task's waker woken under a lock of
    /// the library panics, though this wake would have done no harm.
    #[test]
    #[should_panic(expected = "a waker is woken while this thread holds 1 lock(s)")]
    fn a_task_woken_under_a_lock_panics() {
        use std::future::poll_fn;
        use std::sync::Arc;
        use std::task::{Poll, Waker};

        crate::block_on(async {
            let slot = Arc::new(Mutex::new(None::<Waker>));
            let parked = slot.clone();
            let _task = crate::spawn(poll_fn(move |cx| {
                *parked.lock() = Some(cx.waker().clone());
                Poll::<()>::Pending
            }));
            crate::yield_now().await;
            let mut waker = slot.lock();
            waker.take().expect("the task parked").wake();
        });
    }

    /// And so does the `block_on` future's waker.
    #[test]
    #[should_panic(expected = "a waker is woken while this thread holds 1 lock(s)")]
    fn the_main_future_woken_under_a_lock_panics() {
        crate::block_on(std::future::poll_fn(|cx| {
            let lock = Mutex::new(());
            let _guard = lock.lock();
            cx.waker().wake_by_ref();
            std::task::Poll::Ready(())
        }));
    }
}
