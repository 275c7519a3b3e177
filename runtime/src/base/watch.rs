//! What the loop is polling, published for other threads: the stall
//! detector's watchdog (`stall.rs`) and a dump read it; the loop writes it
//! with plain stores around each poll.

use std::panic::Location;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use parking_lot::Mutex;

/// The task-list slot published while the `block_on` future is polled.
pub(crate) const MAIN: usize = usize::MAX;

/// What the loop is polling, for other threads: the stall detector and a
/// dump.
pub(crate) struct Watch {
    /// Odd while a poll runs, even between polls; one more at each change.
    seq: AtomicU64,
    /// The task-list slot of the task being polled, or [`MAIN`].
    key: AtomicUsize,
    /// Where the running `block_on` was called.
    main: Mutex<Option<&'static Location<'static>>>,
}

impl Default for Watch {
    fn default() -> Self {
        Watch {
            seq: AtomicU64::new(0),
            key: AtomicUsize::new(0),
            main: Mutex::new(None),
        }
    }
}

/// The loop's side of the watch: the next sequence number, kept in the
/// loop's own state so publishing costs no read-modify-write.
#[derive(Default)]
pub(crate) struct Publisher {
    seq: std::cell::Cell<u64>,
}

impl Publisher {
    /// Announces a poll of the task in slot `key` (or [`MAIN`]).
    #[inline]
    pub(crate) fn start(&self, watch: &Watch, key: usize) {
        let seq = self.seq.get() + 1;
        self.seq.set(seq);
        watch.key.store(key, Ordering::Relaxed);
        watch.seq.store(seq, Ordering::Release);
    }

    /// Announces that the poll returned.
    #[inline]
    pub(crate) fn end(&self, watch: &Watch) {
        let seq = self.seq.get() + 1;
        self.seq.set(seq);
        watch.seq.store(seq, Ordering::Release);
    }
}

impl Watch {
    /// The poll running now, if one is: its sequence number and slot. The
    /// slot is right if the sequence number is still the same afterwards
    /// (see [`Watch::still`]).
    pub(crate) fn running(&self) -> Option<(u64, usize)> {
        let seq = self.seq.load(Ordering::Acquire);
        if seq & 1 == 0 {
            return None;
        }
        let key = self.key.load(Ordering::Relaxed);
        Some((seq, key))
    }

    /// Whether the poll numbered `seq` is still the one running.
    pub(crate) fn still(&self, seq: u64) -> bool {
        std::sync::atomic::fence(Ordering::Acquire);
        self.seq.load(Ordering::Relaxed) == seq
    }

    /// Records where `block_on` was called, for reports about its future.
    pub(crate) fn set_main(&self, location: &'static Location<'static>) {
        *self.main.lock() = Some(location);
    }

    pub(crate) fn main(&self) -> Option<&'static Location<'static>> {
        *self.main.lock()
    }
}
