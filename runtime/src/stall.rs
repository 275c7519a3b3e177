//! The stall detector: a watchdog thread that reports a poll running longer
//! than the slow-poll threshold, while it runs.
//!
//! A task that blocks the loop (a sync mutex, a CPU loop, a blocking
//! syscall) stalls every other task. The loop cannot notice, since it is
//! the one stuck; so it only says what it is doing, at the cost of three
//! plain stores (and two plain loads) per poll and no clock read: before a
//! poll it stores the task's slot in the task list and an odd sequence
//! number, after the poll the next, even one (`Watch`, in `base.rs`). The
//! watchdog, one thread per runtime (none when the threshold is `None`),
//! wakes every half threshold and looks: an odd number it has already
//! seen is a poll still running. Once the same poll has been seen for a
//! whole threshold, it logs a warning naming the task's spawn location
//! and id, counts it in `Metrics::slow_polls`, warns again each time the
//! poll's duration doubles, and logs once more when the poll returns (or
//! when the runtime drops, so the program's exit loses nothing). With no
//! logger, the warnings go to stderr: the one thing the library prints.
//!
//! The watchdog reads only atomics and the shared task list; it never
//! wakes the loop or makes it do a syscall. It wakes periodically even
//! while the loop sleeps idle: sleeping until the loop polls again would
//! cost the loop a futex wake each time it leaves the poller, once per
//! echoed message in a lightly loaded server, where 20 wakes a second of
//! the watchdog cost microseconds.
//!
//! Reported durations are lower bounds: the poll started at most half a
//! threshold before the watchdog first saw it.

use std::io;
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

use crate::base::MAIN;
use crate::event_loop::core::Shared;

/// A thread that waits, on a condition variable, for its owner to drop
/// it, and is joined then: the watchdog, and `shutdown_timeout`'s alarm.
/// The state it shares with its owner is `Some` until that drop.
pub(crate) struct Sentinel<T> {
    state: Arc<(Mutex<Option<T>>, Condvar)>,
    thread: Option<JoinHandle<()>>,
}

impl<T: Send + 'static> Sentinel<T> {
    /// Starts a thread called `name`, on a small stack, that runs `run` on
    /// the shared state. Fails if the OS refuses a thread.
    pub(crate) fn start(
        name: &str,
        state: T,
        run: impl FnOnce(&(Mutex<Option<T>>, Condvar)) + Send + 'static,
    ) -> io::Result<Self> {
        let state = Arc::new((Mutex::new(Some(state)), Condvar::new()));
        let theirs = state.clone();
        let thread = thread::Builder::new()
            .name(name.into())
            .stack_size(64 * 1024)
            .spawn(move || run(&theirs))?;
        Ok(Sentinel {
            state,
            thread: Some(thread),
        })
    }

    /// The state shared with the thread.
    pub(crate) fn state(&self) -> &Mutex<Option<T>> {
        &self.state.0
    }
}

impl<T> Drop for Sentinel<T> {
    fn drop(&mut self) {
        // Dropped after the lock is released: a waker's drop may run code.
        let state = self.state.0.lock().take();
        self.state.1.notify_one();
        drop(state);
        if let Some(thread) = self.thread.take() {
            // Returns at once: the thread waits only for this drop, or a
            // deadline of its own. Joined, so no thread outlives its owner.
            let _ = thread.join();
        }
    }
}

/// The watchdog thread of one runtime; stopped and joined when dropped.
pub(crate) type Watchdog = Sentinel<()>;

/// Starts the watchdog of `shared`'s loop. Fails if the OS refuses a
/// thread.
pub(crate) fn watchdog(shared: Arc<Shared>, threshold: Duration) -> io::Result<Watchdog> {
    Sentinel::start("ioloop-watchdog", (), move |stop| {
        watch(&shared, threshold, stop)
    })
}

/// A poll the watchdog has seen running.
struct Seen {
    seq: u64,
    key: usize,
    /// When the watchdog first saw it: the poll started at most one period
    /// before.
    first: Instant,
    /// When the watchdog last saw it still running.
    last: Instant,
    /// Reported once its duration reached this; doubled at each report.
    next_report: Duration,
    /// What it was reported as, once reported.
    name: Option<String>,
}

/// The longest the watchdog sleeps between looks: a day. A threshold so
/// long that half of it would overflow the clock (`Duration::MAX`) is still
/// a threshold; the watchdog then looks once a day and never reports.
const MAX_PERIOD: Duration = Duration::from_secs(86_400);

/// The watchdog's loop.
fn watch(shared: &Shared, threshold: Duration, stop: &(Mutex<Option<()>>, Condvar)) {
    let period = (threshold / 2).clamp(Duration::from_millis(1), MAX_PERIOD);
    let mut seen: Option<Seen> = None;
    let mut running = stop.0.lock();
    loop {
        stop.1
            .wait_while_for(&mut running, |running| running.is_some(), period);
        let now = Instant::now();
        if running.is_none() {
            // The runtime is going away, often as the program exits: a
            // reported poll's end is said now or never.
            if let Some(poll) = seen {
                returned(poll, now, Duration::ZERO);
            }
            return;
        }
        let running = shared.watch.running();
        if let (Some(poll), Some((seq, _))) = (&mut seen, running)
            && poll.seq == seq
        {
            poll.last = now;
            let ran = now - poll.first;
            if ran >= poll.next_report {
                report(shared, poll, ran, threshold);
            }
            continue;
        }
        if let Some(poll) = seen.take() {
            returned(poll, now, period);
        }
        seen = running.map(|(seq, key)| Seen {
            seq,
            key,
            first: now,
            last: now,
            next_report: threshold,
            name: None,
        });
    }
}

/// Says that a reported poll has returned, `now`, having run at most
/// `slack` before the watchdog last looked.
fn returned(poll: Seen, now: Instant, slack: Duration) {
    if let Some(name) = poll.name {
        warn(format_args!(
            "ioloop: {name} returned from its slow poll after {:.1?} to {:.1?}",
            poll.last - poll.first,
            (now - poll.first).saturating_add(slack),
        ));
    }
}

/// A warning, through `log` when a logger hears warnings; otherwise on
/// stderr, as Python's logging does with its last-resort handler, so that
/// a stall is never silent. Until a logger raises it, the `log` facade's
/// level is `Off`: no logger, or every record turned off.
fn warn(message: std::fmt::Arguments<'_>) {
    if log::max_level() >= log::LevelFilter::Warn {
        log::warn!("{message}");
    } else {
        eprintln!("{message}");
    }
}

/// Logs a poll that has run for `ran` (at least), and counts it the first
/// time.
fn report(shared: &Shared, poll: &mut Seen, ran: Duration, threshold: Duration) {
    if poll.name.is_none() {
        let Some(name) = describe(shared, poll.seq, poll.key) else {
            // The poll ended while it was being looked up.
            return;
        };
        shared.counters.slow_polls.add(1);
        poll.name = Some(name);
    }
    let name = poll.name.as_deref().unwrap_or_default();
    warn(format_args!(
        "ioloop: {name} has been running one poll for {ran:.1?} (slow-poll threshold {threshold:?}); \
         no other task on its loop can run meanwhile"
    ));
    while poll.next_report <= ran && poll.next_report < Duration::MAX {
        poll.next_report = poll.next_report.saturating_mul(2);
    }
}

/// Names the task polled as number `seq` in slot `key`: its id and where
/// it was spawned. `None` if that poll is over.
fn describe(shared: &Shared, seq: u64, key: usize) -> Option<String> {
    let name = if key == MAIN {
        match *shared.watch.main.lock() {
            Some(location) => format!("the block_on future (block_on called at {location})"),
            None => "the block_on future".to_string(),
        }
    } else {
        // Copied out, to hold the lock (which the loop takes when a task
        // completes) as briefly as possible.
        let (id, location) = {
            let tasks = shared.tasks.lock();
            let listed = tasks.slab.get(key)?;
            (listed.id, listed.task.location())
        };
        format!("task #{id} (spawned at {location})")
    };
    shared.watch.still(seq).then_some(name)
}
