//! The loom side of the shim: loom's atomics, loom's `Mutex` behind
//! parking_lot's API, and a stand-in for the poller's eventfd.

use std::io;
use std::sync::PoisonError;

#[cfg(test)]
pub(crate) use loom::sync::atomic::AtomicUsize;
pub(crate) use loom::sync::atomic::{AtomicBool, AtomicU8, AtomicU32, AtomicU64, Ordering};

/// loom's `Mutex` with parking_lot's `lock`, which returns the guard
/// itself. parking_lot has no poisoning, so neither does this: a lock whose
/// holder panicked is taken as it is.
pub(crate) struct Mutex<T: ?Sized>(loom::sync::Mutex<T>);

impl<T> Mutex<T> {
    pub(crate) fn new(value: T) -> Self {
        Mutex(loom::sync::Mutex::new(value))
    }
}

impl<T: Default> Default for Mutex<T> {
    fn default() -> Self {
        Mutex::new(T::default())
    }
}

impl<T: ?Sized> Mutex<T> {
    pub(crate) fn lock(&self) -> loom::sync::MutexGuard<'_, T> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The poller's waker as loom sees it: mio's eventfd, registered
/// edge-triggered, and the loop's `epoll_wait` on it.
///
/// Every `wake` is a write, and raises an edge; a wait reports every edge
/// raised since the last one, once. A blocking wait returns only on an
/// edge: the models have no timers and no I/O, so a loop that blocks with
/// no write coming has lost a wake, and loom reports the deadlock.
pub(crate) struct PollWaker {
    eventfd: loom::sync::Mutex<EventFd>,
    edge: loom::sync::Condvar,
}

#[derive(Default)]
struct EventFd {
    /// An edge was raised that no wait has reported yet.
    pending: bool,
    /// Writes so far, for the models' "one write per park" check.
    writes: usize,
}

impl PollWaker {
    /// The same signature as `mio::Waker::new`, so the runtime builds its
    /// poller's waker the same way in both builds.
    pub(crate) fn new(_registry: &mio::Registry, _token: mio::Token) -> io::Result<Self> {
        Ok(PollWaker {
            eventfd: loom::sync::Mutex::new(EventFd::default()),
            edge: loom::sync::Condvar::new(),
        })
    }

    /// Writes to the eventfd.
    pub(crate) fn wake(&self) -> io::Result<()> {
        let mut eventfd = self.eventfd.lock().unwrap_or_else(PoisonError::into_inner);
        eventfd.pending = true;
        eventfd.writes += 1;
        self.edge.notify_one();
        Ok(())
    }

    /// The loop's `epoll_wait`, as far as the eventfd is concerned:
    /// `block` waits for an edge (no timeout), otherwise it is a poll with
    /// a zero timeout. Either way, a pending edge is reported and consumed.
    #[cfg(test)]
    pub(crate) fn wait(&self, block: bool) {
        let mut eventfd = self.eventfd.lock().unwrap_or_else(PoisonError::into_inner);
        while block && !eventfd.pending {
            eventfd = self
                .edge
                .wait(eventfd)
                .unwrap_or_else(PoisonError::into_inner);
        }
        eventfd.pending = false;
    }

    /// Writes to the eventfd so far.
    #[cfg(test)]
    pub(crate) fn writes(&self) -> usize {
        self.eventfd
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .writes
    }
}
