//! `Builder`: a runtime with settings other than the defaults.

use std::io;
use std::time::Duration;

use crate::runtime::Runtime;

/// Jobs run per tick at most before the OS is polled again. Large enough
/// that a busy loop spends little on zero-timeout polls (one `epoll_wait`
/// per 128 polls), small enough that an I/O event never waits behind more
/// than that many tasks.
const DEFAULT_EVENT_INTERVAL: usize = 128;

/// Events taken from the OS per poll. A burst of more ready sources is
/// picked up on the next tick, which follows at once.
const DEFAULT_EVENTS_CAPACITY: usize = 1024;

/// Blocking-pool threads at most. Blocking jobs mostly wait (on files, on
/// name lookups, on a library call), not compute, so many can usefully run
/// at once; the cap stops a flood of jobs from exhausting memory with
/// thread stacks. Jobs beyond it queue for the next free thread.
const DEFAULT_MAX_BLOCKING_THREADS: usize = 512;

/// How long an idle blocking-pool thread waits for another job before it
/// exits: long enough that a burst of jobs reuses threads, short enough
/// that an idle process is back to no pool threads in seconds.
const DEFAULT_KEEP_ALIVE: Duration = Duration::from_secs(10);

/// Builds a [`Runtime`] with non-default settings.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
///
/// let rt = ioloop::Runtime::builder()
///     .event_interval(64)
///     .events_capacity(256)
///     .max_blocking_threads(8)
///     .thread_keep_alive(Duration::from_secs(1))
///     .build()
///     .unwrap();
/// assert_eq!(rt.block_on(async { 5 }), 5);
/// ```
#[derive(Debug, Clone)]
pub struct Builder {
    pub(crate) event_interval: usize,
    pub(crate) events_capacity: usize,
    pub(crate) max_blocking_threads: usize,
    pub(crate) keep_alive: Duration,
    pub(crate) stack_size: Option<usize>,
}

impl Builder {
    /// A builder with the default settings.
    ///
    /// # Examples
    ///
    /// ```
    /// let rt = ioloop::Builder::new().build().unwrap();
    /// assert_eq!(rt.block_on(async { 1 }), 1);
    /// ```
    pub fn new() -> Self {
        Builder {
            event_interval: DEFAULT_EVENT_INTERVAL,
            events_capacity: DEFAULT_EVENTS_CAPACITY,
            max_blocking_threads: DEFAULT_MAX_BLOCKING_THREADS,
            keep_alive: DEFAULT_KEEP_ALIVE,
            stack_size: None,
        }
    }

    /// How many ready tasks the loop runs, at most, before it polls the OS
    /// again (default 128). Tasks woken while a tick runs always wait for
    /// the next tick, whatever this is.
    ///
    /// # Panics
    ///
    /// If `n` is zero.
    ///
    /// # Examples
    ///
    /// ```
    /// let rt = ioloop::Runtime::builder().event_interval(16).build().unwrap();
    /// let n = rt.block_on(async {
    ///     let tasks: Vec<_> = (0..100).map(|i| ioloop::spawn(async move { i })).collect();
    ///     let mut sum = 0;
    ///     for t in tasks {
    ///         sum += t.await.unwrap();
    ///     }
    ///     sum
    /// });
    /// assert_eq!(n, 4950);
    /// ```
    pub fn event_interval(&mut self, n: usize) -> &mut Self {
        assert!(n > 0, "ioloop: event_interval must be at least 1");
        self.event_interval = n;
        self
    }

    /// How many I/O events the loop takes from the OS per poll (default
    /// 1024).
    ///
    /// # Panics
    ///
    /// If `n` is zero.
    ///
    /// # Examples
    ///
    /// ```
    /// let rt = ioloop::Runtime::builder().events_capacity(64).build().unwrap();
    /// assert_eq!(rt.block_on(async { "ok" }), "ok");
    /// ```
    pub fn events_capacity(&mut self, n: usize) -> &mut Self {
        assert!(n > 0, "ioloop: events_capacity must be at least 1");
        self.events_capacity = n;
        self
    }

    /// The most threads the blocking pool starts (default 512); jobs beyond
    /// that wait for a free thread.
    ///
    /// # Panics
    ///
    /// If `n` is zero.
    ///
    /// # Examples
    ///
    /// ```
    /// let rt = ioloop::Runtime::builder().max_blocking_threads(2).build().unwrap();
    /// let squares = rt.block_on(async {
    ///     let jobs: Vec<_> = (0..8u64).map(|i| ioloop::spawn_blocking(move || i * i)).collect();
    ///     let mut out = Vec::new();
    ///     for job in jobs {
    ///         out.push(job.await.unwrap());
    ///     }
    ///     out
    /// });
    /// assert_eq!(squares[7], 49);
    /// assert!(rt.handle().metrics().blocking_threads <= 2);
    /// ```
    pub fn max_blocking_threads(&mut self, n: usize) -> &mut Self {
        assert!(n > 0, "ioloop: max_blocking_threads must be at least 1");
        self.max_blocking_threads = n;
        self
    }

    /// How long an idle blocking-pool thread lives (default 10 s).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// let rt = ioloop::Runtime::builder()
    ///     .thread_keep_alive(Duration::from_millis(100))
    ///     .build()
    ///     .unwrap();
    /// assert_eq!(rt.block_on(rt.handle().spawn_blocking(|| 3)).unwrap(), 3);
    /// ```
    pub fn thread_keep_alive(&mut self, keep_alive: Duration) -> &mut Self {
        self.keep_alive = keep_alive;
        self
    }

    /// The stack size of blocking-pool threads (default: the standard
    /// library's, 2 MiB unless `RUST_MIN_STACK` says otherwise).
    ///
    /// # Examples
    ///
    /// ```
    /// let rt = ioloop::Runtime::builder()
    ///     .thread_stack_size(256 * 1024)
    ///     .build()
    ///     .unwrap();
    /// let job = rt.handle().spawn_blocking(|| "small stack");
    /// assert_eq!(rt.block_on(job).unwrap(), "small stack");
    /// ```
    pub fn thread_stack_size(&mut self, bytes: usize) -> &mut Self {
        self.stack_size = Some(bytes);
        self
    }

    /// Creates the runtime.
    ///
    /// # Errors
    ///
    /// Fails if the OS refuses the epoll instance or the eventfd the
    /// runtime wakes itself through (typically `EMFILE`: no fds left).
    ///
    /// # Examples
    ///
    /// ```
    /// let rt = ioloop::Runtime::builder().build()?;
    /// assert_eq!(rt.block_on(async { 2 + 2 }), 4);
    /// # Ok::<_, std::io::Error>(())
    /// ```
    pub fn build(&self) -> io::Result<Runtime> {
        Runtime::from_builder(self)
    }
}

impl Default for Builder {
    fn default() -> Self {
        Self::new()
    }
}
