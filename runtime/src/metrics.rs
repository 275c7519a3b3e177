//! Counters that show what the loop did: for tests that prove it neither
//! spins nor loses wake-ups, and for benchmarks.

use std::sync::atomic::{AtomicU64, Ordering};

/// A counter, readable from any thread.
#[derive(Default)]
pub(crate) struct Counter(AtomicU64);

impl Counter {
    /// Overwrites the value. Used for counters only the loop thread keeps,
    /// which it counts in plain cells and publishes once per tick: a store
    /// is cheaper than a read-modify-write per event.
    pub(crate) fn set(&self, value: u64) {
        self.0.store(value, Ordering::Relaxed);
    }

    /// Adds to the value, from any thread.
    pub(crate) fn add(&self, n: u64) {
        self.0.fetch_add(n, Ordering::Relaxed);
    }

    pub(crate) fn get(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

/// The counters behind [`Metrics`].
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
}

/// A snapshot of a runtime's counters, from
/// [`Handle::metrics`](crate::Handle::metrics).
///
/// Loop-side figures are published once per tick, so a snapshot taken from
/// another thread (or from a task, mid-tick) lags by at most one tick.
///
/// # Examples
///
/// ```
/// ioloop::block_on(async {
///     ioloop::spawn(async {}).await.unwrap();
///     ioloop::yield_now().await;
///     let m = ioloop::Handle::current().metrics();
///     assert!(m.ticks >= 1);
///     assert_eq!(m.live_tasks, 0);
/// });
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Metrics {
    /// Loop ticks completed.
    pub ticks: u64,
    /// Tasks (and `block_on` futures) polled.
    pub jobs_run: u64,
    /// I/O events received from the poller, the waker's excluded.
    pub io_events: u64,
    /// I/O events dropped because their registration had been closed (and
    /// its slot perhaps reused) by the time they arrived.
    pub stale_io_events: u64,
    /// Times another thread had to wake the loop out of the poller. Many
    /// foreign wakes between two polls count once; none count while the
    /// loop is awake.
    pub poller_wakeups: u64,
    /// Spawned tasks not yet finished.
    pub live_tasks: u64,
    /// Armed timers.
    pub live_timers: u64,
    /// Entries in the timer heap, armed and cancelled-but-not-yet-dropped;
    /// kept within about twice `live_timers`.
    pub timer_heap_len: u64,
    /// Registered I/O sources.
    pub io_sources: u64,
    /// Threads in the blocking pool, busy or idle.
    pub blocking_threads: u64,
    /// Blocking-pool threads waiting for a job.
    pub blocking_idle: u64,
    /// Blocking jobs waiting for a free thread.
    pub blocking_queued: u64,
}
