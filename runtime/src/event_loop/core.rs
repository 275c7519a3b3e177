//! A runtime's loop: the state only its thread touches ([`Core`]) and the
//! tick, the half other threads reach ([`Shared`]: the injection queue,
//! the park state, the task list), and the table of homes through which
//! a thread finds a runtime by number.
//!
//! One tick (`Core::run`) is asyncio's `_run_once`, in four steps, each a
//! function: run the jobs that were ready when the tick began
//! (`run_ready`), fire the timers that are due (`fire_timers`), decide
//! whether to poll the OS and whether it may block (`decide_park`), poll it
//! and wake the waiters of what it reported (`poll_os`). One function
//! decides where a woken task is queued (`schedule`). The guide's chapter
//! on the tick walks it step by step.
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

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::io;
use std::num::NonZeroU64;
use std::rc::Rc;
use std::sync::{Arc, Weak};
use std::task::{Poll, Waker};
use std::thread::{self, ThreadId};
use std::time::Duration;

use mio::{Events, Poll as Poller};
use slab::Slab;

use super::backend::{Pick, Simulated};
use super::cell::{Schedule, Task, UNREGISTERED, wake_all};
use super::reactor::Reactor;
use super::timers::Timers;
use crate::base::{self, Counters, JoinError, Watch, budget};
use crate::clock::{Clock, ClockState, LoopClock};
use crate::joiners::Joiners;
use crate::rare::{RarePoint, rare};
use crate::sync::{AtomicU8, Mutex, Ordering, PollWaker, lock};

thread_local! {
    static CURRENT: Current = const {
        Current {
            core: RefCell::new(None),
            nested_active: Cell::new(false),
            nested: RefCell::new(Vec::new()),
        }
    };
}

thread_local! {
    /// The core whose [`Core::run`] is running on this thread, if one is:
    /// `CURRENT`'s core, found with no borrow flag or destructor state to
    /// check. The wake path's first look.
    static RUNNING: Cell<*const Core> = const { Cell::new(std::ptr::null()) };
}

/// Runs `f` with the core whose loop is running on this thread, if one is.
#[inline]
fn with_running<R>(f: impl FnOnce(Option<&Core>) -> R) -> R {
    // SAFETY: non-null only while `Core::run` runs on this thread (its
    // guard puts back what was there, even as a panic unwinds), and then
    // it is that run's `&self`: the core is alive, and only borrowed
    // shared, for the whole run, which outlasts this call.
    #[allow(unsafe_code)]
    let core = unsafe { RUNNING.get().as_ref() };
    f(core)
}

/// Sets [`RUNNING`] for one `Core::run`, and puts back what was there.
struct Running(*const Core);

impl Running {
    fn enter(core: &Core) -> Running {
        Running(RUNNING.replace(core))
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        RUNNING.set(self.0);
    }
}

/// This thread's loop, and the runtimes shutting down on it.
struct Current {
    /// The loop running on this thread, while `block_on` runs it.
    core: RefCell<Option<Box<Core>>>,
    /// `nested` is not empty: the one check a lookup of the loop pays for
    /// runtimes shutting down.
    nested_active: Cell<bool>,
    /// Runtimes dropped on this thread, innermost last, while they shut
    /// down: the innermost is the current one meanwhile, even inside a
    /// running loop (dropped from one of its tasks), whose `Box` cannot be
    /// swapped out (it is borrowed for the whole run), hence this second
    /// slot; an `Rc` so that a lookup does not hold its borrow, and a
    /// runtime dropped during another's shutdown can push itself.
    nested: RefCell<Vec<Rc<Core>>>,
}

/// Runs `f` with the core of the loop running on this thread, or `None`.
///
/// The slot is only borrowed mutably to put a core in or take it out;
/// everything in between takes shared borrows, so a task's poll can reach
/// the core while the loop that polls it also holds it.
///
/// While a runtime dropped on this thread shuts down, its core is the one
/// found (see [`shutdown_current`]).
#[inline]
pub(crate) fn with_core<R>(f: impl FnOnce(Option<&Core>) -> R) -> R {
    with_current(true, f)
}

/// [`with_core`], or with `nested` false ignoring runtimes shutting down
/// on this thread: for a wake, which only asks whether this thread runs
/// the task's loop.
#[inline(always)]
fn with_current<R>(nested: bool, f: impl FnOnce(Option<&Core>) -> R) -> R {
    let mut f = Some(f);
    // `try_with` fails only while the thread's locals are being destroyed
    // (a runtime kept in a `thread_local!` is dropped then); no loop runs.
    let found = CURRENT.try_with(|slot| {
        let f = f.take().expect("called once");
        if nested && slot.nested_active.get() {
            return with_nested(slot, f);
        }
        f(slot.core.borrow().as_deref())
    });
    found.unwrap_or_else(|_| (f.take().expect("called once"))(None))
}

/// [`with_core`] while a runtime dropped on this thread shuts down.
#[cold]
fn with_nested<R>(slot: &Current, f: impl FnOnce(Option<&Core>) -> R) -> R {
    let core = slot.nested.borrow().last().cloned();
    f(core.as_deref())
}

/// Shuts `core` down as this thread's current loop, even inside another
/// runtime's task (or `block_on` future): what its tasks' destructors spawn
/// is refused as on a closed runtime, `Handle::try_current` names it, a
/// sleep dropped disarms its timer in its own heap, not an outer loop's.
/// The outer loop, if any, is current again afterwards, even if the
/// shutdown unwinds. Not current only if this thread's locals are gone.
pub(crate) fn shutdown_current(core: Box<Core>, pending: Inject) {
    /// Takes the core back off the nested stack.
    struct Pop;

    impl Drop for Pop {
        fn drop(&mut self) {
            let popped = CURRENT.try_with(|slot| {
                let mut nested = slot.nested.borrow_mut();
                let popped = nested.pop();
                slot.nested_active.set(!nested.is_empty());
                popped
            });
            // Dropped after the borrow ends: dropping a core closes its
            // epoll fd, and may run code that looks up the loop.
            drop(popped);
        }
    }

    let core: Rc<Core> = Rc::from(core);
    let pushed = CURRENT
        .try_with(|slot| {
            slot.nested.borrow_mut().push(core.clone());
            slot.nested_active.set(true);
        })
        .is_ok();
    let _pop = pushed.then_some(Pop);
    core.shutdown(pending);
}

/// Makes `core` this thread's loop; `false` (and `core` dropped) if this
/// thread's locals are already destroyed (the thread is exiting).
pub(crate) fn install(core: Box<Core>) -> bool {
    CURRENT
        .try_with(move |slot| *slot.core.borrow_mut() = Some(core))
        .is_ok()
}

/// Takes this thread's loop out of its slot.
pub(crate) fn uninstall() -> Option<Box<Core>> {
    CURRENT.try_with(|slot| slot.core.take()).ok().flatten()
}

/// Queues `job` on its loop: the one place that decides between the local
/// run queue (this thread runs that loop) and the injection queue. Every
/// wake, spawn and `block_on` wake comes through here.
///
/// The loop running on this thread is looked at first, with no check for
/// runtimes shutting down inside it: the hot path of a wake. Only if it is
/// not `job`'s loop is the innermost runtime shutting down here looked at
/// (see [`shutdown_current`]); else the job is injected.
#[inline]
pub(crate) fn schedule<J: Queued>(job: J) -> Option<Task> {
    // Pushed (`None`: nothing to drop), or given back to look further.
    let job = with_running(|core| push_if_its_loop(core, job))?;
    if let Some(job) = with_current(false, |core| push_if_its_loop(core, job))
        && let Some(job) = with_core(|core| push_if_its_loop(core, job))
    {
        return job.inject();
    }
    None
}

/// Pushes `job` onto `core`'s run queue if `core` is its loop; else gives
/// it back.
#[inline]
fn push_if_its_loop<J: Queued>(core: Option<&Core>, job: J) -> Option<J> {
    match core {
        Some(core) if std::ptr::eq(&*core.shared, job.shared()) => {
            job.push_on(core);
            None
        }
        _ => Some(job),
    }
}

/// What [`schedule`] queues: a job for a loop, or a task cell a wake found
/// idle, queued without cloning (and dropping) its `Arc<Shared>`.
pub(crate) trait Queued: Sized {
    /// The loop it goes to.
    fn shared(&self) -> &Shared;
    /// Onto `core`'s run queue; `core` is its loop, on this thread.
    fn push_on(self, core: &Core);
    /// Into its loop's injection queue. Returns what the caller must drop
    /// once done (see [`Schedule::schedule`]).
    fn inject(self) -> Option<Task>;
}

impl Queued for (&Shared, Job) {
    fn shared(&self) -> &Shared {
        self.0
    }

    #[inline]
    fn push_on(self, core: &Core) {
        core.push(self.1);
    }

    fn inject(self) -> Option<Task> {
        self.0.inject(self.1);
        None
    }
}

/// A task a wake found idle, and its loop (borrowed from the task).
struct Woken<'a>(&'a Shared, Task);

impl Queued for Woken<'_> {
    fn shared(&self) -> &Shared {
        self.0
    }

    /// A woken task has run (it had to, to hand out a waker: a spawned task
    /// is `SCHEDULED` until its first run, so no wake queues it before), so
    /// it is in the task list already and needs none of `Core::push`'s
    /// check.
    #[inline]
    fn push_on(self, core: &Core) {
        debug_assert_ne!(self.1.key(), UNREGISTERED, "a woken task was never entered");
        core.run_queue.borrow_mut().push_back(Job::Task(self.1));
    }

    /// The loop may run the task to its end, and drop it, before this
    /// returns: a reference is kept, for the caller to drop after.
    fn inject(self) -> Option<Task> {
        let kept = self.1.clone();
        self.0.inject(Job::Task(self.1));
        Some(kept)
    }
}

impl Schedule for Shared {
    fn schedule(&self, task: Task) -> Option<Task> {
        schedule(Woken(self, task))
    }

    fn joiners(&self) -> &Joiners {
        &self.joiners
    }
}

/// Wakes `waker` once the job (task, or `block_on` future) being polled
/// on this thread returns from its poll, before the loop polls anything
/// else or waits: a source that batches (a stream's queued writes) sends
/// what one poll gave it in one call. Returns `false`, and drops `waker`,
/// if no job is being polled here (a foreign executor, or between ticks):
/// do the work now instead.
///
/// ```
/// use std::future::poll_fn;
/// use std::sync::Arc;
/// use std::sync::atomic::{AtomicBool, Ordering};
/// use std::task::{Poll, Wake, Waker};
///
/// struct Flag(AtomicBool);
/// impl Wake for Flag {
///     fn wake(self: Arc<Self>) {
///         self.0.store(true, Ordering::Relaxed);
///     }
/// }
///
/// let flag = Arc::new(Flag(AtomicBool::new(false)));
/// let waker = Waker::from(flag.clone());
/// assert!(!ioloop::io::wake_after_poll(waker.clone())); // not in a poll
/// ioloop::block_on(async {
///     poll_fn(|_| {
///         assert!(ioloop::io::wake_after_poll(waker.clone()));
///         assert!(!flag.0.load(Ordering::Relaxed)); // not yet
///         Poll::Ready(())
///     })
///     .await;
/// });
/// assert!(flag.0.load(Ordering::Relaxed));
/// ```
#[inline]
pub fn wake_after_poll(waker: Waker) -> bool {
    match STATE.with(Cell::get) {
        IDLE => false,
        POLLING => {
            LEFT.with(|left| left.set(Some(waker)));
            STATE.with(|state| state.set(LEFT_ONE));
            true
        }
        _ => {
            let first = LEFT.with(|left| left.replace(Some(waker)));
            MORE.with(|more| {
                let mut wakers = more.take();
                wakers.extend(first);
                more.set(wakers);
            });
            STATE.with(|state| state.set(LEFT_MORE));
            true
        }
    }
}

/// Takes back the first waker left by [`wake_after_poll`] in the running
/// poll, if `is_mine` says it is the caller's: for a source whose own work
/// (a flush) has since done what the wake was for. Returns whether it did.
///
/// ```
/// use std::future::poll_fn;
/// use std::task::{Poll, Waker};
///
/// ioloop::block_on(async {
///     poll_fn(|_| {
///         assert!(ioloop::io::wake_after_poll(Waker::noop().clone()));
///         // By its data pointer, as a socket finds its own: `will_wake`
///         // compares vtable addresses too, which may differ for one waker
///         // type across the crates it is inlined into.
///         assert!(ioloop::io::take_back_wake_after_poll(|w| w.data() == Waker::noop().data()));
///         Poll::Ready(())
///     })
///     .await;
/// });
/// ```
#[inline]
pub fn take_back_wake_after_poll(is_mine: impl FnOnce(&Waker) -> bool) -> bool {
    let state = STATE.with(Cell::get);
    if state != LEFT_ONE && state != LEFT_MORE {
        return false;
    }
    let first = LEFT.with(Cell::take);
    match first {
        Some(waker) if is_mine(&waker) => {
            if state == LEFT_ONE {
                STATE.with(|state| state.set(POLLING));
            }
            true
        }
        other => {
            LEFT.with(|left| left.set(other));
            false
        }
    }
}

/// Polls one job (`poll`), then wakes the wakers it left (see
/// [`wake_after_poll`]), with no budget: they do I/O for the job,
/// outside it. A panic out of `poll` wakes them too.
#[inline]
fn polled<R>(poll: impl FnOnce() -> R) -> R {
    struct Done;
    impl Drop for Done {
        #[inline]
        fn drop(&mut self) {
            match STATE.with(|state| state.replace(IDLE)) {
                LEFT_ONE | LEFT_MORE => wake_left(),
                _ => {}
            }
        }
    }
    STATE.with(|state| state.set(POLLING));
    let _done = Done;
    poll()
}

/// Wakes the wakers a job left, with no budget: they do I/O for the job,
/// outside it.
#[cold]
fn wake_left() {
    lock::assert_unlocked();
    budget::without_limit(|| {
        if let Some(first) = LEFT.with(Cell::take) {
            first.wake();
        }
        let mut more = MORE.with(Cell::take);
        more.drain(..).for_each(Waker::wake);
        // Given back empty, so the next job's wakers reuse its room.
        MORE.with(|room| room.set(more));
    });
}

/// No job is being polled on this thread.
const IDLE: u8 = 0;
/// A job is being polled, and has left no waker.
const POLLING: u8 = 1;
/// A job is being polled, and has left one waker, in `LEFT`.
const LEFT_ONE: u8 = 2;
/// A job is being polled, and has left wakers in `MORE` too (`LEFT` may
/// have been taken back).
const LEFT_MORE: u8 = 3;

thread_local! {
    /// `IDLE`, `POLLING`, `LEFT_ONE` or `LEFT_MORE`: whether
    /// [`wake_after_poll`] may leave wakers, and where any are. Thread-locals rather than
    /// fields of the core: reaching the core costs a borrow and a check,
    /// on every gathered write; and a job that leaves none touches only
    /// this one, which has nothing to drop.
    static STATE: Cell<u8> = const { Cell::new(IDLE) };
    /// The first waker the job being polled left (most leave one at most).
    static LEFT: Cell<Option<Waker>> = const { Cell::new(None) };
    /// The others, in room kept between jobs.
    static MORE: Cell<Vec<Waker>> = const { Cell::new(Vec::new()) };
}

/// Everything only the loop thread touches.
pub(crate) struct Core {
    pub(crate) shared: Arc<Shared>,
    /// Jobs ready to run, in the order they were woken.
    run_queue: RefCell<VecDeque<Job>>,
    /// When the tasks spawned in this tick were born, in timer ticks: the
    /// clock is read once per tick that spawns, not once per task.
    born: Cell<Option<u64>>,
    /// Live tasks: in the task list or about to be.
    live: Cell<usize>,
    /// A task left the task list since `shrink_tables` last looked at it.
    /// If none did, the list cannot have become sparse (entering only
    /// fills it), so the look, and its lock, are skipped.
    list_freed: Cell<bool>,
    pub(crate) timers: RefCell<Timers>,
    driver: RefCell<Driver>,
    /// Kept between runs for collecting wakers, so firing them does not
    /// allocate.
    wakers: Cell<Vec<Waker>>,
    /// Jobs run per tick at most, before the OS is polled again.
    event_interval: usize,
    /// Woken when the last task finishes (`Runtime::shutdown_timeout`).
    all_done: RefCell<Option<Waker>>,
    /// The loop's clock: its latest reading, and which clock it reads.
    pub(crate) clock: LoopClock,
    /// Jobs run since the OS was last polled.
    since_poll: Cell<usize>,
    /// Set during shutdown: new tasks are cancelled on the spot.
    closing: Cell<bool>,
    /// Live tasks made by `spawn_local`, and the thread they belong to: the
    /// loop may run only there while any live (see `cell.rs`).
    local_tasks: Cell<usize>,
    local_home: Cell<Option<ThreadId>>,
    /// This runtime's entry in the table of homes, which its timer keys
    /// name; given back when the core drops, after its timers.
    _home: Home,
    /// A seeded runtime's choices (`Builder::scheduler`); `None`: first in,
    /// first out. Boxed: an unseeded loop pays a word and a branch a job.
    pub(crate) seeded: Option<Box<dyn Pick>>,
}

impl Core {
    pub(crate) fn new(
        shared: Arc<Shared>,
        driver: Driver,
        event_interval: usize,
        seeded: Option<Box<dyn Pick>>,
    ) -> Self {
        let home = Home::register(&shared);
        Core {
            shared,
            run_queue: RefCell::new(VecDeque::new()),
            born: Cell::new(None),
            live: Cell::new(0),
            list_freed: Cell::new(false),
            timers: RefCell::new(Timers::with_home(home.0)),
            _home: home,
            driver: RefCell::new(driver),
            wakers: Cell::new(Vec::new()),
            event_interval,
            all_done: RefCell::new(None),
            clock: LoopClock::new(),
            since_poll: Cell::new(0),
            closing: Cell::new(false),
            local_tasks: Cell::new(0),
            local_home: Cell::new(None),
            seeded,
        }
    }

    /// Whether the loop is a simulation's (`Builder::build_simulated`).
    pub(crate) fn simulated(&self) -> bool {
        self.driver.borrow().sim.is_some()
    }

    /// A seeded loop's hash of the order its jobs ran in so far; `None`
    /// if it has no seed.
    pub(crate) fn schedule_hash(&self) -> Option<u64> {
        self.seeded.as_ref().map(|seeded| seeded.hash())
    }

    /// Queues a job on the loop thread; a task spawned and not yet in the
    /// task list is entered there first (cancelled if the loop is closing).
    ///
    /// Inline, and the entering out of line: a wake comes through here,
    /// and should cost a check and a push, not the prologue of a function
    /// that takes locks.
    #[inline]
    pub(crate) fn push(&self, job: Job) {
        match job {
            Job::Task(task) if task.key() == UNREGISTERED => self.enter(task),
            job => self.run_queue.borrow_mut().push_back(job),
        }
    }

    /// Enters a task just spawned into the task list and queues it; cancels
    /// it if the loop is closing.
    #[inline(never)]
    pub(crate) fn enter(&self, task: Task) {
        if self.closing.get() {
            task.cancel(JoinError::cancelled());
            return;
        }
        self.live.set(self.live.get() + 1);
        // On the runtime's clock, which a dump reads ages on.
        let born = self.born.get().unwrap_or_else(|| self.clock.state().now());
        self.born.set(Some(born));
        // The list is in `shared` so another thread can read it; its lock
        // is the loop's alone but for a dump, and never held across a poll.
        let mut list = self.shared.tasks.lock();
        list.next_id += 1;
        let id = list.next_id;
        let entry = list.slab.vacant_entry();
        task.set_key(entry.key());
        if let Some(seeded) = &self.seeded {
            seeded.entered(entry.key());
        }
        entry.insert(Listed {
            task: task.clone(),
            id,
            born,
        });
        drop(list);
        self.run_queue.borrow_mut().push_back(Job::Task(task));
    }

    /// Runs ticks until `poll_main` (the `block_on` future) is ready.
    /// `Job::Main` must already be queued.
    pub(crate) fn run<T>(&self, mut poll_main: impl FnMut() -> Poll<T>) -> T {
        // Reused for collecting wakers, so firing them does not allocate.
        let mut wakers = self.wakers.take();
        let _running = Running::enter(self);
        loop {
            // 1. Run the jobs that were ready when the tick began.
            if let Some(output) = self.run_ready(&mut poll_main) {
                self.wakers.set(wakers);
                return output;
            }
            // 2. Fire the timers that are due.
            let now = self.fire_timers(&mut wakers);
            // 3. Decide whether to poll the OS, and whether it may block.
            match self.decide_park(now) {
                // 4. Poll the OS, wake the waiters of what it reported,
                // take in what other threads handed over.
                Some(park) => self.poll_os(park, &mut wakers),
                // Jobs stay ready: only take in what was handed over, if
                // anything was.
                None if self.shared.take_notified() => self.take_injected(),
                None => {}
            }
            self.shared.counters.ticks.bump(1);
            self.publish_sizes();
        }
    }

    /// Step 1: runs the jobs that were ready when the tick began, at most
    /// `event_interval` of them; a job woken meanwhile waits for the next
    /// tick. Returns the `block_on` future's output once it is ready.
    #[inline]
    fn run_ready<T>(&self, poll_main: &mut impl FnMut() -> Poll<T>) -> Option<T> {
        self.born.set(None);
        let ready = self.run_queue.borrow().len().min(self.event_interval);
        self.shared.counters.jobs_run.bump(ready as u64);
        self.since_poll.set(self.since_poll.get() + ready);
        let seeded = self.seeded.as_deref();
        for ran in 0..ready {
            if let Some(seeded) = seeded {
                self.pick(seeded, ready - ran);
            }
            let job = self.run_queue.borrow_mut().pop_front();
            budget::reset();
            match job {
                Some(Job::Main) => {
                    self.shared.watch.start(base::MAIN);
                    let poll = polled(&mut *poll_main);
                    self.shared.watch.end();
                    if let Poll::Ready(output) = poll {
                        return Some(output);
                    }
                }
                Some(Job::Task(task)) => self.run_task(task),
                None => break,
            }
        }
        None
    }

    /// A seeded loop's one choice: moves one of the first `left` jobs, as
    /// `seeded` picks, to the front of the run queue, and tells it which.
    #[inline(never)]
    fn pick(&self, seeded: &dyn Pick, left: usize) {
        let mut queue = self.run_queue.borrow_mut();
        let chosen = seeded.choose(left.min(queue.len()));
        queue.swap(0, chosen);
        match queue.front() {
            None => {}
            Some(Job::Main) => seeded.chosen(None),
            Some(Job::Task(task)) => seeded.chosen(Some(task.key())),
        }
    }

    /// Step 2: fires the timers that are due. The clock is read only if
    /// there are timers: it is the most expensive thing in a tick that runs
    /// one small task. Returns the reading, if one was taken.
    #[inline]
    fn fire_timers(&self, wakers: &mut Vec<Waker>) -> Option<u64> {
        if self.timers.borrow().is_empty() {
            return None;
        }
        let now = self.clock.read_now();
        self.timers.borrow_mut().fire(now, wakers);
        // Each was due: their tasks may run in any order (a simulation
        // checks that nothing assumes one).
        if wakers.len() > 1 && rare(RarePoint::TimerOrder) {
            wakers.reverse();
        }
        wake_all(wakers);
        Some(now)
    }

    /// Step 3: whether to poll the OS this tick, and for how long. `None`
    /// while jobs stay ready and the OS was polled recently (fewer than
    /// `event_interval` jobs ago, and no task yielded); else the poll's
    /// timeout: zero if jobs are ready, else until the nearest timer
    /// deadline (`now` is the clock read by step 2, if it read it), else
    /// none. A poll that may block announces itself first (`try_park`), so
    /// a foreign wake knows to write to the eventfd; if one came in
    /// meanwhile, the poll does not block.
    #[inline]
    fn decide_park(&self, now: Option<u64>) -> Option<Park> {
        let busy = !self.run_queue.borrow().is_empty();
        // A task that yielded (or ran out of budget) asked to go behind
        // the next poll.
        let yielded = budget::take_yielded();
        if busy && self.since_poll.get() < self.event_interval && !yielded {
            return None;
        }
        if busy {
            return Some(Park {
                timeout: Some(Duration::ZERO),
                auto_advance: false,
            });
        }
        // About to sleep, perhaps for long: give back what a burst left
        // behind, and publish the sizes now, or another thread would read
        // the state from before this tick until the loop next wakes.
        self.shrink_tables();
        self.publish_sizes();
        let next = self.next_deadline();
        // A blocking job in flight is progress: its result may schedule
        // work, and its pool wakes the loop when it is done. Read before
        // the park below: a job that finished before the pool went quiet
        // has handed in its wake by then, and the park sees it. Only a
        // paused or simulated loop asks (it takes the pool's lock).
        let paused = self.clock.state().is_paused();
        let simulated = self.driver.borrow().sim.is_some();
        let quiet = (paused || simulated) && self.shared.pool.is_quiet();
        let mut auto_advance = false;
        let timeout = if paused {
            // A paused clock jumps to the next deadline rather than sleep
            // until it, if this zero-timeout poll finds nothing to do
            // (auto-advance, see `time/pause.rs`). Not while a blocking job
            // is in flight: the loop waits for it, the clock standing.
            auto_advance = next.is_some() && quiet;
            auto_advance.then_some(Duration::ZERO)
        } else {
            next.zip(now)
                .map(|(deadline, now)| poll_timeout(deadline, now))
        };
        let mut timeout = match timeout {
            Some(Duration::ZERO) => timeout,
            _ if self.shared.try_park() => timeout,
            _ => Some(Duration::ZERO),
        };
        // Nothing to run, no timer, nothing due, no job in flight, nothing
        // handed in (the park held): a simulation may see a deadlock here,
        // and wake a task to report it, which then runs rather than the
        // loop sleeping.
        if timeout.is_none()
            && quiet
            && let Some(sim) = &mut self.driver.borrow_mut().sim
        {
            sim.backend.stuck();
            if !self.run_queue.borrow().is_empty() {
                timeout = Some(Duration::ZERO);
            }
        }
        Some(Park {
            timeout,
            auto_advance,
        })
    }

    /// Step 4: polls the OS for at most `park.timeout`, wakes the waiters
    /// of the sources it reports ready, and takes in what other threads
    /// handed over.
    #[inline]
    fn poll_os(&self, park: Park, wakers: &mut Vec<Waker>) {
        let mut driver = self.driver.borrow_mut();
        let events = driver.wait(park.timeout);
        // Perhaps long after the tick began: tasks taken in now read the
        // clock afresh.
        self.born.set(None);
        let notified = self.shared.unpark_after_poll();
        let mut dispatched = self.shared.reactor.dispatch(events, wakers);
        if let Some(sim) = &mut driver.sim {
            let now = sim.since_origin(self.clock.now());
            sim.backend.poll(now, &mut sim.events);
            let events = sim
                .events
                .drain(..)
                .map(|(token, ready)| (token, ready.bits()));
            dispatched.events += self.shared.reactor.record(events, wakers).events;
        }
        drop(driver);
        wake_all(wakers);
        if notified {
            self.take_injected();
        }
        self.since_poll.set(0);
        self.shared.counters.io_events.bump(dispatched.events);
        self.shared.counters.stale_io_events.bump(dispatched.stale);
        if park.auto_advance && dispatched.events == 0 && self.run_queue.borrow().is_empty() {
            self.jump_to_next_deadline();
        }
    }

    /// Switches the runtime's clock (`time/pause.rs`), here and in the
    /// copy other threads read.
    pub(crate) fn set_clock(&self, clock: ClockState) {
        self.clock.set(clock);
        self.shared.clock.set(clock);
    }

    /// Auto-advance: moves a paused clock to the earliest armed timer's
    /// deadline, for the next tick to fire it.
    fn jump_to_next_deadline(&self) {
        let next = self.next_deadline();
        if let (Some(deadline), ClockState::Paused { now }) = (next, self.clock.state())
            && deadline > now
        {
            self.set_clock(ClockState::Paused { now: deadline });
        }
    }

    /// The nearest deadline: the first timer's, or a simulation's next
    /// delivery if that is sooner.
    fn next_deadline(&self) -> Option<u64> {
        let timer = self.timers.borrow().next_deadline();
        let sim = self
            .driver
            .borrow()
            .sim
            .as_ref()
            .and_then(Simulated::next_deadline);
        match (timer, sim) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Polls one task, and takes it off the task list if that completed it.
    fn run_task(&self, task: Task) {
        let key = task.key();
        let local = task.is_local();
        self.shared.watch.start(key);
        let completed = polled(|| task.run());
        self.shared.watch.end();
        if completed {
            self.completed(key, local);
        }
    }

    /// Takes a task that completed off the task list. Out of line: most
    /// polls do not complete their task, and should not pay for the locks.
    #[inline(never)]
    fn completed(&self, key: usize, local: bool) {
        if local {
            self.local_tasks.set(self.local_tasks.get() - 1);
        }
        let removed = self.shared.tasks.lock().slab.try_remove(key);
        self.list_freed.set(true);
        // Dropped after the lock is released: it may be the task's last
        // reference, and dropping a task can run arbitrary code.
        drop(removed);
        self.live.set(self.live.get() - 1);
        if self.live.get() == 0
            && let Some(waker) = self.all_done.take()
        {
            waker.wake();
        }
    }

    /// Enters a task made by `spawn_local` on this, the loop's thread,
    /// which becomes the one thread the loop may run on while it lives.
    pub(crate) fn enter_local(&self, task: Task) {
        self.local_home.set(Some(thread::current().id()));
        self.local_tasks.set(self.local_tasks.get() + 1);
        self.enter(task);
    }

    /// The thread this loop must run on, if it has live local tasks and
    /// that thread is not the calling one.
    pub(crate) fn foreign_home(&self) -> Option<ThreadId> {
        let home = self.local_home.get()?;
        (self.local_tasks.get() > 0 && home != thread::current().id()).then_some(home)
    }

    /// Spawned tasks not yet finished, counting those handed in from other
    /// threads and not yet taken in. A queued wake of a task already in the
    /// list is not a second task.
    pub(crate) fn live_tasks(&self) -> usize {
        let inject = self.shared.inject.lock();
        let spawned = |job: &&Job| matches!(job, Job::Task(task) if task.key() == UNREGISTERED);
        self.live.get() + inject.queue.iter().filter(spawned).count()
    }

    /// Ready once no spawned task is left; else wakes `cx` when the last
    /// one finishes.
    pub(crate) fn poll_all_done(&self, cx: &mut std::task::Context<'_>) -> Poll<()> {
        if self.live_tasks() == 0 {
            return Poll::Ready(());
        }
        drop(self.all_done.replace(Some(cx.waker().clone())));
        Poll::Pending
    }

    /// Moves work handed in by other threads onto the run queue, and
    /// timers armed from other threads into the heap.
    fn take_injected(&self) {
        let mut inject = self.shared.inject.lock();
        for job in inject.queue.drain(..) {
            self.push(job);
        }
        // Empty now: a burst of foreign wakes or spawns gives back what it
        // grew, as the run queue does (amortized by the pushes that grew it).
        inject.queue.shrink_to(SHRINK_MIN);
        let mut timers = self.timers.borrow_mut();
        for (deadline, waker) in inject.timers.drain(..) {
            // Fires once, which frees it; the sleep keeps no key.
            timers.insert(deadline, waker);
        }
        // A burst of timers armed (or moved, or removed) from other
        // threads must not leave its capacity behind for good.
        inject.timers.shrink_to(INJECT_TIMERS_KEPT);
    }

    /// Gives back the memory of tables a burst left mostly empty. Run when
    /// the loop goes idle, so back-to-back bursts keep their capacity.
    fn shrink_tables(&self) {
        // A server at low load goes idle after nearly every message: the
        // look costs nothing unless a task has left since the last one.
        if self.list_freed.replace(false) {
            let mut list = self.shared.tasks.lock();
            // Tasks can move: the live ones go to the front, each told its
            // new key. After a compaction the list must grow fourfold before
            // the next, so this is amortized O(1).
            let tasks = &mut list.slab;
            if tasks.capacity() > SHRINK_MIN && tasks.len() <= tasks.capacity() / 4 {
                tasks.compact(|listed, _, to| {
                    listed.task.set_key(to);
                    true
                });
            }
        }
        // Empty now (the loop is about to sleep). A burst that queued more
        // than `SHRINK_MIN` jobs pays for its regrowth with those pushes;
        // below that, `shrink_to` does nothing.
        self.run_queue.borrow_mut().shrink_to(SHRINK_MIN);
        self.timers.borrow_mut().shrink_if_sparse();
        self.shared.reactor.shrink_if_sparse();
    }

    /// Publishes the sizes of the loop's own tables for the metrics (the
    /// counters live in `shared.counters` already).
    fn publish_sizes(&self) {
        let c = &self.shared.counters;
        c.live_tasks.set(self.live.get() as u64);
        let timers = self.timers.borrow();
        c.live_timers.set(timers.len() as u64);
        c.timer_heap_len.set(timers.heap_len() as u64);
    }

    /// Drops every task's future, wakes everyone still waiting on a timer
    /// or an I/O source, and refuses new work. Called when the runtime is
    /// dropped, with `pending` what was left in the injection queue.
    pub(crate) fn shutdown(&self, pending: Inject) {
        self.closing.set(true);
        // A task spawned from another thread and never taken in is only
        // here, and entering it now cancels it; the rest are in the task
        // list, handled below.
        pending.queue.into_iter().for_each(|job| self.push(job));
        // A future's destructor may wake or spawn; spawns are cancelled at
        // once (`closing`), so this ends. Local tasks away from their home
        // thread cannot be dropped here: their futures are leaked.
        let away = self.foreign_home().is_some();
        if away {
            log::error!(
                "ioloop: a runtime with spawn_local tasks was dropped away from their \
                 thread; their futures are leaked, not dropped"
            );
        }
        loop {
            let tasks = std::mem::take(&mut self.shared.tasks.lock().slab);
            if tasks.is_empty() {
                break;
            }
            for (_, Listed { task, .. }) in tasks {
                if away && task.is_local() {
                    task.abandon();
                } else {
                    task.cancel(JoinError::cancelled());
                }
            }
        }
        self.local_tasks.set(0);
        self.live.set(0);
        // Whoever still waits on a timer or a source (a future polled from
        // outside this runtime's tasks) is woken, to find the runtime gone
        // rather than to wait forever.
        let mut wakers = self.timers.borrow_mut().clear();
        wakers.extend(pending.timers.into_iter().map(|(_, waker)| waker));
        self.shared.reactor.shutdown(&mut wakers);
        wake_all(&mut wakers);
        // The cancelled tasks' stale entries, and whatever those wakes queued.
        drop(self.run_queue.take());
        // The metrics outlive the runtime (a `Handle` keeps them): they
        // show the empty tables, not the last tick's.
        self.publish_sizes();
    }
}

/// How step 4 polls the OS, as step 3 decided.
struct Park {
    /// `None`: until an event comes.
    timeout: Option<Duration>,
    /// A paused clock jumps to the next deadline if the poll finds nothing
    /// to do.
    auto_advance: bool,
}

/// The `mio::Poll` the loop sleeps in (step 4 of the tick).
pub(crate) struct Driver {
    poll: Poller,
    events: Events,
    /// A simulation polled besides the OS (`Builder::build_simulated`).
    pub(crate) sim: Option<Simulated>,
}

impl Driver {
    pub(crate) fn new(poll: Poller, events_capacity: usize) -> Self {
        Driver {
            poll,
            events: Events::with_capacity(events_capacity),
            sim: None,
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

/// Room kept in the injection queue's list of timers after a burst (24
/// bytes each).
const INJECT_TIMERS_KEPT: usize = 256;

/// Below this many slots a table is never shrunk: not worth the pass.
const SHRINK_MIN: usize = 1024;

/// The poll timeout that ends at `deadline`, in whole milliseconds rounded
/// up: epoll counts milliseconds, and rounding a 300 µs wait down to 0 would
/// spin the loop until the deadline.
fn poll_timeout(deadline: u64, now: u64) -> Duration {
    // In u64 nanoseconds, not `Duration`'s u128: this runs every time the
    // loop goes idle with a timer armed.
    const MAX_MILLIS: u64 = 24 * 3600 * 1000;
    let millis = deadline.saturating_sub(now).div_ceil(1_000_000);
    Duration::from_millis(millis.clamp(1, MAX_MILLIS))
}

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
    /// When it entered the list, in timer ticks on the runtime's clock
    /// (virtual once paused), as the loop read it once per tick: within a
    /// tick of its spawn.
    pub(crate) born: u64,
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
    fn stats(&self) -> [usize; 3];
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
    /// Unique among the process's runtimes: `Handle::id`.
    pub(crate) id: NonZeroU64,
    /// The wakers of the `JoinHandle`s waiting for this runtime's tasks.
    joiners: Joiners,
}

/// A new runtime's id: one more than the last (std's atomic, not loom's:
/// a static, and no ordering to check).
fn next_id() -> NonZeroU64 {
    static LAST: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let id = LAST.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
    NonZeroU64::new(id).expect("2^64 runtimes made")
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
            id: next_id(),
            joiners: Joiners::default(),
        }
    }

    /// Hands `job` to the loop from another thread, waking the loop if it
    /// sleeps. After shutdown, a task handed in is cancelled instead.
    pub(crate) fn inject(&self, job: Job) {
        let refused = self.hand_in(job, |inject, job| inject.queue.push_back(job));
        // A local task is cancelled by the loop's shutdown, on its own
        // thread, never here.
        if let Err(Job::Task(task)) = refused
            && !task.is_local()
        {
            task.cancel(JoinError::cancelled());
        }
    }

    /// Hands the loop a timer, from a thread that does not run it.
    /// Fails once the runtime has shut down.
    pub(crate) fn arm_remote(&self, deadline: u64, waker: Waker) -> Result<(), Waker> {
        self.hand_in(waker, |inject, waker| inject.timers.push((deadline, waker)))
    }

    /// Puts `work` in the injection queue with `push` and wakes the loop if
    /// it sleeps; gives it back once the runtime has shut down.
    fn hand_in<T>(&self, work: T, push: impl FnOnce(&mut Inject, T)) -> Result<(), T> {
        let mut inject = self.inject.lock();
        if inject.closed {
            return Err(work);
        }
        push(&mut inject, work);
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
        if self.park.load(Ordering::Relaxed) != NOTIFIED
            && self.park.swap(NOTIFIED, Ordering::AcqRel) == PARKED
        {
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

// The table of homes: every runtime with timers, by number, weakly. A
// timer's key names the runtime whose heap holds it (see `timers.rs`). A
// thread that is not that runtime's loop, holding a `Sleep` it moves
// earlier or drops, looks the runtime up here to hand its loop the move or
// the removal.

/// The runtimes that hold timers, by home number (index plus one), weakly:
/// how a thread that is not a loop's own reaches the loop of a timer it
/// holds the key of (a `Sleep` moved earlier from there). Touched when a
/// runtime is built or dropped, and by such a move; never by the loop.
static HOMES: lock::Mutex<Slab<Weak<Shared>>> = lock::Mutex::new(Slab::new());

/// A runtime's entry in [`HOMES`], for as long as its core lives: the
/// number its timer keys carry.
struct Home(u32);

impl Home {
    /// Enters `shared` in the table.
    fn register(shared: &Arc<Shared>) -> Home {
        let index = HOMES.lock().insert(Arc::downgrade(shared));
        Home(u32::try_from(index + 1).expect("fewer than 4 billion runtimes"))
    }
}

impl Drop for Home {
    fn drop(&mut self) {
        let mut homes = HOMES.lock();
        homes.remove(self.0 as usize - 1);
        // Give the table back once the last runtime is gone, so a process
        // that builds runtimes one at a time keeps none of it.
        if homes.is_empty() {
            *homes = Slab::new();
        }
    }
}

/// The runtime numbered `home` (a timer key's), if it still runs.
pub(crate) fn home(home: u32) -> Option<Arc<Shared>> {
    let index = usize::try_from(home).ok()?.checked_sub(1)?;
    HOMES.lock().get(index)?.upgrade()
}

#[cfg(all(test, loom))]
mod loom_model;

#[cfg(test)]
mod tests {
    use std::io;

    use mio::{Interest, Registry, Token};

    use super::*;
    use crate::io::Registration;

    /// A source with no fd: the reactor gives it an entry, epoll never
    /// sees it.
    struct NoFd;

    impl mio::event::Source for NoFd {
        fn register(&mut self, _: &Registry, _: Token, _: Interest) -> io::Result<()> {
            Ok(())
        }
        fn reregister(&mut self, _: &Registry, _: Token, _: Interest) -> io::Result<()> {
            Ok(())
        }
        fn deregister(&mut self, _: &Registry) -> io::Result<()> {
            Ok(())
        }
    }

    /// What the loop does when it goes idle (called directly: waiting for
    /// the loop to go idle would depend on the clock).
    fn go_idle() {
        with_core(|core| core.expect("inside block_on").shrink_tables());
    }

    /// The task list's and the source table's allocated slots.
    fn capacities() -> (usize, usize) {
        with_core(|core| {
            let core = core.expect("inside block_on");
            (
                core.shared.tasks.lock().slab.capacity(),
                core.shared.reactor.capacity(),
            )
        })
    }

    /// `epoll_wait` failing with anything but `EINTR` means a broken epoll
    /// fd, after which no I/O can make progress: the wait panics, naming
    /// it, rather than taking it for a wake and failing again at once, for
    /// ever. (`EINTR` itself is a wake: tests/signal/wake.rs.)
    #[test]
    fn a_wait_that_fails_for_any_reason_but_a_signal_panics() {
        use std::os::fd::AsRawFd;

        let mut driver = Driver::new(Poller::new().unwrap(), 16);
        let fd = driver.poll.as_raw_fd();
        let null = std::fs::File::open("/dev/null").unwrap();
        // SAFETY: `fd` is the driver's own and open; `dup2` makes it a
        // duplicate of /dev/null in one step, so its number is never free
        // for another thread's file meanwhile. No memory is involved.
        #[allow(unsafe_code)]
        let dup = unsafe { libc::dup2(null.as_raw_fd(), fd) };
        assert_eq!(dup, fd);
        let panic = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            driver.wait(Some(Duration::ZERO));
        }))
        .expect_err("a wait on a file that is not an epoll instance returned");
        let text = panic.downcast_ref::<String>().cloned().unwrap_or_default();
        assert!(
            text.starts_with("ioloop: waiting for I/O events failed"),
            "{text}"
        );
    }

    /// `RUNNING`, the wake path's first look, is the running loop's core
    /// while its `block_on` runs and nothing once it returns, or once a
    /// panic unwinds out of it: a pointer left behind would dangle once
    /// the runtime is dropped.
    #[test]
    fn running_is_the_loop_only_while_it_runs() {
        assert!(RUNNING.get().is_null());
        let rt = crate::Runtime::new().unwrap();
        rt.block_on(async {
            let running = RUNNING.get();
            with_core(|core| assert!(std::ptr::eq(running, core.expect("inside block_on"))));
        });
        assert!(RUNNING.get().is_null());
        let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            rt.block_on(async { panic!("out of block_on on purpose") })
        }));
        assert!(unwound.is_err());
        assert!(RUNNING.get().is_null());
    }

    /// How many `JoinHandle`s wait for this runtime's tasks (their wakers in
    /// the table of joiners).
    fn joiners_waiting() -> usize {
        with_core(|core| core.expect("inside block_on").shared.joiners().waiting())
    }

    /// The table of joiners, with accounting: 1,000 handles wait at once
    /// (one entry each), each way out of a wait takes its entry (the task
    /// completing, aborted, or its handle dropped while it waits), a handle
    /// polled again keeps one entry, and a task that finished before its
    /// handle looked never takes one. Churned twice: the second round
    /// starts from an empty table.
    #[test]
    fn every_waiting_join_handle_has_one_entry_and_every_way_out_takes_it() {
        use std::future::{Future, poll_fn};
        use std::pin::Pin;
        use std::task::Poll;

        let rt = crate::Runtime::new().unwrap();
        rt.block_on(async {
            for _ in 0..2 {
                assert_eq!(joiners_waiting(), 0);
                let gate = Rc::new(Cell::new(false));
                let mut handles: Vec<_> = (0..1_000)
                    .map(|i| {
                        let gate = gate.clone();
                        crate::spawn_local(async move {
                            while !gate.get() {
                                crate::yield_now().await;
                            }
                            i
                        })
                    })
                    .collect();
                // Polled twice each (a spurious wake): one entry each.
                for _ in 0..2 {
                    poll_fn(|cx| {
                        for handle in &mut handles {
                            assert!(Pin::new(handle).poll(cx).is_pending());
                        }
                        Poll::Ready(())
                    })
                    .await;
                }
                assert_eq!(joiners_waiting(), 1_000);
                // A third aborted, a third dropped while waiting, a third
                // run to their end.
                let dropped: Vec<_> = handles.drain(600..).collect();
                drop(dropped);
                assert_eq!(joiners_waiting(), 600);
                for handle in &handles[300..] {
                    handle.abort();
                }
                gate.set(true);
                let mut sum = 0;
                for (i, handle) in handles.into_iter().enumerate() {
                    match handle.await {
                        Ok(value) => sum += value,
                        Err(error) => assert!(i >= 300 && error.is_cancelled()),
                    }
                }
                assert_eq!(sum, (0..300).sum::<usize>());
                assert_eq!(joiners_waiting(), 0);
                assert_eq!(crate::Handle::current().metrics().live_tasks, 0);

                // Finished before its handle looked: no entry at all.
                let mut done = crate::spawn(async { 7 });
                crate::yield_now().await;
                crate::yield_now().await;
                poll_fn(|cx| {
                    assert!(matches!(Pin::new(&mut done).poll(cx), Poll::Ready(Ok(7))));
                    assert_eq!(joiners_waiting(), 0);
                    Poll::Ready(())
                })
                .await;
            }
        });
    }

    /// Item 12 of the correctness issue: the tables kept their peak size
    /// forever. Once a burst is over and the loop goes idle, they shrink.
    #[test]
    fn tables_a_burst_left_mostly_empty_shrink_when_the_loop_goes_idle() {
        let rt = crate::Runtime::new().unwrap();
        rt.block_on(async {
            let tasks: Vec<_> = (0..10_000)
                .map(|_| crate::spawn(crate::yield_now()))
                .collect();
            let sources: Vec<_> = (0..10_000)
                .map(|_| Registration::new(NoFd).unwrap())
                .collect();
            // A long-lived task and source, at the end of their tables.
            let keeper = crate::spawn(std::future::pending::<()>());
            let source = Registration::new(NoFd).unwrap();
            let (peak_tasks, peak_sources) = capacities();
            assert!(peak_tasks > 10_000 && peak_sources > 10_000);
            for task in tasks {
                task.await.unwrap();
            }
            drop(sources);
            go_idle();
            let (tasks, sources) = capacities();
            assert!(tasks <= 16, "task list: {tasks} slots");
            // The long-lived source cannot move (its key is in its token):
            // only the free entries after it could go.
            assert!(sources > 10_000, "source table: {sources} entries");
            // The long-lived task was moved and told its new key: it still
            // runs to its end and leaves the list.
            keeper.abort();
            assert!(keeper.await.unwrap_err().is_cancelled());
            crate::yield_now().await;
            assert_eq!(crate::Handle::current().metrics().live_tasks, 0);
            // With the last entry free, the table shrinks at the next idle
            // moment, once a quarter of it has been freed since the last
            // pass.
            drop(source);
            let more: Vec<_> = (0..3_000)
                .map(|_| Registration::new(NoFd).unwrap())
                .collect();
            drop(more);
            go_idle();
            let (_, sources) = capacities();
            assert!(sources <= 16, "source table: {sources} entries");
        });
    }

    /// The source table shrinks only once at most a quarter of it is live:
    /// 2,048 entries, the first 511, 512 or 513 kept and the rest freed.
    /// (Live entries cannot move, so at more than a quarter a shrink would
    /// copy most of the table to give back little.)
    #[test]
    fn the_source_table_shrinks_at_a_quarter_live_and_not_above() {
        for (kept, shrinks) in [(511, true), (512, true), (513, false)] {
            let rt = crate::Runtime::new().unwrap();
            rt.block_on(async {
                let before = core_sources();
                let mut sources: Vec<_> = (before..2048)
                    .map(|_| Registration::new(NoFd).unwrap())
                    .collect();
                assert_eq!(capacities().1, 2048, "a table of 2,048 entries");
                drop(sources.split_off(kept - before));
                go_idle();
                let (_, capacity) = capacities();
                assert_eq!(capacity < 2048, shrinks, "{kept} kept: {capacity} entries");
            });
        }
    }

    /// Sources the runtime registered itself.
    fn core_sources() -> usize {
        with_core(|core| core.expect("inside block_on").shared.reactor.len())
    }

    #[test]
    fn poll_timeout_rounds_up_and_never_to_zero() {
        let now = 1_000_000_000u64;
        let ms = |n| Duration::from_millis(n);
        let later = |d: Duration| now + d.as_nanos() as u64;
        assert_eq!(poll_timeout(later(Duration::from_micros(300)), now), ms(1));
        assert_eq!(poll_timeout(later(Duration::from_micros(1001)), now), ms(2));
        assert_eq!(poll_timeout(later(ms(5)), now), ms(5));
        assert_eq!(poll_timeout(now, now), ms(1));
        assert_eq!(
            poll_timeout(later(ms(1) * 100_000_000), now),
            ms(24 * 3600 * 1000)
        );
    }
}
