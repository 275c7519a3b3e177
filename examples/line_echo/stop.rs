//! A stop notice every connection can wait on: the server sets it once on
//! Ctrl-C or SIGTERM, and each connection finishes its current line and
//! closes.
//!
//! Each connection holds one [`Listener`], a slot in a slab of wakers, so
//! waiting again and again (once per line) never grows anything.

use std::future::{Future, poll_fn};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Poll, Waker};

use slab::Slab;

/// The notice. Cheap to clone; all clones are the same notice.
#[derive(Clone, Default)]
pub struct Stop {
    inner: Arc<Inner>,
}

#[derive(Default)]
struct Inner {
    stopped: AtomicBool,
    waiters: Mutex<Slab<Option<Waker>>>,
}

impl Stop {
    /// Sets the notice and wakes every waiting connection.
    pub fn stop(&self) {
        self.inner.stopped.store(true, Ordering::SeqCst);
        let wakers: Vec<Waker> = self
            .inner
            .waiters
            .lock()
            .unwrap()
            .iter_mut()
            .filter_map(|(_, w)| w.take())
            .collect();
        for waker in wakers {
            waker.wake();
        }
    }

    /// Whether the notice has been set.
    pub fn is_stopped(&self) -> bool {
        self.inner.stopped.load(Ordering::SeqCst)
    }

    /// A listener for one connection.
    pub fn listener(&self) -> Listener {
        let key = self.inner.waiters.lock().unwrap().insert(None);
        Listener {
            stop: self.clone(),
            key,
            registered: None,
        }
    }
}

/// One connection's place in the notice's list.
pub struct Listener {
    stop: Stop,
    key: usize,
    /// The waker last left in the list: a connection waits once per line,
    /// always from the same task, so the lock is taken only the first time.
    registered: Option<Waker>,
}

impl Listener {
    /// Waits until the notice is set. Cancel-safe.
    ///
    /// A plain function returning the `poll_fn`, not an `async fn`, which
    /// would hold `self` twice and the `poll_fn` besides: a connection
    /// holds this future while it waits for each line.
    pub fn wait(&mut self) -> impl Future<Output = ()> + '_ {
        poll_fn(move |cx| {
            if self.stop.is_stopped() {
                return Poll::Ready(());
            }
            if self
                .registered
                .as_ref()
                .is_some_and(|w| w.will_wake(cx.waker()))
            {
                return Poll::Pending;
            }
            self.registered = Some(cx.waker().clone());
            self.stop.inner.waiters.lock().unwrap()[self.key] = Some(cx.waker().clone());
            // Set between the check and the registration: seen here.
            if self.stop.is_stopped() {
                Poll::Ready(())
            } else {
                Poll::Pending
            }
        })
    }

    /// Whether the notice has been set.
    pub fn is_stopped(&self) -> bool {
        self.stop.is_stopped()
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        self.stop.inner.waiters.lock().unwrap().remove(self.key);
    }
}
