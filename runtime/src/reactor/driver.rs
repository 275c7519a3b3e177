//! The `mio::Poll` the loop sleeps in: step 3 of a tick.

use std::io;
use std::time::Duration;

use mio::{Events, Poll};

/// The loop thread's side of the reactor.
pub(crate) struct Driver {
    poll: Poll,
    events: Events,
}

impl Driver {
    pub(crate) fn new(poll: Poll, events_capacity: usize) -> Self {
        Driver {
            poll,
            events: Events::with_capacity(events_capacity),
        }
    }

    /// Waits for I/O events for at most `timeout` (`None`: until one
    /// comes), and returns them.
    ///
    /// # Panics
    ///
    /// If `epoll_wait` fails with anything but `EINTR`: that means a broken
    /// epoll fd (`EBADF`, `EINVAL`), after which no I/O can make progress.
    pub(crate) fn wait(&mut self, timeout: Option<Duration>) -> &Events {
        match self.poll.poll(&mut self.events, timeout) {
            Ok(()) => {}
            // A signal interrupted the wait. This is the one place EINTR
            // from the poller is handled: treat it as a wake-up with no
            // events; the next tick computes a fresh timeout and waits again.
            Err(err) if err.kind() == io::ErrorKind::Interrupted => self.events.clear(),
            Err(err) => panic!("ioloop: waiting for I/O events failed: {err}"),
        }
        &self.events
    }
}
