//! `Handle`: a way into a runtime from anywhere.

use std::fmt;
use std::future::Future;
use std::sync::Arc;

use crate::context;
use crate::core::Job;
use crate::metrics::Metrics;
use crate::shared::Shared;
use crate::task::{JoinHandle, TaskCell};

/// A cloneable reference to a runtime, usable from any thread: to spawn
/// onto its loop or read its counters.
///
/// # Examples
///
/// ```
/// let rt = ioloop::Runtime::new().unwrap();
/// let handle = rt.handle().clone();
/// let task = std::thread::spawn(move || handle.spawn(async { 1 + 1 }))
///     .join()
///     .unwrap();
/// assert_eq!(rt.block_on(task).unwrap(), 2);
/// ```
#[derive(Clone)]
pub struct Handle {
    shared: Arc<Shared>,
}

impl Handle {
    pub(crate) fn new(shared: Arc<Shared>) -> Self {
        Handle { shared }
    }

    pub(crate) fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }

    /// The handle of the runtime running on this thread.
    ///
    /// # Panics
    ///
    /// If called outside an ioloop runtime; see
    /// [`try_current`](Self::try_current).
    ///
    /// # Examples
    ///
    /// ```
    /// ioloop::block_on(async {
    ///     let handle = ioloop::Handle::current();
    ///     assert_eq!(handle.spawn(async { 3 }).await.unwrap(), 3);
    /// });
    /// ```
    #[track_caller]
    pub fn current() -> Handle {
        Self::try_current().expect("ioloop::Handle::current called outside an ioloop runtime")
    }

    /// The handle of the runtime this thread belongs to, if there is one:
    /// the one whose loop it runs, or, on a blocking-pool thread during a
    /// job, the one that started the job.
    ///
    /// # Examples
    ///
    /// ```
    /// assert!(ioloop::Handle::try_current().is_none());
    /// ioloop::block_on(async { assert!(ioloop::Handle::try_current().is_some()) });
    /// ```
    pub fn try_current() -> Option<Handle> {
        context::current().map(Handle::new)
    }

    /// Spawns `future` onto this runtime's loop, from any thread.
    ///
    /// On the loop thread this is [`spawn`](crate::spawn). From elsewhere
    /// the task is handed to the loop through its injection queue, waking
    /// it if it sleeps; if the runtime has shut down, the task is cancelled
    /// at once and its handle reports so.
    ///
    /// # Examples
    ///
    /// ```
    /// let rt = ioloop::Runtime::new().unwrap();
    /// let task = rt.handle().spawn(async { "hi" });
    /// assert_eq!(rt.block_on(task).unwrap(), "hi");
    /// ```
    #[doc(alias = "run_coroutine_threadsafe")]
    pub fn spawn<F>(&self, future: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        let task = TaskCell::new(future, self.shared.clone());
        let handle = JoinHandle::new(task.clone());
        let local = context::with_core(|core| match core {
            Some(core) if Arc::ptr_eq(&core.shared, &self.shared) => {
                core.register(task.clone());
                true
            }
            _ => false,
        });
        if !local {
            self.shared.schedule(Job::Task(task));
        }
        handle
    }

    /// A snapshot of the runtime's counters.
    ///
    /// # Examples
    ///
    /// ```
    /// let rt = ioloop::Runtime::new().unwrap();
    /// let before = rt.handle().metrics();
    /// rt.block_on(async { ioloop::spawn(async {}).await.unwrap() });
    /// let after = rt.handle().metrics();
    /// assert!(after.jobs_run > before.jobs_run);
    /// assert_eq!(after.live_tasks, 0);
    /// ```
    pub fn metrics(&self) -> Metrics {
        let c = &self.shared.counters;
        let pool = self.shared.pool.stats();
        Metrics {
            ticks: c.ticks.get(),
            jobs_run: c.jobs_run.get(),
            io_events: c.io_events.get(),
            stale_io_events: c.stale_io_events.get(),
            poller_wakeups: c.poller_wakeups.get(),
            live_tasks: c.live_tasks.get(),
            live_timers: c.live_timers.get(),
            timer_heap_len: c.timer_heap_len.get(),
            io_sources: self.shared.reactor.len() as u64,
            blocking_threads: pool.threads as u64,
            blocking_idle: pool.idle as u64,
            blocking_queued: pool.queued as u64,
        }
    }
}

impl fmt::Debug for Handle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Handle").finish_non_exhaustive()
    }
}
