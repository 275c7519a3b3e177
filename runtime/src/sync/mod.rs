//! The atomics and locks the runtime's cross-thread protocols are built on,
//! named once so the same code runs normally (plain re-exports, at no cost)
//! and, with `RUSTFLAGS="--cfg loom"`, under the [loom](https://docs.rs/loom)
//! model checker (loom's types, see `mock`). The guide's "The cross-thread
//! protocols under loom" says what goes through here, and what does not.
//!
//! `lock` is the library's lock, loom or not, and the check that no waker
//! is woken while one is held (debug builds).

pub mod lock;

#[cfg(not(loom))]
pub(crate) use lock::Mutex;
#[cfg(not(loom))]
pub(crate) use mio::Waker as PollWaker;
#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU32, AtomicU64, Ordering};

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
/// For the models' own counters.
#[cfg(all(loom, test))]
pub(crate) use mock::AtomicUsize;
#[cfg(loom)]
pub(crate) use mock::{AtomicBool, AtomicU8, AtomicU32, AtomicU64, Mutex, Ordering, PollWaker};
