//! The seams a runtime's loop is driven through besides the OS: what it
//! polls for readiness beside its `mio::Poll` (`Backend`, and the
//! readiness it reports, `Ready`), which a simulation implements (the
//! `ioloop-sim` crate; a runtime gets one through
//! `Builder::build_simulated`); and which ready job runs next (`Pick`),
//! which a seeded scheduler implements (`ioloop-sim`'s `Seeded`, given
//! through `Builder::scheduler`). The core knows only these traits.

use std::time::Duration;

use mio::Token;

use super::reactor::{ERROR, READ_CLOSED, READABLE, WRITABLE, WRITE_CLOSED};

/// A seeded loop's choices: which of the jobs ready when its tick began
/// runs next, instead of the first in. Told which job was chosen and
/// which task was entered, so it can hash the order and tag the tasks.
/// `ioloop-sim`'s `Seeded` is one (see [`Builder::scheduler`](crate::Builder::scheduler)).
pub trait Pick: Send {
    /// Which of the first `ready` jobs in the run queue runs next.
    fn choose(&self, ready: usize) -> usize;
    /// The job chosen: a task's key, or `None` for `block_on`'s future.
    fn chosen(&self, task: Option<usize>);
    /// A task was entered into the task list under `key`.
    fn entered(&self, key: usize);
    /// A hash of the order the chosen jobs ran in so far.
    fn hash(&self) -> u64;
    /// The tag of the task entered under `key` (0: none).
    fn tag(&self, key: usize) -> u32;
}

/// What makes a seeded scheduler from its seed ([`Builder::scheduler`](crate::Builder::scheduler)).
pub type MakePick = fn(u64) -> Box<dyn Pick>;

/// What a simulated source became ready for, as an OS poller reports it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ready {
    /// Bytes, a datagram or a connection can be taken.
    pub readable: bool,
    /// Bytes can be sent, or a connect finished.
    pub writable: bool,
    /// The peer will send nothing more (a FIN).
    pub read_closed: bool,
    /// Nothing more can be sent (a reset, or our own shutdown).
    pub write_closed: bool,
    /// An error is pending (`take_error`).
    pub error: bool,
}

impl Ready {
    /// The reactor's bits for this readiness.
    pub(crate) fn bits(self) -> u8 {
        let bit = |set: bool, bit: u8| if set { bit } else { 0 };
        bit(self.readable, READABLE)
            | bit(self.writable, WRITABLE)
            | bit(self.read_closed, READ_CLOSED)
            | bit(self.write_closed, WRITE_CLOSED)
            | bit(self.error, ERROR)
    }
}

/// A simulated world's I/O, polled by a runtime's loop each time it polls
/// the OS, with the time on its (virtual) clock since the runtime was
/// built. Its sources register as any `mio::event::Source` does, through
/// `Registration::new`: their `register` keeps the token for `poll` to
/// report.
pub trait Backend: Send {
    /// Brings the world up to `now`, and appends each source whose
    /// readiness rose since the last call, edge-triggered as epoll's
    /// `EPOLLET` reports it, with its token.
    fn poll(&mut self, now: Duration, events: &mut Vec<(Token, Ready)>);

    /// When the world next has something to do (a delivery, a fault), on
    /// `poll`'s clock; `None` if nothing is pending. A loop with nothing to
    /// run moves its paused clock there, as it does to its next timer.
    fn next_deadline(&self) -> Option<Duration>;

    /// The loop has no job ready, no timer armed, no blocking job in
    /// flight, nothing handed in from another thread, and nothing is due
    /// here: unless another thread wakes it, it would wait forever. A harness
    /// wakes a task to report the deadlock; doing nothing lets the loop
    /// wait.
    fn stuck(&mut self);
}

/// A runtime's backend, and the clock reading its time counts from.
pub(crate) struct Simulated {
    pub(crate) backend: Box<dyn Backend>,
    /// The loop clock's reading, in ticks, when the runtime was built.
    pub(crate) origin: u64,
    /// Kept between polls, so reporting events does not allocate.
    pub(crate) events: Vec<(Token, Ready)>,
}

impl Simulated {
    /// `ticks` on the loop's clock as time since `origin`.
    pub(crate) fn since_origin(&self, ticks: u64) -> Duration {
        Duration::from_nanos(ticks.saturating_sub(self.origin))
    }

    /// The backend's next deadline, in ticks on the loop's clock.
    pub(crate) fn next_deadline(&self) -> Option<u64> {
        let next = self.backend.next_deadline()?;
        Some(
            self.origin
                .saturating_add(next.as_nanos().try_into().unwrap_or(u64::MAX)),
        )
    }
}
