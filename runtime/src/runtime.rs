//! `Runtime` and `block_on`: owning a loop and running it.

use std::fmt;
use std::future::{Future, poll_fn};
use std::io;
use std::marker::PhantomData;
use std::panic::Location;
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::thread::{self, Thread};
use std::time::Duration;

use crate::blocking::{self, Pool};
use crate::clock;
use crate::event_loop::backend::{Backend, MakePick, Simulated};
use crate::event_loop::core::{self, Core, Driver, Job, Shared};
use crate::event_loop::reactor::Reactor;
use crate::event_loop::reactor::WAKER_TOKEN;
use crate::handle::{self, Handle};
use crate::stall::{self, Sentinel, Watchdog};
use crate::sync::lock::Mutex;
use crate::sync::{AtomicBool, Ordering, PollWaker};
use crate::task::dump::Dump;
use crate::task::join::JoinHandle;
use crate::time;

/// An event loop: a run queue of tasks, a timer heap and an epoll instance,
/// driven by [`block_on`](Runtime::block_on) on the calling thread.
///
/// This is asyncio's event loop, and `block_on` is `asyncio.run` (or
/// `loop.run_until_complete`). The runtime is single-threaded: every task
/// runs on the thread that calls `block_on`. Other threads reach it through
/// a [`Handle`].
///
/// `Runtime` is `Send` and `Sync`; `block_on` may be called from any
/// thread. The loop runs on one thread at a time: a second `block_on`
/// waits its turn (see [`block_on`](Runtime::block_on)). Tasks spawned while
/// no `block_on` runs wait for the next one.
///
/// Dropping the runtime drops every unfinished task's future (their
/// destructors run, their sockets close), wakes anything still waiting on
/// its timers or sources, and closes its epoll instance. The destructors
/// run with this runtime current and closed, on whatever thread drops it,
/// even inside another runtime's task (tokio panics there): what they
/// spawn is cancelled at once. Blocking jobs already spawned run to
/// completion on the pool's threads, which then exit (not waited for);
/// [`spawn_blocking`](crate::spawn_blocking) is refused from then on.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
///
/// let rt = ioloop::Runtime::new()?;
/// let answer = rt.block_on(async {
///     let task = ioloop::spawn(async {
///         ioloop::time::sleep(Duration::from_millis(1)).await;
///         42
///     });
///     task.await.unwrap()
/// });
/// assert_eq!(answer, 42);
/// # Ok::<_, std::io::Error>(())
/// ```
pub struct Runtime {
    handle: Handle,
    /// The loop's state; taken out by `block_on` while it runs.
    home: Home,
    /// The stall detector's thread, unless the threshold is `None`.
    _watchdog: Option<Watchdog>,
}

impl Runtime {
    /// Creates a runtime with the default settings.
    ///
    /// # Errors
    ///
    /// Fails if the OS refuses the epoll instance or the eventfd the
    /// runtime wakes itself through (typically `EMFILE`).
    ///
    /// # Examples
    ///
    /// ```
    /// let rt = ioloop::Runtime::new()?;
    /// assert_eq!(rt.block_on(async { 40 + 2 }), 42);
    /// # Ok::<_, std::io::Error>(())
    /// ```
    pub fn new() -> io::Result<Runtime> {
        Builder::new().build()
    }

    /// A [`Builder`] for a runtime with other settings.
    ///
    /// # Examples
    ///
    /// ```
    /// let rt = ioloop::Runtime::builder().event_interval(32).build().unwrap();
    /// assert_eq!(rt.block_on(async { "built" }), "built");
    /// ```
    pub fn builder() -> Builder {
        Builder::new()
    }

    /// Runs the loop on this thread until `future` completes, and returns
    /// its output.
    ///
    /// Tasks spawned onto the runtime run while `block_on` runs; those
    /// still unfinished when it returns resume at the next `block_on`.
    ///
    /// The loop runs on one thread at a time. If another thread is running
    /// it, this call waits its turn, as tokio's current-thread runtime
    /// does: meanwhile `future` is polled on this thread whenever it is
    /// woken (it can spawn, sleep and do I/O on this runtime, through the
    /// loop running elsewhere), and if it completes first its output is
    /// returned without this thread ever running the loop. A wake is
    /// kept even if the future parks and unparks this thread itself (a
    /// synchronous library called from a poll): it is recorded in the
    /// runtime's own state, not only in the thread's park token.
    ///
    /// # Panics
    ///
    /// - If called from inside a runtime (a task, or another `block_on`):
    ///   the inner loop would stall the outer one. Await the future instead.
    /// - If tasks spawned with [`spawn_local`](crate::spawn_local) are still
    ///   alive and belong to another thread: they can run only there.
    /// - If `future` panics: the panic propagates, and the runtime stays
    ///   usable.
    ///
    /// # Examples
    ///
    /// ```
    /// let rt = ioloop::Runtime::new().unwrap();
    /// assert_eq!(rt.block_on(async { 1 + 1 }), 2);
    /// ```
    #[doc(alias = "run_until_complete")]
    #[track_caller]
    pub fn block_on<F: Future>(&self, future: F) -> F::Output {
        refuse_nesting();
        let mut future = pin!(future);
        let core = match self.home.take_or_wait() {
            Some(core) => core,
            // Another thread runs the loop: poll `future` here each time it
            // is woken, until it completes or the core comes back.
            None => {
                let shared = self.handle.shared().clone();
                match handle::park_on(shared, future.as_mut(), || self.home.take_or_wait()) {
                    Ok(output) => {
                        self.home.stop_waiting();
                        return output;
                    }
                    Err(core) => core,
                }
            }
        };
        if let Some(home) = core.foreign_home() {
            self.home.put_back(core);
            panic!(
                "ioloop: this runtime has tasks from spawn_local, which belong to thread \
                 {home:?}; its loop can run only there until they finish"
            );
        }
        *self.handle.shared().watch.main.lock() = Some(Location::caller());
        if !core::install(core) {
            panic!("ioloop: block_on called while this thread's thread-locals are being destroyed")
        }
        let _entered = Entered { home: &self.home };
        let main = Arc::new(MainWaker {
            shared: self.handle.shared().clone(),
            woken: AtomicBool::new(true),
        });
        let waker = Waker::from(main.clone());
        let mut cx = Context::from_waker(&waker);
        core::with_core(|core| {
            let core = core.expect("entered above");
            core.push(Job::Main);
            core.run(|| {
                main.woken.store(false, Ordering::Release);
                future.as_mut().poll(&mut cx)
            })
        })
    }

    /// Makes this runtime the current one on this thread until the guard
    /// drops, without running its loop: [`spawn`](crate::spawn), sockets
    /// and sleeps reach it, and the tasks spawned run at the next
    /// `block_on`.
    ///
    /// Guards nest: the innermost live one wins, and dropping it makes the
    /// one before it current again. A loop's thread (inside `block_on` or
    /// a task) belongs to that loop's runtime whatever guards were made
    /// before the loop started.
    ///
    /// # Panics
    ///
    /// - When a guard is dropped out of order: guards must be dropped in
    ///   the reverse order they were made (as tokio's). A guard dropped
    ///   while one made after it is still alive, or was leaked with
    ///   `mem::forget`, panics, after restoring what was current before
    ///   it, so no runtime is left current by mistake. While the thread is
    ///   already panicking it restores the same way without panicking.
    /// - If called on a thread running another runtime's loop (inside its
    ///   `block_on` or a task): that loop's runtime stays current there,
    ///   so the guard could not take effect. Spawn onto this runtime
    ///   through its [`Handle`] instead. Entering the runtime whose loop
    ///   runs here is allowed, and changes nothing.
    ///
    /// # Examples
    ///
    /// ```
    /// let rt = ioloop::Runtime::new().unwrap();
    /// let task = {
    ///     let _guard = rt.enter();
    ///     ioloop::spawn(async { 5 })
    /// };
    /// assert_eq!(rt.block_on(task).unwrap(), 5);
    /// ```
    #[track_caller]
    pub fn enter(&self) -> EnterGuard<'_> {
        let shared = self.handle.shared();
        let other_loop =
            core::with_core(|core| core.is_some_and(|core| !Arc::ptr_eq(&core.shared, shared)));
        assert!(
            !other_loop,
            "ioloop: Runtime::enter called on a thread running another runtime's loop, whose \
             runtime stays current there; spawn through this runtime's Handle instead"
        );
        EnterGuard {
            _working: handle::work_for(shared.clone(), true),
            _runtime: PhantomData,
        }
    }

    /// Spawns `future` onto this runtime, from any thread, whether or not
    /// `block_on` is running. See [`Handle::spawn`].
    #[track_caller]
    pub fn spawn<F>(&self, future: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.handle.spawn(future)
    }

    /// Shuts the runtime down gracefully: runs the loop until every task
    /// has finished or `timeout` has passed, then drops what is left (as
    /// dropping the runtime does) and reports it.
    ///
    /// The timeout is wall time, whatever the runtime's clock: on a
    /// [paused](crate::time::pause) clock too, `shutdown_timeout` returns
    /// once `timeout` has really passed, even while a task keeps the loop
    /// busy or nothing would wake it (the clock still auto-advances
    /// meanwhile, so sleeping tasks wake as usual). `Duration::ZERO` polls
    /// nothing: it drops the tasks at once (reporting
    /// [`finished`](ShutdownReport::finished) only if none was left); a
    /// timeout too large to add to the clock, such as `Duration::MAX`,
    /// waits for the tasks however long they take.
    ///
    /// During the grace period the tasks run as usual and may spawn tasks
    /// and blocking jobs. Blocking jobs are not waited for (a task that
    /// awaits one's handle waits for it, of course), nor stopped: when the
    /// grace period ends, the blocking pool refuses new jobs, and every job
    /// it accepted before, running or still queued, runs to completion on
    /// the pool's threads, which then exit.
    /// [`blocking_still_running`](ShutdownReport::blocking_still_running)
    /// counts those jobs.
    ///
    /// # Panics
    ///
    /// As [`block_on`](Runtime::block_on): if called from inside a runtime.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// let rt = ioloop::Runtime::new().unwrap();
    /// let _done = rt.spawn(async { ioloop::yield_now().await });
    /// let _stuck = rt.spawn(std::future::pending::<()>());
    /// let report = rt.shutdown_timeout(Duration::from_millis(50));
    /// assert_eq!(report.cancelled_tasks, 1); // the pending one; the other finished
    /// ```
    pub fn shutdown_timeout(self, timeout: Duration) -> ShutdownReport {
        // Wall time: a paused clock, held still by a busy task, would never
        // reach a deadline of its own. `None`: no deadline at all.
        let deadline = std::time::Instant::now().checked_add(timeout);
        let finished = self.block_on(grace(deadline));
        let live = self
            .home
            .slot
            .lock()
            .core
            .as_ref()
            .map_or(0, |core| core.live_tasks());
        // Refused from now on, so the count is of exactly the jobs that
        // will still run. (Dropping the runtime shuts the pool down again,
        // which does nothing more.)
        let pool = &self.handle.shared().pool;
        pool.shutdown();
        let report = ShutdownReport {
            finished,
            cancelled_tasks: live,
            blocking_still_running: pool.unfinished(),
        };
        drop(self);
        if !finished {
            log::warn!(
                "ioloop: shutdown after {timeout:?} cancelled {} task(s)",
                report.cancelled_tasks
            );
        }
        report
    }

    /// The runtime's [`Handle`], to clone and send to other threads.
    pub fn handle(&self) -> &Handle {
        &self.handle
    }

    /// The runtime's live tasks: see [`Handle::dump`].
    pub fn dump(&self) -> Dump {
        self.handle.dump()
    }
}

impl Drop for Runtime {
    fn drop(&mut self) {
        let Some(core) = self.home.slot.get_mut().core.take() else {
            return;
        };
        let pending = self.handle.shared().close();
        // New blocking jobs are refused; those already accepted, queued or
        // running, run to completion on the pool's threads, which then
        // exit. Not waited for here.
        self.handle.shared().pool.shutdown();
        // Shut down with the core as this thread's current runtime, so a
        // destructor that spawns or sleeps finds it (and is refused
        // politely) instead of panicking, or reaching another runtime.
        core::shutdown_current(core, pending);
    }
}

/// Where a runtime's core lives while no thread runs its loop, and the
/// threads waiting for it.
#[derive(Default)]
struct Home {
    slot: Mutex<Slot>,
}

#[derive(Default)]
struct Slot {
    core: Option<Box<Core>>,
    /// Threads in `block_on` waiting for the core; unparked when it returns.
    waiting: Vec<Thread>,
}

impl Home {
    /// Takes the core if it is home; else notes that this thread waits for
    /// it, to be unparked when it comes back.
    fn take_or_wait(&self) -> Option<Box<Core>> {
        let mut slot = self.slot.lock();
        let me = thread::current();
        slot.waiting.retain(|t| t.id() != me.id());
        let core = slot.core.take();
        if core.is_none() {
            slot.waiting.push(me);
        }
        core
    }

    /// Forgets that this thread waits for the core.
    fn stop_waiting(&self) {
        let me = thread::current().id();
        self.slot.lock().waiting.retain(|t| t.id() != me);
    }

    fn put_back(&self, core: Box<Core>) {
        let waiting = {
            let mut slot = self.slot.lock();
            slot.core = Some(core);
            std::mem::take(&mut slot.waiting)
        };
        for thread in waiting {
            thread.unpark();
        }
    }
}

/// A runtime's core installed as this thread's loop; it goes back home
/// when the guard drops, even if the loop unwinds.
struct Entered<'a> {
    home: &'a Home,
}

impl Drop for Entered<'_> {
    fn drop(&mut self) {
        // Registrations polled on this thread from now on are not a task's.
        crate::base::budget::lift();
        if let Some(core) = core::uninstall() {
            self.home.put_back(core);
        }
    }
}

impl fmt::Debug for Runtime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Runtime").finish_non_exhaustive()
    }
}

/// What [`Runtime::shutdown_timeout`] found when its grace period ended.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
///
/// let rt = ioloop::Runtime::new().unwrap();
/// let _done = rt.spawn(async {});
/// let report: ioloop::ShutdownReport = rt.shutdown_timeout(Duration::from_secs(1));
/// assert!(report.finished);
/// assert_eq!(report.cancelled_tasks, 0);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ShutdownReport {
    /// Every task finished before the timeout. Blocking jobs are not
    /// waited for, and do not count here.
    pub finished: bool,
    /// Tasks still unfinished at the timeout, whose futures were dropped.
    pub cancelled_tasks: usize,
    /// Blocking jobs not finished when the report was made: those running
    /// and those still queued for a thread. They are not stopped: each runs
    /// to completion on the pool's threads, which exit after the last. A
    /// job whose handle already has its output is not counted.
    pub blocking_still_running: usize,
}

/// The grace period of [`Runtime::shutdown_timeout`], as the `block_on`
/// future: ready with `true` once no task is left, with `false` once the
/// wall-clock `deadline` has passed.
fn grace(deadline: Option<std::time::Instant>) -> impl Future<Output = bool> {
    // A thread that wakes the loop at the wall-clock deadline, unless
    // dropped first, started at the first poll that has to wait: the loop
    // cannot time the grace period itself, as its clock may be paused, and
    // a busy loop never sleeps until a deadline anyway. The wake reaches
    // the loop however busy it is, or wakes it from the poller.
    let mut alarm: Option<Sentinel<Waker>> = None;
    poll_fn(move |cx| {
        let done = core::with_core(|core| core.expect("inside block_on").poll_all_done(cx));
        if done.is_ready() {
            return Poll::Ready(true);
        }
        let Some(deadline) = deadline else {
            return Poll::Pending;
        };
        if std::time::Instant::now() >= deadline {
            return Poll::Ready(false);
        }
        if let Some(alarm) = &alarm {
            // Wakes this waker at the deadline instead, if it is another one.
            if let Some(old) = alarm.state().lock().as_mut() {
                old.clone_from(cx.waker());
            }
            return Poll::Pending;
        }
        let waker = cx.waker().clone();
        let started = Sentinel::start("ioloop-shutdown", waker, move |(slot, cancelled)| {
            let mut slot = slot.lock();
            // Until the deadline has surely passed, or the alarm is dropped.
            while slot.is_some() && std::time::Instant::now() < deadline {
                cancelled.wait_until(&mut slot, deadline);
            }
            if let Some(waker) = slot.take() {
                drop(slot);
                waker.wake();
            }
        });
        match started {
            Ok(started) => alarm = Some(started),
            Err(err) => {
                // No thread to wake the loop at the deadline: poll again at
                // once, each tick, until it passes. Costly, but it returns
                // on time.
                log::warn!("ioloop: shutdown_timeout could not start its timer thread: {err}");
                cx.waker().wake_by_ref();
            }
        }
        Poll::Pending
    })
}

/// The waker of the `block_on` future: queues `Job::Main` once per wake-up.
struct MainWaker {
    shared: Arc<Shared>,
    /// Set while a `Job::Main` is queued, so a burst of wakes queues one.
    woken: AtomicBool,
}

impl Wake for MainWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        crate::sync::lock::assert_unlocked();
        if !self.woken.swap(true, Ordering::AcqRel) {
            core::schedule((&*self.shared, Job::Main));
        }
    }
}

/// The guard of [`Runtime::enter`]; it must be dropped on the thread that
/// made it, so it is not `Send`, and guards must be dropped in the reverse
/// order they were made (see [`Runtime::enter`]'s panics).
#[must_use = "the runtime is current only while the guard lives"]
pub struct EnterGuard<'a> {
    _working: handle::WorkingFor,
    _runtime: PhantomData<(&'a Runtime, *const ())>,
}

impl fmt::Debug for EnterGuard<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EnterGuard").finish_non_exhaustive()
    }
}

/// Runs `future` to completion on a new runtime, then drops the runtime.
///
/// The entry point of an ioloop program, as `asyncio.run` is of an asyncio
/// one.
///
/// # Panics
///
/// If the runtime cannot be created (the OS refuses an epoll instance or an
/// eventfd), if called from inside a runtime, or if `future` panics.
///
/// # Examples
///
/// ```
/// let n = ioloop::block_on(async { ioloop::spawn(async { 2 }).await.unwrap() + 1 });
/// assert_eq!(n, 3);
/// ```
#[doc(alias = "run")]
#[track_caller]
pub fn block_on<F: Future>(future: F) -> F::Output {
    refuse_nesting();
    let rt = Runtime::new().unwrap_or_else(|err| panic!("ioloop: cannot create a runtime: {err}"));
    rt.block_on(future)
}

/// Panics if a loop runs on this thread: a loop inside a task would stall
/// the loop that runs the task.
#[track_caller]
fn refuse_nesting() {
    assert!(
        core::with_core(|core| core.is_none()),
        "ioloop: block_on called from inside a running runtime; it would block the loop that \
         runs this task. Use `.await` on the future, or `ioloop::spawn` it."
    );
}

/// The most events taken per poll, whatever [`Builder::events_capacity`]
/// is asked for: 768 KiB of event buffer. epoll refuses more than
/// `INT_MAX / sizeof(struct epoll_event)` (178,956,970 on Linux) with
/// `EINVAL` at every wait, and `usize::MAX` overflows the allocation; more
/// ready sources than this are picked up on the next tick anyway.
const MAX_EVENTS_CAPACITY: usize = 65_536;

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
    /// The blocking pool's settings.
    pub(crate) pool: blocking::Config,
    pub(crate) start_paused: bool,
    pub(crate) slow_poll_threshold: Option<Duration>,
    /// A seeded scheduler's seed, and what makes it (`Builder::scheduler`).
    pub(crate) scheduler: Option<(u64, MakePick)>,
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
            // Large enough that a busy loop spends little on zero-timeout
            // polls, small enough that an I/O event never waits behind
            // more than that many tasks.
            event_interval: 128,
            events_capacity: 1024,
            pool: blocking::Config {
                // Blocking jobs mostly wait (on files, name lookups, a
                // library call), so many can usefully run at once; the cap
                // stops a flood of jobs exhausting memory with stacks.
                max_threads: 512,
                // A burst of jobs reuses threads; an idle process is back
                // to no pool threads in seconds.
                keep_alive: Duration::from_secs(10),
                stack_size: None,
            },
            start_paused: false,
            // No ordinary poll (a read, a parse, a reply) comes near it; a
            // stall is noticed well before a client times out.
            slow_poll_threshold: Some(Duration::from_millis(100)),
            scheduler: None,
        }
    }

    /// How many ready tasks the loop runs, at most, before it polls the OS
    /// again (default 128). Tasks woken while a tick runs always wait for
    /// the next tick, whatever this is. `usize::MAX` polls the OS only when
    /// no task is ready (or one yields).
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
    /// 1024), at most 65,536: a larger `n` is taken as that (epoll refuses
    /// more than about 179 million at every wait, and the buffer is
    /// allocated up front). More ready sources than this are picked up on
    /// the next tick, which follows at once.
    ///
    /// # Panics
    ///
    /// If `n` is zero.
    pub fn events_capacity(&mut self, n: usize) -> &mut Self {
        assert!(n > 0, "ioloop: events_capacity must be at least 1");
        self.events_capacity = n.min(MAX_EVENTS_CAPACITY);
        self
    }

    /// The most threads the blocking pool starts (default 512); jobs beyond
    /// that wait for a free thread. With a cap above what the OS allows
    /// (`usize::MAX`), a thread the OS refuses is logged and its job waits
    /// for a running one; with none running, the queued jobs fail with the
    /// OS's error, through their handles.
    ///
    /// # Panics
    ///
    /// If `n` is zero.
    pub fn max_blocking_threads(&mut self, n: usize) -> &mut Self {
        assert!(n > 0, "ioloop: max_blocking_threads must be at least 1");
        self.pool.max_threads = n;
        self
    }

    /// How long an idle blocking-pool thread lives (default 10 s). Any
    /// duration: `ZERO` ends a thread as soon as it finds no job, one past
    /// what the clock can count (`Duration::MAX`) keeps idle threads until
    /// the runtime is dropped.
    pub fn thread_keep_alive(&mut self, keep_alive: Duration) -> &mut Self {
        self.pool.keep_alive = keep_alive;
        self
    }

    /// The stack size of blocking-pool threads (default: the standard
    /// library's, 2 MiB unless `RUST_MIN_STACK` says otherwise). Below the
    /// platform's minimum (0, 1), the minimum. A stack the OS cannot map
    /// (`usize::MAX`) is refused when a thread is started: the job fails,
    /// through its [`JoinHandle`](crate::JoinHandle), with the OS's error
    /// (see [`JoinError`](crate::JoinError)); nothing panics.
    pub fn thread_stack_size(&mut self, bytes: usize) -> &mut Self {
        self.pool.stack_size = Some(bytes);
        self
    }

    /// Whether the runtime's clock starts [paused](crate::time::pause)
    /// (default `false`): from the start, it moves only by
    /// [`advance`](crate::time::advance), or by auto-advance when the
    /// runtime has nothing else to do. For tests of code that waits on
    /// timers; `#[ioloop::test(start_paused = true)]` sets it.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use ioloop::time::{Instant, sleep};
    ///
    /// let rt = ioloop::Runtime::builder().start_paused(true).build().unwrap();
    /// let wall = std::time::Instant::now();
    /// let slept = rt.block_on(async {
    ///     let start = Instant::now();
    ///     sleep(Duration::from_secs(3600)).await;
    ///     start.elapsed()
    /// });
    /// assert_eq!(slept, Duration::from_secs(3600));
    /// assert!(wall.elapsed() < Duration::from_secs(60));
    /// ```
    pub fn start_paused(&mut self, paused: bool) -> &mut Self {
        self.start_paused = paused;
        self
    }

    /// How long one poll of a task may run before the stall detector
    /// reports it (default 100 ms); `None` turns the detector off.
    ///
    /// A poll that runs this long (a sync mutex, a CPU-bound loop, a
    /// blocking syscall) blocks every other task of the loop. A watchdog
    /// thread notices it *while it runs*, so even a poll that never returns
    /// is caught: it logs a `log` warning naming the task's id and spawn
    /// location (or the `block_on` future and where `block_on` was called),
    /// warns again each time the poll's duration doubles, logs once more
    /// when the poll returns, and counts it in
    /// [`Metrics::slow_polls`](crate::Metrics::slow_polls). The loop pays
    /// no clock read for it; the watchdog looks every half threshold, so a
    /// stall is reported one to one and a half thresholds after the poll
    /// began. asyncio's `loop.slow_callback_duration` does it after the fact.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// let rt = ioloop::Runtime::builder()
    ///     .slow_poll_threshold(Some(Duration::from_millis(20)))
    ///     .build()
    ///     .unwrap();
    /// rt.block_on(async {
    ///     // Blocks the loop: reported as a slow poll of this future.
    ///     std::thread::sleep(Duration::from_millis(100));
    /// });
    /// ```
    ///
    /// Any non-zero threshold works: one so long that no poll reaches it
    /// (`Duration::MAX`) leaves the watchdog looking once a day and never
    /// reporting.
    ///
    /// # Panics
    ///
    /// If the threshold is zero.
    pub fn slow_poll_threshold(&mut self, threshold: Option<Duration>) -> &mut Self {
        assert!(
            threshold != Some(Duration::ZERO),
            "ioloop: slow_poll_threshold must be above zero"
        );
        self.slow_poll_threshold = threshold;
        self
    }

    /// Makes every choice the loop is free to make a function of `seed`
    /// (default: none), through the scheduler `make(seed)` returns: each
    /// tick runs the jobs ready when it began in an order it picks, not
    /// the order they became ready in. Timers, I/O events, wakes and
    /// spawns all reach the loop as ready jobs, so the same seed runs a
    /// program's tasks in the same order
    /// ([`seam::schedule_hash`](crate::seam::schedule_hash) tells), and
    /// another seed tries another. Unseeded, the loop pays a branch a job.
    /// What comes from other threads (a blocking job's result) or the OS
    /// (which socket is ready) arrives when it arrives: a run replays
    /// exactly only without those, or with them simulated.
    ///
    /// The seeded scheduler is the simulation's (`ioloop::sim::Seeded`);
    /// `ioloop::sim::Seed`'s `seed` gives it here:
    ///
    /// ```
    /// use ioloop::sim::Seed;
    ///
    /// let rt = ioloop::Runtime::builder().seed(7).build().unwrap();
    /// let hash = rt.block_on(async { ioloop::sim::schedule_hash() });
    /// assert!(hash.is_some());
    /// ```
    pub fn scheduler(&mut self, seed: u64, make: MakePick) -> &mut Self {
        self.scheduler = Some((seed, make));
        self
    }

    /// Creates the runtime.
    ///
    /// # Errors
    ///
    /// Fails if the OS refuses the epoll instance or the eventfd the
    /// runtime wakes itself through (typically `EMFILE`: no fds left), or
    /// a thread for the stall detector.
    pub fn build(&self) -> io::Result<Runtime> {
        self.build_with(None)
    }

    /// Creates a runtime whose loop polls `backend` for I/O besides the
    /// OS: a simulated network (`ioloop-sim`'s, re-exported as `ioloop::sim`). Its clock starts
    /// paused whatever [`start_paused`](Self::start_paused) says: the
    /// simulation's time is virtual, and moves to the next timer or
    /// delivery whenever nothing is ready to run.
    ///
    /// # Errors
    ///
    /// As [`build`](Self::build).
    pub fn build_simulated(&self, backend: impl Backend + 'static) -> io::Result<Runtime> {
        self.build_with(Some(Box::new(backend)))
    }

    fn build_with(&self, backend: Option<Box<dyn Backend>>) -> io::Result<Runtime> {
        let poll = mio::Poll::new()?;
        let waker = PollWaker::new(poll.registry(), WAKER_TOKEN)?;
        let reactor = Reactor::new(poll.registry().try_clone()?);
        let pool = Pool::new(self.pool.clone());
        let shared = Arc::new(Shared::new(waker, reactor, pool));
        let mut driver = Driver::new(poll, self.events_capacity);
        let origin = clock::now();
        driver.sim = backend.map(|backend| Simulated {
            backend,
            origin,
            events: Vec::new(),
        });
        let simulated = driver.sim.is_some();
        let seeded = self.scheduler.map(|(seed, make)| make(seed));
        let core = Core::new(shared.clone(), driver, self.event_interval, seeded);
        if self.start_paused || simulated {
            time::pause_core(&core, origin);
        }
        let watchdog = self
            .slow_poll_threshold
            .map(|threshold| stall::watchdog(shared.clone(), threshold))
            .transpose()?;
        let home = Home::default();
        home.put_back(Box::new(core));
        Ok(Runtime {
            handle: Handle::new(shared),
            home,
            _watchdog: watchdog,
        })
    }
}

impl Default for Builder {
    fn default() -> Self {
        Self::new()
    }
}
