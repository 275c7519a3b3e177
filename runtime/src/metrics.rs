//! `Metrics`: what the loop did, for tests and benchmarks.

use crate::event_loop::core::Shared;

/// The counters as they are now, with the figures kept elsewhere.
pub(crate) fn snapshot(shared: &Shared) -> Metrics {
    let (counters, [threads, idle, queued]) = (&shared.counters, shared.pool.stats());
    Metrics {
        ticks: counters.ticks.get(),
        jobs_run: counters.jobs_run.get(),
        io_events: counters.io_events.get(),
        stale_io_events: counters.stale_io_events.get(),
        poller_wakeups: counters.poller_wakeups.get(),
        live_tasks: counters.live_tasks.get(),
        live_timers: counters.live_timers.get(),
        timer_heap_len: counters.timer_heap_len.get(),
        slow_polls: counters.slow_polls.get(),
        io_sources: shared.reactor.len() as u64,
        blocking_threads: threads as u64,
        blocking_idle: idle as u64,
        blocking_queued: queued as u64,
    }
}

/// A snapshot of a runtime's counters, from
/// [`Handle::metrics`](crate::Handle::metrics); the sizes of the loop's
/// tables (tasks, timers) lag by at most one tick.
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
