//! A one-shot cross-thread signal, written against `std::task` only, so the
//! tests exercise ioloop's wakers rather than another crate's.

use std::future::poll_fn;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Poll, Waker};

/// Set once, from any thread; awaited by one task at a time.
#[derive(Default)]
pub struct Signal {
    set: AtomicBool,
    waker: Mutex<Option<Waker>>,
}

impl Signal {
    /// Sets the signal and wakes the waiter, if any.
    pub fn set(&self) {
        self.set.store(true, Ordering::SeqCst);
        if let Some(waker) = self.waker.lock().unwrap().take() {
            waker.wake();
        }
    }

    /// Wakes the waiter without setting the signal (a spurious wake).
    pub fn poke(&self) {
        if let Some(waker) = self.waker.lock().unwrap().as_ref() {
            waker.wake_by_ref();
        }
    }

    pub fn is_set(&self) -> bool {
        self.set.load(Ordering::SeqCst)
    }

    /// Returns `true` once a waiter has parked its waker.
    pub fn has_waiter(&self) -> bool {
        self.waker.lock().unwrap().is_some()
    }

    /// Waits until the signal is set.
    pub async fn wait(&self) {
        poll_fn(|cx| {
            if self.is_set() {
                return Poll::Ready(());
            }
            *self.waker.lock().unwrap() = Some(cx.waker().clone());
            if self.is_set() {
                Poll::Ready(())
            } else {
                Poll::Pending
            }
        })
        .await
    }
}
