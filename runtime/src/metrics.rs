//! Counters that show what the loop did: for tests that prove it neither
//! spins nor loses wake-ups, and for benchmarks.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::blocking::Stats;

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

impl Counters {
    /// The counters as they are now, with the figures kept elsewhere.
    pub(crate) fn snapshot(&self, io_sources: usize, pool: &Stats) -> Metrics {
        Metrics {
            ticks: self.ticks.get(),
            jobs_run: self.jobs_run.get(),
            io_events: self.io_events.get(),
            stale_io_events: self.stale_io_events.get(),
            poller_wakeups: self.poller_wakeups.get(),
            live_tasks: self.live_tasks.get(),
            live_timers: self.live_timers.get(),
            timer_heap_len: self.timer_heap_len.get(),
            slow_polls: self.slow_polls.get(),
            io_sources: io_sources as u64,
            blocking_threads: pool.threads as u64,
            blocking_idle: pool.idle as u64,
            blocking_queued: pool.queued as u64,
        }
    }
}

/// A snapshot of a runtime's counters, from
/// [`Handle::metrics`](crate::Handle::metrics).
///
/// The counters are current; the sizes of the loop's own tables (tasks,
/// timers) are published once per tick, so they lag by at most one tick.
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
    /// Polls that ran longer than the slow-poll threshold
    /// ([`Builder::slow_poll_threshold`](crate::Builder::slow_poll_threshold)),
    /// counted by the stall detector while they ran.
    pub slow_polls: u64,
}
