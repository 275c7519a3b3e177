//! The part of a runtime that other threads can reach: the injection queue,
//! the park state, the poller's waker, the reactor's registrations and the
//! counters.
//!
//! Everything else (run queue, task list, timers, the `mio::Poll` itself)
//! belongs to the loop thread and lives in [`Core`](super::core::Core).
//!
//! # Waking a sleeping loop
//!
//! A task woken on the loop thread goes straight into the local run queue.
//! A task woken anywhere else goes into the injection queue, and then the
//! loop may need a nudge. `park` says whether it does:
//!
//! | `park` | meaning | a foreign wake... |
//! |---|---|---|
//! | `AWAKE` | the loop is running tasks or timers | sets `NOTIFIED`; no syscall |
//! | `PARKED` | the loop is in, or about to enter, a blocking `epoll_wait` | sets `NOTIFIED` and writes to mio's eventfd |
//! | `NOTIFIED` | someone already queued work since the loop last looked | nothing |
//!
//! The loop moves `AWAKE -> PARKED` with a compare-and-swap just before a
//! blocking poll; if the swap fails the state was `NOTIFIED` and it polls
//! with a zero timeout instead. After every poll it swaps back to `AWAKE`
//! and, if it finds `NOTIFIED`, drains the injection queue. Any number of
//! foreign wakes between two polls therefore cost one eventfd write at most,
//! and none at all while the loop is awake.

use std::collections::VecDeque;
use std::sync::Arc;
use std::task::Waker;

use slab::Slab;

use super::cell::Task;
use super::clock::Clock;
use super::reactor::Reactor;
use crate::base::counters::{Counters, PoolStats};
use crate::base::join_error::JoinError;
use crate::base::watch::Watch;
use crate::sync::{AtomicU8, Mutex, Ordering, PollWaker};

const AWAKE: u8 = 0;
const PARKED: u8 = 1;
const NOTIFIED: u8 = 2;

/// An entry in a run queue.
pub(crate) enum Job {
    /// The future passed to `block_on`. It lives on `block_on`'s stack, so
    /// the queue holds a marker; keeping it in the queue (rather than in a
    /// flag) keeps it in wake order with the tasks.
    Main,
    Task(Task),
}

/// Work handed to the loop from outside it.
#[derive(Default)]
pub(crate) struct Inject {
    /// Wakes and spawns from other threads, in the order they happened.
    pub(crate) queue: VecDeque<Job>,
    /// Timers armed by sleeps polled off the loop thread: deadline (in
    /// timer ticks), and the waker to fire.
    pub(crate) timers: Vec<(u64, Waker)>,
    /// Set when the runtime shuts down: from then on, a task handed in is
    /// cancelled on the spot instead of queued.
    pub(crate) closed: bool,
}

/// The loop's list of live tasks, here so another thread can read it
/// while the loop is stuck (a dump, the stall detector). Only the loop
/// changes it, when a task enters (`Core::push`) or completes; its lock is
/// uncontended but for a dump, and never held across a poll.
#[derive(Default)]
pub(crate) struct TaskList {
    pub(crate) slab: Slab<Listed>,
    /// The id the next task entered gets; ids start at 1.
    pub(crate) next_id: u64,
}

/// A task in the [`TaskList`].
pub(crate) struct Listed {
    pub(crate) task: Task,
    /// Unique in its runtime, never reused.
    pub(crate) id: u64,
    /// When it entered the list, in timer ticks, as the loop read the clock
    /// once per tick: within a tick of its spawn.
    pub(crate) born: u64,
}

impl TaskList {
    pub(crate) fn get(&self, key: usize) -> Option<&Listed> {
        self.slab.get(key)
    }
}

/// The blocking pool, as a runtime's [`Shared`] holds it: the seam between
/// the core and the pool (`blocking.rs`), which sits above it. The loop
/// asks it one thing, whether it is quiet (auto-advance of a paused clock);
/// the rest is for the layers above, which reach the pool through `Shared`.
pub(crate) trait BlockingPool: Send + Sync {
    /// Queues `job` for a pool thread; cancels it after shutdown.
    fn spawn(self: Arc<Self>, job: Task);
    /// Refuses new jobs; those accepted still run.
    fn shutdown(&self);
    /// Jobs queued, or running and without their output yet.
    fn unfinished(&self) -> usize;
    /// No job is queued or running.
    fn is_quiet(&self) -> bool;
    /// Sets the waker woken whenever the pool goes quiet.
    fn set_on_quiet(&self, waker: Option<Waker>);
    /// Threads, idle threads and queued jobs.
    fn stats(&self) -> PoolStats;
}

/// The thread-safe half of a runtime.
pub(crate) struct Shared {
    pub(crate) inject: Mutex<Inject>,
    /// Every live task the loop has taken in.
    pub(crate) tasks: Mutex<TaskList>,
    /// What the loop is polling now.
    pub(crate) watch: Watch,
    park: AtomicU8,
    waker: PollWaker,
    pub(crate) reactor: Reactor,
    pub(crate) pool: Arc<dyn BlockingPool>,
    pub(crate) counters: Counters,
    /// The runtime's clock, for threads other than the loop's.
    pub(crate) clock: Clock,
}

impl Shared {
    pub(crate) fn new(waker: PollWaker, reactor: Reactor, pool: Arc<dyn BlockingPool>) -> Self {
        Shared {
            inject: Mutex::new(Inject::default()),
            tasks: Mutex::new(TaskList::default()),
            watch: Watch::default(),
            park: AtomicU8::new(AWAKE),
            waker,
            reactor,
            pool,
            counters: Counters::default(),
            clock: Clock::default(),
        }
    }

    /// Hands `job` to the loop from another thread, waking the loop if it
    /// sleeps. After shutdown, a task handed in is cancelled instead.
    pub(crate) fn inject(&self, job: Job) {
        let mut inject = self.inject.lock();
        if inject.closed {
            drop(inject);
            // A local task is cancelled by the loop's shutdown, on its own
            // thread, never here.
            if let Job::Task(task) = job
                && !task.is_local()
            {
                task.cancel(JoinError::cancelled());
            }
            return;
        }
        inject.queue.push_back(job);
        drop(inject);
        self.unpark();
    }

    /// Hands the loop a timer, from a thread that does not run it.
    /// Fails once the runtime has shut down.
    pub(crate) fn arm_remote(&self, deadline: u64, waker: Waker) -> Result<(), Waker> {
        let mut inject = self.inject.lock();
        if inject.closed {
            return Err(waker);
        }
        inject.timers.push((deadline, waker));
        drop(inject);
        self.unpark();
        Ok(())
    }

    /// Closes the injection queue, when the runtime shuts down: from now
    /// on a task handed in is cancelled on the spot. Returns what was
    /// handed in and not yet taken.
    pub(crate) fn close(&self) -> Inject {
        let mut inject = self.inject.lock();
        let pending = std::mem::take(&mut *inject);
        inject.closed = true;
        pending
    }

    /// Makes sure the loop looks at the injection queue soon, waking it from
    /// the poller if it sleeps there.
    pub(crate) fn unpark(&self) {
        // A plain load first: while the loop is awake and already notified,
        // a storm of foreign wakes costs no read-modify-write on this line.
        if self.park.load(Ordering::Relaxed) == NOTIFIED {
            return;
        }
        if self.park.swap(NOTIFIED, Ordering::AcqRel) == PARKED {
            self.counters.poller_wakeups.add(1);
            if let Err(err) = self.waker.wake() {
                // mio's eventfd waker only fails if the eventfd is broken;
                // there is no caller to hand this to, and the loop would
                // sleep until its next timer or event.
                log::error!("failed to wake the ioloop poller: {err}");
            }
        }
    }

    /// Called by the loop before a poll that may block. Returns `false` if
    /// work was injected meanwhile, in which case the poll must not block.
    pub(crate) fn try_park(&self) -> bool {
        self.park
            .compare_exchange(AWAKE, PARKED, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    }

    /// Called by the loop on a tick that skips the poll: returns `true`, and
    /// re-arms the notification, if work was injected since the loop last
    /// looked. A plain load first keeps the common case (nothing injected)
    /// free of read-modify-writes.
    pub(crate) fn take_notified(&self) -> bool {
        self.park.load(Ordering::Relaxed) == NOTIFIED && self.unpark_after_poll()
    }

    /// Called by the loop after every poll. Returns `true` if the injection
    /// queue may hold work.
    pub(crate) fn unpark_after_poll(&self) -> bool {
        self.park.swap(AWAKE, Ordering::AcqRel) == NOTIFIED
    }
}

#[cfg(all(test, loom))]
mod loom_model;
