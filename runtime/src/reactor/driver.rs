//! The `mio::Poll` the loop sleeps in: steps 3 and 4 of a tick.

use std::io;
use std::task::Waker;
use std::time::Duration;

use mio::{Events, Poll};

use super::entries::Dispatched;
use crate::shared::Shared;

/// The loop thread's side of the reactor.
pub(crate) struct Driver {
    poll: Poll,
    events: Events,
}

/// What one call to [`Driver::wait`] saw.
pub(crate) struct Waited {
    pub(crate) dispatched: Dispatched,
    /// Work may have been injected from another thread.
    pub(crate) notified: bool,
}

impl Driver {
    pub(crate) fn new(poll: Poll, events_capacity: usize) -> Self {
        Driver {
            poll,
            events: Events::with_capacity(events_capacity),
        }
    }

    /// Waits for I/O events for at most `timeout` (`None`: until one comes),
    /// then records them in the reactor and collects the wakers they fire.
    ///
    /// # Panics
    ///
    /// If `epoll_wait` fails with anything but `EINTR`: that means a broken
    /// epoll fd (`EBADF`, `EINVAL`), after which no I/O can make progress.
    pub(crate) fn wait(
        &mut self,
        shared: &Shared,
        timeout: Option<Duration>,
        wakers: &mut Vec<Waker>,
    ) -> Waited {
        // A wait that may block announces itself first, so a foreign wake
        // knows to write to the eventfd; if one came in meanwhile, don't block.
        let timeout = match timeout {
            Some(Duration::ZERO) => timeout,
            _ if shared.try_park() => timeout,
            _ => Some(Duration::ZERO),
        };
        match self.poll.poll(&mut self.events, timeout) {
            Ok(()) => {}
            // A signal interrupted the wait. This is the one place EINTR
            // from the poller is handled: treat it as a wake-up with no
            // events; the next tick computes a fresh timeout and waits again.
            Err(err) if err.kind() == io::ErrorKind::Interrupted => self.events.clear(),
            Err(err) => panic!("ioloop: waiting for I/O events failed: {err}"),
        }
        let notified = shared.unpark_after_poll();
        let dispatched = shared.reactor.dispatch(&self.events, wakers);
        Waited {
            dispatched,
            notified,
        }
    }
}
