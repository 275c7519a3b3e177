//! The counters behind `Metrics` (`metrics.rs`), bumped in place by the
//! loop and read as they are by other threads.

use std::sync::atomic::{AtomicU64, Ordering};

/// A counter, readable from any thread.
#[derive(Default)]
pub(crate) struct Counter(AtomicU64);

impl Counter {
    /// Overwrites the value: a size the loop publishes.
    pub(crate) fn set(&self, value: u64) {
        self.0.store(value, Ordering::Relaxed);
    }

    /// Adds to a counter only the loop thread writes: a load and a store,
    /// cheaper than the read-modify-write `add` needs for many writers.
    pub(crate) fn bump(&self, n: u64) {
        self.0
            .store(self.0.load(Ordering::Relaxed) + n, Ordering::Relaxed);
    }

    /// Adds to the value, from any thread.
    pub(crate) fn add(&self, n: u64) {
        self.0.fetch_add(n, Ordering::Relaxed);
    }

    pub(crate) fn get(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

/// The counters behind [`Metrics`], stored once: the loop bumps them in
/// place, and other threads read them as they are.
#[derive(Default)]
pub(crate) struct Counters {
    pub(crate) ticks: Counter,
    pub(crate) jobs_run: Counter,
    pub(crate) io_events: Counter,
    pub(crate) stale_io_events: Counter,
    pub(crate) poller_wakeups: Counter,
    pub(crate) live_tasks: Counter,
    pub(crate) live_timers: Counter,
    pub(crate) timer_heap_len: Counter,
    pub(crate) slow_polls: Counter,
}

/// Threads, idle threads and queued jobs of the blocking pool, for the
/// metrics.
pub(crate) struct PoolStats {
    pub(crate) threads: usize,
    pub(crate) idle: usize,
    pub(crate) queued: usize,
}
