//! The atomics and locks the runtime's cross-thread protocols are built on,
//! named in one place so the same code runs normally and under the
//! [loom](https://docs.rs/loom) model checker.
//!
//! In a normal build every name here is a plain re-export (std's atomics,
//! parking_lot's `Mutex`, mio's `Waker`): the code names the same types it
//! named before this module existed, so the shim costs nothing.
//!
//! Built with `RUSTFLAGS="--cfg loom"`, the same names are loom's (see
//! `mock`), and loom runs the models against them, exploring every
//! interleaving of the threads in a model up to a bound. The models sit next
//! to the code they check, in `loom_model` child modules: the task state
//! machine (`event_loop/cell/`), the park protocol and the injection queue's
//! closing at shutdown (`event_loop/shared/`), and a registration's readiness word
//! and waiters (`io/`); `harness` is what they share.
//! Run them with:
//!
//! ```text
//! RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=3 \
//!     cargo test -p ioloop-runtime --release --lib loom --target-dir target/loom
//! ```
//!
//! (`--target-dir` keeps the loom build from invalidating the normal one.)
//!
//! What goes through here: a task's state word, its stage (the future or
//! output, in an `UnsafeCell` loom checks for racing accesses) and its join
//! waker's lock, `block_on`'s wake flag, the park state and the injection
//! queue, the poller's waker, the reactor's entry table (and its shrink
//! hint), and each entry's readiness word and waiter lock.
//! What does not, on purpose:
//!
//! - `Arc`. A task's `Arc` is its `Waker` (through `std::task::Wake`) and
//!   coerces to `Arc<dyn Runnable>`; loom's `Arc` can do neither. Reference
//!   counting is std's and not what the models are about: they count drops
//!   of futures and outputs instead. The reactor's entries are shared
//!   through std's `Arc` as well: the models check an entry's state word
//!   and lock, not its reference count.
//! - The metrics counters (relaxed, read for display only), the timer stamp
//!   (a `static`, which loom's atomics cannot initialise), the blocking
//!   pool, the lock that holds a loop's `Core` between `block_on` calls, the
//!   copy of a paused runtime's clock that other threads read, and
//!   the waker slot of a sleep polled off the loop thread: no invariant of
//!   the runtime depends on how their accesses interleave with anything
//!   else.

#[cfg(not(loom))]
pub(crate) use mio::Waker as PollWaker;
#[cfg(not(loom))]
pub(crate) use parking_lot::Mutex;
#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, AtomicUsize, Ordering};

/// std's `UnsafeCell` with loom's way in: the value is reached only inside
/// [`with_mut`](Self::with_mut), so that under loom the same code has every
/// access checked against the others.
#[cfg(not(loom))]
pub(crate) struct UnsafeCell<T>(std::cell::UnsafeCell<T>);

#[cfg(not(loom))]
impl<T> UnsafeCell<T> {
    pub(crate) fn new(value: T) -> Self {
        UnsafeCell(std::cell::UnsafeCell::new(value))
    }

    /// Calls `f` with a pointer to the value. Dereferencing it is the
    /// caller's `unsafe`: it must be the value's only user meanwhile.
    #[inline(always)]
    pub(crate) fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        f(self.0.get())
    }
}

#[cfg(all(test, loom))]
pub(crate) mod harness;
#[cfg(loom)]
mod mock;
#[cfg(loom)]
pub(crate) use loom::cell::UnsafeCell;
#[cfg(loom)]
pub(crate) use mock::{AtomicBool, AtomicU8, AtomicU64, AtomicUsize, Mutex, Ordering, PollWaker};
