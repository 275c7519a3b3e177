//! `Builder`: a runtime with settings other than the defaults.

use std::io;

use crate::runtime::Runtime;

/// Jobs run per tick at most before the OS is polled again. Large enough
/// that a busy loop spends little on zero-timeout polls (one `epoll_wait`
/// per 128 polls), small enough that an I/O event never waits behind more
/// than that many tasks.
const DEFAULT_EVENT_INTERVAL: usize = 128;

/// Events taken from the OS per poll. A burst of more ready sources is
/// picked up on the next tick, which follows at once.
const DEFAULT_EVENTS_CAPACITY: usize = 1024;

/// Builds a [`Runtime`] with non-default settings.
///
/// # Examples
///
/// ```
/// let rt = ioloop::Runtime::builder()
///     .event_interval(64)
///     .events_capacity(256)
///     .build()
///     .unwrap();
/// assert_eq!(rt.block_on(async { 5 }), 5);
/// ```
#[derive(Debug, Clone)]
pub struct Builder {
    pub(crate) event_interval: usize,
    pub(crate) events_capacity: usize,
}

impl Builder {
    /// A builder with the default settings.
    pub fn new() -> Self {
        Builder {
            event_interval: DEFAULT_EVENT_INTERVAL,
            events_capacity: DEFAULT_EVENTS_CAPACITY,
        }
    }

    /// How many ready tasks the loop runs, at most, before it polls the OS
    /// again (default 128). Tasks woken while a tick runs always wait for
    /// the next tick, whatever this is.
    ///
    /// # Panics
    ///
    /// If `n` is zero.
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
    pub fn events_capacity(&mut self, n: usize) -> &mut Self {
        assert!(n > 0, "ioloop: events_capacity must be at least 1");
        self.events_capacity = n;
        self
    }

    /// Creates the runtime.
    ///
    /// # Errors
    ///
    /// Fails if the OS refuses the epoll instance or the eventfd the
    /// runtime wakes itself through (typically `EMFILE`: no fds left).
    pub fn build(&self) -> io::Result<Runtime> {
        Runtime::from_builder(self)
    }
}

impl Default for Builder {
    fn default() -> Self {
        Self::new()
    }
}
