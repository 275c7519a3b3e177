//! `Handle`, a way into a runtime from anywhere, and the spawn functions.
//! A thread belongs to a runtime when it runs its loop, or works *for* it
//! (a blocking job, a `block_on` waiting its turn): recorded in `WORKING_FOR`.

use std::cell::RefCell;
use std::fmt;
use std::future::{Future, poll_fn};
use std::num::NonZeroU64;
use std::panic::Location;
use std::pin::Pin;
use std::sync::Arc;
// std's, not `crate::sync`'s: the flag pairs with a thread's park token,
// which loom does not model.
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll, Wake, Waker};
use std::thread::{self, Thread};

use crate::event_loop::cell::TaskCell;
use crate::event_loop::core::{self, Core, Job, Shared};
use crate::metrics::Metrics;
use crate::task::dump::Dump;
use crate::task::join::JoinHandle;

thread_local! {
    static WORKING_FOR: RefCell<Working> = const {
        RefCell::new(Working { stack: Vec::new(), next_id: 0 })
    };
}

/// The runtimes this thread works for, innermost last: one entry per live
/// [`WorkingFor`] guard.
struct Working {
    /// Each guard's id and runtime. An entry never moves while it is on the
    /// stack, so a guard finds its own by its index.
    stack: Vec<(u64, Arc<Shared>)>,
    /// The next guard's id: never reused on a thread, so a guard whose entry
    /// went (an outer guard dropped first) cannot take a newer one for it.
    next_id: u64,
}

/// A cloneable reference to a runtime, usable from any thread.
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

    /// The handle of the runtime this thread belongs to.
    ///
    /// # Panics
    ///
    /// If called outside an ioloop runtime; see
    /// [`try_current`](Self::try_current).
    #[track_caller]
    pub fn current() -> Handle {
        Self::try_current().expect("ioloop::Handle::current called outside an ioloop runtime")
    }

    /// The handle of the runtime this thread belongs to, if there is one:
    /// the one whose loop it runs; else the latest it works for: the one
    /// entered by the innermost live [`Runtime::enter`](crate::Runtime::enter)
    /// guard, or, on a blocking-pool thread during a job, the one that
    /// started the job.
    ///
    /// ```
    /// assert!(ioloop::Handle::try_current().is_none());
    /// ioloop::block_on(async { assert!(ioloop::Handle::try_current().is_some()) });
    /// ```
    pub fn try_current() -> Option<Handle> {
        core::with_core(|core| core.map(|core| core.shared.clone()))
            .or_else(|| {
                WORKING_FOR
                    .try_with(|slot| slot.borrow().stack.last().map(|(_, s)| s.clone()))
                    .ok()
                    .flatten()
            })
            .map(Handle::new)
    }

    /// Spawns `future` onto this runtime's loop, from any thread.
    ///
    /// On the loop thread this is [`spawn`]. From elsewhere the task is
    /// handed to the loop through its injection queue, waking it if it
    /// sleeps; if the runtime has shut down, the task is cancelled at once
    /// and its handle reports so.
    ///
    /// ```
    /// let rt = ioloop::Runtime::new().unwrap();
    /// let task = rt.handle().spawn(async { "hi" });
    /// assert_eq!(rt.block_on(task).unwrap(), "hi");
    /// ```
    #[doc(alias = "run_coroutine_threadsafe")]
    #[track_caller]
    pub fn spawn<F>(&self, future: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        let task = TaskCell::allocate(future, self.shared.clone(), Location::caller());
        let handle = JoinHandle::new(&task);
        core::schedule((&*self.shared, Job::Task(task.into_task())));
        handle
    }

    /// Runs `f` on this runtime's blocking pool, from any thread. See
    /// [`spawn_blocking`].
    #[track_caller]
    pub fn spawn_blocking<F, T>(&self, f: F) -> JoinHandle<T>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        // In a simulation, a job is a task of the loop's: its turn the
        // seeded scheduler's, its time the virtual clock's, the same in
        // every run of a seed (a closure that blocks holds the world up).
        let simulated = |core: &Core| Arc::ptr_eq(&core.shared, &self.shared) && core.simulated();
        if core::with_core(|core| core.is_some_and(simulated)) {
            return self.spawn(async move { f() });
        }
        // The closure dressed as a future that completes on its first poll,
        // so a blocking job is the same single-allocation task as a spawned
        // future. It runs working for its runtime.
        let mut job = Some((f, self.shared.clone()));
        let job = poll_fn(move |_| {
            let (f, shared) = job.take().expect("a blocking job runs once");
            let _working = work_for(shared, false);
            Poll::Ready(f())
        });
        let task = TaskCell::allocate(job, self.shared.clone(), Location::caller());
        let handle = JoinHandle::new(&task);
        self.shared.pool.clone().spawn(task.into_task());
        handle
    }

    /// Runs `future` to completion on this thread, working for this
    /// runtime: it can spawn, sleep and do I/O on it, and this thread parks
    /// between wakes. From a blocking job, say, or any thread of your own.
    /// A wake is kept even if the future parks and unparks this thread
    /// itself (a synchronous library called from a poll): it is recorded
    /// in the runtime's own state, not only in the thread's park token.
    ///
    /// The runtime's I/O and timers move only while some thread runs its
    /// loop ([`Runtime::block_on`](crate::Runtime::block_on)), as with
    /// tokio's current-thread runtime: with no loop running, a future that
    /// waits on them waits until one does.
    ///
    /// # Panics
    ///
    /// If called on a thread running a loop: it would stall that loop.
    ///
    /// ```
    /// let rt = ioloop::Runtime::new().unwrap();
    /// let handle = rt.handle().clone();
    /// let answer = rt.block_on(async move {
    ///     ioloop::spawn_blocking(move || handle.block_on(async {
    ///         ioloop::spawn(async { 6 * 7 }).await.unwrap()
    ///     }))
    ///     .await
    ///     .unwrap()
    /// });
    /// assert_eq!(answer, 42);
    /// ```
    #[track_caller]
    pub fn block_on<F: Future>(&self, future: F) -> F::Output {
        if core::with_core(|core| core.is_some()) {
            panic!("ioloop: Handle::block_on called on a loop's thread; await the future instead");
        }
        let never = || None::<std::convert::Infallible>;
        let Ok(output) = park_on(self.shared.clone(), std::pin::pin!(future), never);
        output
    }

    /// The runtime's live tasks: each one's id, spawn location, state
    /// (idle, scheduled, running), poll count and age, and what an idle one
    /// waits on where that is known (a source and direction, a timer, a
    /// join). From any thread, even while the loop is stuck in a poll: the
    /// stuck task shows as [`Running`](crate::task::TaskState::Running).
    /// Timer waits are known only to a dump taken on the loop's thread.
    ///
    /// It costs the loop nothing until called: the dump matches the wakers
    /// parked in the reactor, the timer heap and the join slots to the
    /// tasks they wake (see [`Dump`]). While it copies the task list (a
    /// reference per task) the loop waits if it spawns or completes a task:
    /// a dump is for a human, not for a hot path.
    #[doc(alias = "all_tasks")]
    pub fn dump(&self) -> Dump {
        crate::task::dump::take(&self.shared)
    }

    /// The runtime's id: the same for every handle to it, and no other
    /// runtime's.
    ///
    /// ```
    /// let (a, b) = (ioloop::Runtime::new().unwrap(), ioloop::Runtime::new().unwrap());
    /// assert_ne!(a.handle().id(), b.handle().id());
    /// let inside = a.block_on(async { ioloop::Handle::current().id() });
    /// assert_eq!(inside, a.handle().id());
    /// ```
    pub fn id(&self) -> RuntimeId {
        RuntimeId(self.shared.id)
    }

    /// A snapshot of the runtime's counters.
    ///
    /// ```
    /// let rt = ioloop::Runtime::new().unwrap();
    /// rt.block_on(async { ioloop::spawn(async {}).await.unwrap() });
    /// let metrics = rt.handle().metrics();
    /// assert!(metrics.jobs_run > 0);
    /// assert_eq!(metrics.live_tasks, 0);
    /// ```
    pub fn metrics(&self) -> Metrics {
        crate::metrics::snapshot(&self.shared)
    }
}

/// A runtime's id, from [`Handle::id`]: unique among the runtimes the
/// process makes, as tokio's `runtime::Id`. Opaque: only compared, hashed
/// and printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RuntimeId(NonZeroU64);

impl fmt::Display for RuntimeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl fmt::Debug for Handle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Handle").finish_non_exhaustive()
    }
}

/// Runs `future` as a new task on the runtime this thread belongs to, and
/// returns a handle to await its output.
///
/// The task starts on the loop's next tick; it runs concurrently with the
/// caller and every other task, on the same thread. Dropping the handle
/// detaches the task (it keeps running).
///
/// # A task that panics
///
/// A panic in the task is caught: its handle gives a [`JoinError`](crate::JoinError) for
/// which `is_panic` is true, and the loop and the other tasks go on. The
/// future is dropped while the panic unwinds, as tokio does, so its guards
/// see [`std::thread::panicking`] (a `std::sync::Mutex` guard poisons its
/// mutex). A destructor panicking in turn is logged, the first panic kept;
/// in an `async` block's locals it aborts the process, as in any runtime.
///
/// # Panics
///
/// If called outside an ioloop runtime: outside `block_on`, its tasks and
/// the runtime's blocking jobs. From another thread, use
/// [`Handle::spawn`].
///
/// ```
/// ioloop::block_on(async {
///     let task = ioloop::spawn(async { 6 * 7 });
///     assert_eq!(task.await.unwrap(), 42);
/// });
/// ```
#[doc(alias = "create_task")]
#[track_caller]
pub fn spawn<F>(future: F) -> JoinHandle<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    let location = Location::caller();
    // On the loop's thread, the loop found is the one to queue on: no
    // `Handle` made and dropped (two reference-count updates), no second
    // look for the loop.
    let on_loop = core::with_core(|core| match core {
        Some(core) => {
            let task = TaskCell::allocate(future, core.shared.clone(), location);
            let handle = JoinHandle::new(&task);
            core.enter(task.into_task());
            Ok(handle)
        }
        None => Err(future),
    });
    match on_loop {
        Ok(handle) => handle,
        // A blocking job working for a runtime.
        Err(future) => current("spawn").spawn(future),
    }
}

/// Runs `future`, which need not be `Send`, as a new task on the loop
/// running on this thread, and returns a handle to await its output.
///
/// This is what a single-threaded runtime can give that a work-stealing one
/// cannot: tasks sharing `Rc<RefCell<_>>` state. The task runs only on this
/// thread; its runtime refuses to run its loop on another while the task
/// lives. The [`JoinHandle`] is `Send` only if the output is. Still one
/// allocation per task. A panic in the task is caught as [`spawn`]
/// says (see "A task that panics" there).
///
/// # Panics
///
/// If this thread is not running a loop (inside `block_on` or its tasks):
/// a `!Send` future cannot be moved to the loop's thread. In a blocking
/// job, use [`spawn`] (with a `Send` future) instead.
///
/// ```
/// use std::cell::RefCell;
/// use std::rc::Rc;
///
/// ioloop::block_on(async {
///     let hits = Rc::new(RefCell::new(0));
///     let tasks: Vec<_> = (0..3)
///         .map(|_| {
///             let hits = hits.clone();
///             ioloop::spawn_local(async move { *hits.borrow_mut() += 1 })
///         })
///         .collect();
///     for task in tasks {
///         task.await.unwrap();
///     }
///     assert_eq!(*hits.borrow(), 3);
/// });
/// ```
///
/// The handle of a task with a `!Send` output cannot leave the thread:
///
/// ```compile_fail
/// fn send_away<T: Send>(_: T) {}
/// ioloop::block_on(async {
///     send_away(ioloop::spawn_local(async { std::rc::Rc::new(1) }));
/// });
/// ```
#[track_caller]
pub fn spawn_local<F>(future: F) -> JoinHandle<F::Output>
where
    F: Future + 'static,
{
    let location = Location::caller();
    core::with_core(|core| {
        core.map(|core| {
            let task = TaskCell::allocate_local(future, core.shared.clone(), location);
            let handle = JoinHandle::new(&task);
            core.enter_local(task.into_task());
            handle
        })
    })
    .expect(
        "ioloop::spawn_local called off a loop's thread: a future that is not Send can only run \
         where it was made; call it inside block_on or a task",
    )
}

/// Runs `f` on a thread of the runtime's blocking pool and returns a handle
/// to await its result, without blocking the loop.
///
/// For work that would stall every task if it ran on the loop thread: a
/// slow computation (the cookbook's `fib(n)`), a blocking library call,
/// file I/O. The closure's completion wakes the task awaiting the handle.
///
/// The closure runs working for the runtime: [`Handle::current`],
/// [`spawn`], `spawn_blocking` and sockets reach it, and a future the
/// closure polls itself can sleep and do I/O on it.
///
/// # Panics
///
/// If called outside an ioloop runtime; use [`Handle::spawn_blocking`]
/// from other threads.
///
/// # Cancellation
///
/// A closure that has started cannot be stopped. [`JoinHandle::abort`]
/// before it starts means it never runs; after, it runs to the end and its
/// result is dropped. Dropping the handle lets the closure finish.
///
/// Shutting the runtime down cancels no closure, nor waits for one: each
/// spawned before runs to completion on the pool's threads (see
/// [`Runtime`](crate::Runtime)); one spawned after is cancelled at once.
///
/// # In a simulation
///
/// A simulated runtime (`Builder::build_simulated`, as `ioloop::sim`
/// builds one) runs each job as a task on its loop's thread instead: its
/// turn comes in the seeded order of the loop's jobs, on the virtual
/// clock, so a seed replays it. A closure that blocks holds up the whole
/// simulation meanwhile, and one still waiting for its turn when the
/// runtime shuts down is dropped, as a task is.
///
/// # Errors
///
/// The handle gives a [`JoinError`](crate::JoinError) if `f` panics, if
/// the handle was aborted, if it was spawned after the runtime shut down,
/// or if no pool thread could be started to run it (the error's `source()`
/// is the OS error).
///
/// ```
/// fn fib(n: u64) -> u64 {
///     if n < 2 { n } else { fib(n - 1) + fib(n - 2) }
/// }
///
/// ioloop::block_on(async {
///     let slow = ioloop::spawn_blocking(|| fib(25));
///     // The loop is free meanwhile: other tasks run.
///     assert_eq!(ioloop::spawn(async { 1 }).await.unwrap(), 1);
///     assert_eq!(slow.await.unwrap(), 75_025);
/// });
/// ```
#[doc(alias = "run_in_executor")]
#[doc(alias = "to_thread")]
#[track_caller]
pub fn spawn_blocking<F, T>(f: F) -> JoinHandle<T>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    current("spawn_blocking").spawn_blocking(f)
}

/// The current handle, for the free function `what`.
#[track_caller]
fn current(what: &str) -> Handle {
    // Not `unwrap_or_else`: a closure would report its own line, not the
    // caller's, as the panic's location.
    match Handle::try_current() {
        Some(handle) => handle,
        None => panic!(
            "ioloop::{what} called outside an ioloop runtime: call it from inside block_on, \
             a task or a blocking job, or use the Handle's method from other threads"
        ),
    }
}

/// Makes this thread work for `shared` until the guard drops: a blocking
/// job, or a `block_on` waiting its turn. A guard made after this one and
/// still alive when it drops is the user's future's, which may outlive
/// the wait (a `block_on` whose loop comes back runs the same future on
/// the loop): it is removed silently. A `strict` guard, that of
/// [`Runtime::enter`](crate::Runtime::enter), panics if dropped out of order.
pub(crate) fn work_for(shared: Arc<Shared>, strict: bool) -> WorkingFor {
    let entry = WORKING_FOR
        .try_with(|slot| {
            let mut working = slot.borrow_mut();
            let id = working.next_id;
            working.next_id += 1;
            let index = working.stack.len();
            working.stack.push((id, shared));
            (index, id)
        })
        // Only while the thread's locals are destroyed: nothing to enter.
        .ok();
    WorkingFor { entry, strict }
}

/// Ends what [`work_for`] began: the runtime this thread worked for before
/// is current again.
///
/// Guards must be dropped in the reverse order they were made. One dropped
/// while a guard made after it is still alive (or was leaked) removes its
/// own entry and every entry above it, so no runtime is left current by
/// mistake, and then, if it is an `EnterGuard`'s, panics, as tokio's
/// `EnterGuard` does; not while the thread is already panicking. A guard
/// whose entry an outer guard already removed does nothing.
pub(crate) struct WorkingFor {
    /// Index and id of this guard's entry in [`Working::stack`].
    entry: Option<(usize, u64)>,
    /// Dropped out of order, it panics: an `EnterGuard`'s.
    strict: bool,
}

impl Drop for WorkingFor {
    fn drop(&mut self) {
        let Some((index, id)) = self.entry else {
            return;
        };
        let removed = WORKING_FOR.try_with(|slot| {
            let mut working = slot.borrow_mut();
            match working.stack.get(index) {
                Some(&(at, _)) if at == id => {
                    if working.stack.len() == index + 1 {
                        Ok(working.stack.pop())
                    } else {
                        Err(working.stack.drain(index..).collect::<Vec<_>>())
                    }
                }
                // Removed already, by an outer guard dropped first.
                _ => Ok(None),
            }
        });
        // The runtimes are released after the borrow ends: a last
        // reference's drop may run code that looks at this slot.
        if let Ok(Err(entries)) = removed {
            drop(entries);
            if self.strict && !thread::panicking() {
                panic!(
                    "ioloop: EnterGuard dropped out of order: guards from Runtime::enter must be \
                     dropped in the reverse order they were made, and a guard made after this one \
                     is still alive (or was leaked)"
                );
            }
        }
    }
}

/// Polls `future` on this thread, working for `shared`, parked between
/// wakes, until it is ready (`Ok`) or `stop`, asked after every poll and
/// every wake-up, gives something (`Err`).
///
/// A wake is recorded in the [`Unparker`], not only as the thread's park
/// token: the future may itself park and unpark its thread (a synchronous
/// library called from a poll), which consumes the token. The thread parks
/// in a loop until the flag is set or `stop` answers, so a spurious unpark,
/// or the token left by the future's own `unpark`, costs one more look,
/// never a lost wake or a poll nobody asked for. `stop` is asked before
/// parking, too, for the same reason: what it waits for (the core coming
/// home) unparks the thread, and that token may have gone to the future.
pub(crate) fn park_on<F: Future, R>(
    shared: Arc<Shared>,
    mut future: Pin<&mut F>,
    mut stop: impl FnMut() -> Option<R>,
) -> Result<F::Output, R> {
    let _working = work_for(shared, false);
    let unparker = Arc::new(Unparker {
        thread: thread::current(),
        woken: AtomicBool::new(false),
    });
    let waker = Waker::from(unparker.clone());
    let mut cx = Context::from_waker(&waker);
    loop {
        if let Poll::Ready(output) = future.as_mut().poll(&mut cx) {
            return Ok(output);
        }
        loop {
            if let Some(stopped) = stop() {
                return Err(stopped);
            }
            if unparker.woken.swap(false, Ordering::AcqRel) {
                break;
            }
            // A wake after the swap unparks us: `park` returns at once.
            thread::park();
        }
    }
}

/// Wakes a thread parked in [`park_on`]: records the wake, then unparks.
struct Unparker {
    thread: Thread,
    /// Set by a wake, cleared by `park_on` before it polls again.
    woken: AtomicBool,
}

impl Wake for Unparker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        crate::sync::lock::assert_unlocked();
        self.woken.store(true, Ordering::Release);
        self.thread.unpark();
    }
}
