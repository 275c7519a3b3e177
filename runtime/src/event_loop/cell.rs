//! One spawned task: its state bits, its future and, later, its output, in a
//! single allocation.
//!
//! A task is an `Arc<TaskCell<F, S>>`. The same `Arc` is the task's waker
//! (`std::task::Wake`), and, as a [`Task`] (the `Arc` as one thin pointer,
//! whose type the task's [`Header`] knows), its entry in a run queue, in
//! the runtime's list of live tasks and in its `JoinHandle`. Spawning
//! allocates once; waking clones the `Arc` at most, which never allocates.
//!
//! The task knows nothing of the loop: waking it hands it to its scheduler
//! `S` ([`Schedule`]), which decides where it queues. A task's life has
//! three verbs: it is *run* (polled), *cancelled* (its future dropped), and
//! *completed* (its output stored and its joiner woken) by either.
//!
//! The future, and later the output, sit in `stage`, which has no lock:
//! the state word says who owns it. Before the task completes, whoever
//! holds `RUNNING` does: the loop while it polls or drops the future (a
//! blocking job's pool thread, for a blocking task), or a `cancel` from
//! another thread that found the task idle. After `COMPLETE`, the
//! `JoinHandle` does, until it takes the output or goes; whichever of
//! `COMPLETE` and `DETACHED` is set second drops an output nobody took.
//! Taking and giving back `RUNNING` is one atomic operation each, where a
//! lock was two (2026-12-02: three fewer read-modify-writes per spawned
//! task, one fewer per poll). The `unsafe`, counted: 4 `unsafe impl`
//! (`Send` and `Sync` for the cell and for `Task`), 3 `unsafe fn` and 17
//! `unsafe` blocks: reaching the stage (`with_stage`, whose callers each
//! say why they own it) and the join waker (under `JOIN_LOCK`), and
//! pinning the future in place, which is what
//! lets it live in the task's own allocation instead of a second `Box`;
//! a `Task`'s reference counting, through the `Arc` it stands for; and
//! handing the `JoinHandle` its output through a pointer of its type
//! (`poll_join`).
//!
//! Wakers and destructors are user code. The loop calls them in many places
//! (after I/O events, when timers fire, when a task completes); a panic in
//! any of them is logged and the loop goes on, as Tornado logs an exception
//! raised by a handler and keeps serving: `wake_quietly`, `wake_all` and
//! `drop_quietly` at the end of this file.

use std::future::Future;
use std::panic::{AssertUnwindSafe, Location, catch_unwind};
use std::pin::Pin;
use std::ptr::NonNull;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

use crate::base::{JoinError, describe, set_waker};
use crate::sync::{AtomicUsize, Ordering, UnsafeCell};

/// The task is in a run queue (local or injected), or about to be put there.
/// Set by whoever wakes the task first; cleared by the loop just before it
/// polls the task. A wake that finds it set does nothing: that is what makes
/// a burst of wakes cost one queue entry.
const SCHEDULED: usize = 1 << 0;
/// The future is gone: it returned `Ready`, panicked, or was cancelled. The
/// output (if anyone wants it) is in `stage`. Never cleared.
const COMPLETE: usize = 1 << 1;
/// `abort()` was called. The loop drops the future the next time it picks
/// the task up, unless the task completes first.
const CANCELLED: usize = 1 << 2;
/// The `JoinHandle` was dropped: nobody will read the output, so whoever
/// sets the second of `COMPLETE` / `DETACHED` drops it. Also set when the
/// handle takes the output, so that its drop, which nearly always follows,
/// finds nothing to do.
const DETACHED: usize = 1 << 3;
/// Spawned by `spawn_local`: its future (and perhaps its output) need not
/// be `Send`, so the loop must only ever poll or drop it on its home thread
/// (see the `Send` impl below). Never changes.
const LOCAL: usize = 1 << 4;
/// A `JoinHandle` has left a waker in `join_waker`. Set after the waker is
/// in its slot, in the same word as `COMPLETE`, so that `complete` and the
/// handle each see the other's bit: only a task whose handle is waiting
/// takes the slot's lock when it completes (most are detached, or joined
/// after they finish). Never cleared.
const JOINING: usize = 1 << 5;
/// Someone owns `stage` to poll or drop the future: the loop (or a pool
/// thread, for a blocking task) in `run`, or a `cancel`. Set and cleared
/// by the same thread, never while `COMPLETE` is set; a `cancel` that finds
/// it set leaves the future to its owner, who sees `CANCELLED` when it lets
/// go and drops the future then.
const RUNNING: usize = 1 << 6;
/// The lock of `join_waker`: held for a few instructions at a time (no
/// user code but a waker's `clone` and `will_wake`), by the `JoinHandle`,
/// the task completing, or a dump. A bit of the state word rather than a
/// mutex beside it keeps a task 8 bytes smaller, which is what fits the
/// task of a small future in a 96-byte block instead of a 112-byte one.
const JOIN_LOCK: usize = 1 << 7;

/// The state word holds the bits above in its low `KEY_SHIFT` bits and the
/// task's slot in the loop's task list above them: one word instead of two
/// keeps a spawned task 8 bytes smaller.
const KEY_SHIFT: u32 = 8;
const BITS_MASK: usize = (1 << KEY_SHIFT) - 1;

/// `key` of a task that was spawned from another thread and has not been
/// entered into the loop's task list yet (every key bit set).
pub(crate) const UNREGISTERED: usize = usize::MAX >> KEY_SHIFT;

/// A spawned task, as a scheduler, the task list and a handle see it,
/// whatever its future's type: one thin pointer, owning one reference.
///
/// An `Arc<dyn Runnable>` would do the same in two words (the pointer and
/// the vtable's); a task lives in its run queue, the task list and its
/// `JoinHandle` at once, so keeping the vtable's word in the task itself
/// ([`Header`]) instead is 24 bytes less per task (2026-12-03).
pub(crate) struct Task(NonNull<Header>);

/// The first field of every task (which is `#[repr(C)]`), so that a pointer
/// to a task is a pointer to its header: how a [`Task`] finds its type,
/// and reads its state (its key, whether it is done) with no call through
/// the type.
pub(crate) struct Header {
    /// State bits, and the task-list key above them.
    state: AtomicUsize,
    /// Makes a pointer to this header (the task) a `dyn Runnable` one.
    widen: fn(*const Header) -> *const dyn Runnable,
}

impl Header {
    /// Spawned by `spawn_local`: run and cancel only on its home thread.
    pub(crate) fn is_local(&self) -> bool {
        self.state.load(Ordering::Relaxed) & LOCAL != 0
    }

    /// The task's slot in the loop's task list.
    pub(crate) fn key(&self) -> usize {
        self.state.load(Ordering::Relaxed) >> KEY_SHIFT
    }

    /// Records the task's slot in the loop's task list: when it enters the
    /// list, and when the list is compacted.
    pub(crate) fn set_key(&self, key: usize) {
        // Only the loop thread sets the key bits; wakers may be changing the
        // state bits concurrently, and keep their changes.
        debug_assert!(key < UNREGISTERED);
        let _ = self
            .state
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |s| {
                Some((s & BITS_MASK) | (key << KEY_SHIFT))
            });
    }

    /// Queued to run (`SCHEDULED`), and not complete.
    pub(crate) fn is_scheduled(&self) -> bool {
        self.state.load(Ordering::Relaxed) & (SCHEDULED | COMPLETE) == SCHEDULED
    }

    /// The future is gone.
    pub(crate) fn is_complete(&self) -> bool {
        self.state.load(Ordering::Acquire) & COMPLETE != 0
    }
}

/// [`Header::widen`] for a `TaskCell<F, S>`.
fn widen<F, S>(header: *const Header) -> *const dyn Runnable
where
    F: Future + 'static,
    S: Schedule,
{
    header.cast::<TaskCell<F, S>>() as *const dyn Runnable
}

impl Task {
    /// Takes over `cell`'s reference.
    pub(crate) fn new<F, S>(cell: Arc<TaskCell<F, S>>) -> Task
    where
        F: Future + 'static,
        S: Schedule,
    {
        // `header` is the cell's first field, at its start (`#[repr(C)]`).
        Task(NonNull::from(&cell.header).cast::<Header>()).adopt(cell)
    }

    /// `self`, having forgotten `cell` (whose reference it now owns).
    fn adopt<T>(self, cell: Arc<T>) -> Task {
        debug_assert_eq!(
            Arc::as_ptr(&cell).cast::<Header>(),
            self.0.as_ptr().cast_const()
        );
        let _ = Arc::into_raw(cell);
        self
    }

    /// The task's header.
    #[inline]
    pub(crate) fn header(&self) -> &Header {
        // SAFETY: `self` owns a reference, so the task (and its header) is
        // alive while `self` is.
        #[allow(unsafe_code)]
        unsafe {
            self.0.as_ref()
        }
    }

    /// See [`Header::is_local`].
    pub(crate) fn is_local(&self) -> bool {
        self.header().is_local()
    }

    /// See [`Header::key`].
    pub(crate) fn key(&self) -> usize {
        self.header().key()
    }

    /// See [`Header::set_key`].
    pub(crate) fn set_key(&self, key: usize) {
        self.header().set_key(key);
    }

    /// See [`Header::is_scheduled`].
    pub(crate) fn is_scheduled(&self) -> bool {
        self.header().is_scheduled()
    }

    /// See [`Header::is_complete`].
    pub(crate) fn is_complete(&self) -> bool {
        self.header().is_complete()
    }

    /// The task as a `dyn Runnable` pointer, to the `Arc`'s data.
    fn wide(&self) -> *const dyn Runnable {
        (self.header().widen)(self.0.as_ptr())
    }

    /// The `Arc` this `Task` stands for, taking over its reference.
    fn into_arc(self) -> Arc<dyn Runnable> {
        let wide = self.wide();
        std::mem::forget(self);
        // SAFETY: `wide` came from `Arc::into_raw` of an `Arc<TaskCell<F,
        // S>>` (`new`), made wide by `widen::<F, S>` to the same data; the
        // reference `self` owned is handed to the `Arc`.
        #[allow(unsafe_code)]
        unsafe {
            Arc::from_raw(wide)
        }
    }

    /// Where the task is: the data pointer of its `Arc`, and of its wakers.
    pub(crate) fn as_ptr(&self) -> *const () {
        self.0.as_ptr().cast_const().cast()
    }

    /// Runs the task (see [`Runnable::run`]).
    pub(crate) fn run(self) -> bool {
        self.into_arc().run()
    }

    /// Runs a blocking task (see [`Runnable::run_blocking`]).
    pub(crate) fn run_blocking(self) {
        self.into_arc().run_blocking()
    }

    /// Aborts the task (see [`Runnable::abort`]).
    pub(crate) fn abort(self) {
        self.into_arc().abort()
    }
}

impl std::ops::Deref for Task {
    type Target = dyn Runnable;

    fn deref(&self) -> &(dyn Runnable + 'static) {
        // SAFETY: `self` owns a reference: the task is alive while `self`
        // is, and only shared references to it are ever made.
        #[allow(unsafe_code)]
        unsafe {
            &*self.wide()
        }
    }
}

impl Clone for Task {
    fn clone(&self) -> Task {
        // SAFETY: as in `into_arc`; `self`'s reference keeps the count
        // above zero meanwhile.
        #[allow(unsafe_code)]
        unsafe {
            Arc::increment_strong_count(self.wide())
        };
        Task(self.0)
    }
}

impl Drop for Task {
    fn drop(&mut self) {
        // SAFETY: as in `into_arc`: the reference `self` owned is given up.
        #[allow(unsafe_code)]
        unsafe {
            Arc::decrement_strong_count(self.wide())
        };
    }
}

// SAFETY: a `Task` is an `Arc<dyn Runnable>` in a thin pointer, and
// `Runnable` is `Send + Sync`.
#[allow(unsafe_code)]
unsafe impl Send for Task {}
// SAFETY: as for `Send`.
#[allow(unsafe_code)]
unsafe impl Sync for Task {}

/// Where a woken task goes: the one thing a task needs from the runtime.
pub(crate) trait Schedule: Send + Sync + 'static + Sized {
    /// Queues `cell`, woken, on its scheduler (`cell.scheduler`), which it
    /// reaches through the cell: no reference of its own to clone.
    fn schedule<F: Future + 'static>(cell: Arc<TaskCell<F, Self>>);
}

/// What a scheduler does with a task.
pub(crate) trait Runnable: Send + Sync {
    /// Runs the task once (or cancels it, if it was aborted). Returns `true`
    /// if this call completed the task, which must then leave the task
    /// list; a task that was already complete returns `false`, so its old
    /// slot (perhaps reused) is never freed twice.
    fn run(self: Arc<Self>) -> bool;
    /// Runs a blocking task's closure on the calling (pool) thread.
    fn run_blocking(self: Arc<Self>);
    /// Drops the future if it is still there and completes the task with
    /// `error`: the runtime shut down, or no thread could run a blocking job.
    /// If the future is being polled meanwhile, its poller drops it when
    /// the poll returns (completing the task as cancelled).
    fn cancel(&self, error: JoinError);
    /// Marks the task cancelled and queues it, where its future is dropped
    /// (a `JoinHandle`'s or an `AbortHandle`'s `abort`).
    fn abort(self: Arc<Self>);
    /// Completes the task as cancelled without dropping its future, which
    /// is leaked: for a local task when its runtime is dropped away from
    /// its home thread.
    fn abandon(&self);
    /// Where the task was spawned.
    fn location(&self) -> &'static Location<'static>;
    /// How many times the loop has polled the task.
    fn polls(&self) -> u64;
    /// The data pointer of the waker of whoever awaits this task's
    /// `JoinHandle`, if someone does: matched against tasks by a dump.
    fn joiner(&self) -> Option<*const ()>;
    /// The `JoinHandle`'s poll: stores its result in `out`.
    ///
    /// # Safety
    ///
    /// `out` must point to an `Option<Poll<Result<T, JoinError>>>`, `T`
    /// being the task's output type.
    #[allow(unsafe_code)]
    unsafe fn poll_join(&self, cx: &mut Context<'_>, out: NonNull<()>);
    /// The `JoinHandle` is gone: the output is dropped whenever it comes.
    fn detach(&self);
}

/// Where the future is in its life.
enum Stage<F: Future> {
    Running(F),
    Finished(Result<F::Output, JoinError>),
    Consumed,
}

/// A task: state bits, its scheduler, its future or output, and the waker
/// of whoever awaits its `JoinHandle`.
#[repr(C)]
pub(crate) struct TaskCell<F: Future, S> {
    /// First, so that a [`Task`] (a pointer to it) finds the rest.
    pub(crate) header: Header,
    /// Where the task goes back to when woken.
    pub(crate) scheduler: Arc<S>,
    /// Owned by whoever the state word names (see the module doc); reached
    /// only through `with_stage`.
    stage: UnsafeCell<Stage<F>>,
    /// The waker of whoever awaits the `JoinHandle`; reached only through
    /// `with_join_waker`, under `JOIN_LOCK`.
    join_waker: UnsafeCell<Option<Waker>>,
    /// Where the task was spawned, for the stall detector and the dump:
    /// its index in the table of spawn locations (`sites`).
    site: u32,
    /// Polls so far, saturating. Written by the loop only (a load and a
    /// store), read by a dump on any thread. Not a protocol, so std's
    /// atomic, not loom's.
    polls: std::sync::atomic::AtomicU32,
}

// SAFETY: a task is shared between threads (its `Arc` is its waker, and
// wakers go anywhere), but what it holds is reached in three ways only:
// the loop polls, cancels or completes it; the `JoinHandle` takes or drops
// the output; a waker touches the state word and the scheduler. For a task
// made by `new`, the future and output are `Send`; the state word hands
// the stage to one owner at a time (`with_stage`), and the join waker's
// mutex does the rest. For one made by `new_local` they need not be, and these hold
// instead, each kept by the runtime:
// - it is made on the thread running the loop, and that loop refuses to
//   run on another thread while local tasks live (`runtime.rs`, `block_on`),
//   so every poll, cancel and completion happens on the home thread;
// - a runtime dropped on another thread leaks the futures of its local
//   tasks instead of dropping them there (`Core::shutdown`), and a wake
//   after shutdown never cancels a local task off the loop (`Shared::inject`);
// - the future is in the task list until it is gone, so the last `Arc`
//   dropped on another thread never drops a future;
// - the `JoinHandle` of a `!Send` output is itself `!Send` (`join.rs`), so
//   the output is taken or dropped on the home thread.
#[allow(unsafe_code)]
unsafe impl<F: Future, S: Send + Sync> Send for TaskCell<F, S> {}
// SAFETY: as for `Send` above: every access to the future and output is by
// the stage's one owner at the time (`with_stage`), on the thread the
// invariants above allow.
#[allow(unsafe_code)]
unsafe impl<F: Future, S: Send + Sync> Sync for TaskCell<F, S> {}

impl<F, S> TaskCell<F, S>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
    S: Schedule,
{
    /// Allocates the task, already marked `SCHEDULED`: the caller must put
    /// it in a run queue. `location` is where it was spawned.
    pub(crate) fn new(
        future: F,
        scheduler: Arc<S>,
        location: &'static Location<'static>,
    ) -> Arc<Self> {
        TaskCell::with_state(future, scheduler, SCHEDULED, location)
    }
}

impl<F, S> TaskCell<F, S>
where
    F: Future + 'static,
    S: Schedule,
{
    /// Allocates a task whose future or output need not be `Send`: for the
    /// loop thread only, which must uphold the invariants of the `Send`
    /// impl above.
    pub(crate) fn new_local(
        future: F,
        scheduler: Arc<S>,
        location: &'static Location<'static>,
    ) -> Arc<Self> {
        TaskCell::with_state(future, scheduler, SCHEDULED | LOCAL, location)
    }

    fn with_state(
        future: F,
        scheduler: Arc<S>,
        bits: usize,
        location: &'static Location<'static>,
    ) -> Arc<Self> {
        Arc::new(TaskCell {
            header: Header {
                state: AtomicUsize::new(bits | (UNREGISTERED << KEY_SHIFT)),
                widen: widen::<F, S>,
            },
            scheduler,
            stage: UnsafeCell::new(Stage::Running(future)),
            join_waker: UnsafeCell::new(None),
            site: sites::index(location),
            polls: std::sync::atomic::AtomicU32::new(0),
        })
    }

    /// Runs `f` on the stage.
    ///
    /// # Safety
    ///
    /// The caller must own the stage, by the state word: it holds
    /// `RUNNING`; or `COMPLETE` is set and it is the `JoinHandle` (which
    /// owns the stage from then on) or the loop having found `DETACHED`
    /// already set as it set `COMPLETE` (the handle is gone).
    #[allow(unsafe_code)]
    unsafe fn with_stage<R>(&self, f: impl FnOnce(&mut Stage<F>) -> R) -> R {
        // SAFETY: the caller owns the stage (the contract above), so this is
        // the one reference to it while `f` runs.
        self.stage.with_mut(|stage| f(unsafe { &mut *stage }))
    }

    /// Takes what the stage holds, leaving it `Consumed`.
    ///
    /// # Safety
    ///
    /// As for [`with_stage`](Self::with_stage).
    #[allow(unsafe_code)]
    unsafe fn take_stage(&self) -> Stage<F> {
        // SAFETY: passed on to our caller.
        unsafe { self.with_stage(|stage| std::mem::replace(stage, Stage::Consumed)) }
    }

    /// Runs `f` on the join waker's slot, holding `JOIN_LOCK`.
    #[allow(unsafe_code)]
    fn with_join_waker<R>(&self, f: impl FnOnce(&mut Option<Waker>) -> R) -> R {
        while self.header.state.fetch_or(JOIN_LOCK, Ordering::Acquire) & JOIN_LOCK != 0 {
            crate::sync::spin();
        }
        // Let go even if `f` panics (in a waker's `clone`).
        struct Unlock<'a>(&'a AtomicUsize);
        impl Drop for Unlock<'_> {
            fn drop(&mut self) {
                self.0.fetch_and(!JOIN_LOCK, Ordering::Release);
            }
        }
        let _unlock = Unlock(&self.header.state);
        // SAFETY: `JOIN_LOCK` is ours until `_unlock` goes: nobody else
        // reaches the slot meanwhile.
        self.join_waker.with_mut(|slot| f(unsafe { &mut *slot }))
    }

    /// Takes the stage to poll or drop the future: sets `RUNNING`, and
    /// clears the bits in `clear`, in one step. Returns the state before,
    /// or `None` if the future is gone or someone else holds it.
    fn claim(&self, clear: usize) -> Option<usize> {
        self.header
            .state
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |s| {
                (s & (COMPLETE | RUNNING) == 0).then_some((s & !clear) | RUNNING)
            })
            .ok()
    }

    /// Gives the stage back after a poll that left the future pending.
    /// Returns `false`, keeping it, if the task was cancelled meanwhile:
    /// the caller must then drop the future.
    fn release(&self) -> bool {
        self.header
            .state
            .fetch_update(Ordering::Release, Ordering::Relaxed, |s| {
                (s & CANCELLED == 0).then_some(s & !RUNNING)
            })
            .is_ok()
    }

    /// Completes the task, whose stage the caller holds (`RUNNING`): drops
    /// the future in place, stores `output`, sets `COMPLETE` (letting go of
    /// the stage) and hands the output to the `JoinHandle` (waking it), or
    /// drops it if the handle is gone.
    #[allow(unsafe_code)]
    fn complete(&self, output: Result<F::Output, JoinError>) {
        // The future's destructor is user code: a panic there must not
        // unwind into the loop. Its output is lost either way.
        // SAFETY: the caller holds `RUNNING`.
        let dropped = catch_unwind(AssertUnwindSafe(|| unsafe {
            self.with_stage(|stage| *stage = Stage::Consumed)
        }));
        let output = match dropped {
            Ok(()) => output,
            Err(panic) => {
                log::error!("a task's future panicked while being dropped");
                Err(JoinError::panic(panic))
            }
        };
        // SAFETY: still held: `RUNNING` goes below.
        unsafe { self.with_stage(|stage| *stage = Stage::Finished(output)) };
        // `RUNNING` off and `COMPLETE` on, in one step: the stage is the
        // handle's from here.
        let prev = self
            .header
            .state
            .fetch_xor(RUNNING | COMPLETE, Ordering::AcqRel);
        debug_assert_eq!(prev & (RUNNING | COMPLETE), RUNNING);
        if prev & DETACHED != 0 {
            // SAFETY: the handle was gone before `COMPLETE`: nobody else
            // will reach the stage again.
            drop_quietly(unsafe { self.take_stage() });
        } else if prev & JOINING != 0
            && let Some(waker) = self.with_join_waker(Option::take)
        {
            wake_quietly(waker);
        }
    }

    /// Polls the future once with `cx`, holding the stage (`RUNNING`), and
    /// completes the task if that finished it. Returns whether it did; if
    /// not, the stage is still held.
    #[allow(unsafe_code)]
    fn poll_future(&self, cx: &mut Context<'_>, blocking: bool) -> bool {
        let poll = |stage: &mut Stage<F>| {
            catch_unwind(AssertUnwindSafe(|| {
                // A poll that panics drops the future while the panic
                // unwinds, as synchronous code drops its locals (and as
                // tokio does): what it holds sees `thread::panicking()`.
                // Forgotten when the poll returns: free on the way that
                // matters.
                let unwinding = DropOnUnwind(stage);
                let Stage::Running(future) = &mut *unwinding.0 else {
                    unreachable!("a task's stage is held but its future is gone");
                };
                // SAFETY: the future lives inside the task's `Arc`
                // allocation, which never moves, and it leaves
                // `Stage::Running` only by being dropped in place
                // (`complete` and `DropOnUnwind` assign over it), so the
                // pinning contract holds: the future is not moved between
                // this poll and its drop.
                let future = unsafe { Pin::new_unchecked(future) };
                let poll = future.poll(cx);
                std::mem::forget(unwinding);
                poll
            }))
        };
        // SAFETY: the caller holds `RUNNING`.
        let output = match unsafe { self.with_stage(poll) } {
            Ok(Poll::Pending) => return false,
            // A blocking closure aborted while it ran: it could not be
            // stopped, but its result is dropped as the abort promised.
            Ok(Poll::Ready(value)) if blocking && self.is_cancelled() => {
                drop_quietly(value);
                Err(JoinError::cancelled())
            }
            Ok(Poll::Ready(value)) => Ok(value),
            Err(panic) => {
                log::error!("a task panicked; the loop goes on");
                Err(JoinError::panic(panic))
            }
        };
        self.complete(output);
        true
    }

    fn is_cancelled(&self) -> bool {
        self.header.state.load(Ordering::Acquire) & CANCELLED != 0
    }

    /// Puts the task in a run queue unless it is already in one or done.
    fn schedule(self: Arc<Self>) {
        let prev = self.header.state.fetch_or(SCHEDULED, Ordering::AcqRel);
        if prev & (SCHEDULED | COMPLETE) == 0 {
            S::schedule(self);
        }
    }
}

impl<F, S> Runnable for TaskCell<F, S>
where
    F: Future + 'static,
    S: Schedule,
{
    fn run(self: Arc<Self>) -> bool {
        // `SCHEDULED` cleared as the stage is taken: a wake from now on
        // queues the task again.
        let Some(prev) = self.claim(SCHEDULED) else {
            // A stale queue entry: the task completed since it was queued,
            // and whoever completed it already reported so. (Or a `cancel`
            // from another thread holds it, and completes it.)
            return false;
        };
        if prev & CANCELLED == 0 {
            // Only the loop thread polls, so a load and a store suffice.
            let polls = self.polls.load(Ordering::Relaxed);
            self.polls.store(polls.saturating_add(1), Ordering::Relaxed);
            let waker = Waker::from(self.clone());
            if self.poll_future(&mut Context::from_waker(&waker), false) {
                return true;
            }
            if self.release() {
                return false;
            }
            // Cancelled while it ran: the future goes now, not on a later run.
        }
        self.complete(Err(JoinError::cancelled()));
        true
    }

    fn run_blocking(self: Arc<Self>) {
        // `SCHEDULED` is never cleared for a blocking task: it was set at
        // spawn and stays set, so no wake or abort can ever queue it on the
        // loop.
        let Some(prev) = self.claim(0) else {
            return;
        };
        // A blocking closure completes in one poll and never wakes itself.
        let mut cx = Context::from_waker(Waker::noop());
        if prev & CANCELLED != 0 || !self.poll_future(&mut cx, true) {
            self.complete(Err(JoinError::cancelled()));
        }
    }

    fn cancel(&self, error: JoinError) {
        // Marked cancelled first: whoever holds the stage now (a poll, a
        // blocking closure) sees it when it lets go, and drops the future
        // or the closure's result.
        self.header.state.fetch_or(CANCELLED, Ordering::AcqRel);
        if self.claim(0).is_some() {
            self.complete(Err(error));
        }
    }

    fn abort(self: Arc<Self>) {
        let prev = self.header.state.fetch_or(CANCELLED, Ordering::AcqRel);
        if prev & (CANCELLED | COMPLETE) == 0 {
            self.schedule();
        }
    }

    #[allow(unsafe_code)]
    fn abandon(&self) {
        if self.claim(0).is_some() {
            // SAFETY: `claim` gave us the stage.
            std::mem::forget(unsafe { self.take_stage() });
            self.complete(Err(JoinError::cancelled()));
        }
    }

    fn location(&self) -> &'static Location<'static> {
        sites::location(self.site)
    }

    fn polls(&self) -> u64 {
        self.polls.load(Ordering::Relaxed).into()
    }

    fn joiner(&self) -> Option<*const ()> {
        self.with_join_waker(|waker| waker.as_ref().map(Waker::data))
    }

    #[allow(unsafe_code)]
    unsafe fn poll_join(&self, cx: &mut Context<'_>, out: NonNull<()>) {
        let mut out = out.cast::<Option<Poll<Result<F::Output, JoinError>>>>();
        // SAFETY: our caller promises `out` is of this type, and it is a
        // `&mut` borrowed for the call.
        *unsafe { out.as_mut() } = Some(self.join(cx));
    }

    fn detach(&self) {
        self.let_go();
    }
}

impl<F, S> Wake for TaskCell<F, S>
where
    F: Future + 'static,
    S: Schedule,
{
    fn wake(self: Arc<Self>) {
        self.schedule();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        // Check before cloning: a redundant wake then costs one atomic load.
        if self.header.state.load(Ordering::Acquire) & (SCHEDULED | COMPLETE) == 0 {
            self.clone().schedule();
        }
    }
}

impl<F, S> TaskCell<F, S>
where
    F: Future + 'static,
    S: Schedule,
{
    #[allow(unsafe_code)]
    fn join(&self, cx: &mut Context<'_>) -> Poll<Result<F::Output, JoinError>> {
        if self.header.state.load(Ordering::Acquire) & COMPLETE == 0 {
            let old = self.with_join_waker(|slot| set_waker(slot, cx.waker()));
            // Dropped outside the lock: a waker's drop can run arbitrary code.
            drop(old);
            // Our bit and `complete`'s are set in one word: whichever is set
            // second sees the first. So either `complete` sees `JOINING` and
            // takes the waker, or we see `COMPLETE` here.
            if self.header.state.fetch_or(JOINING, Ordering::AcqRel) & COMPLETE == 0 {
                return Poll::Pending;
            }
        }
        // SAFETY: `COMPLETE` is set and the handle (us) is not gone: the
        // stage is the handle's.
        match unsafe { self.take_stage() } {
            Stage::Finished(output) => {
                // Nothing is left for `detach` to drop or take: the output
                // is ours, and a join waker still in its slot (registered
                // as the task completed) goes with the task.
                self.header.state.fetch_or(DETACHED, Ordering::Release);
                Poll::Ready(output)
            }
            _ => panic!("JoinHandle polled after it returned its output"),
        }
    }

    #[allow(unsafe_code)]
    fn let_go(&self) {
        // The handle took the output (see `join`): nothing to do.
        if self.header.state.load(Ordering::Acquire) & DETACHED != 0 {
            return;
        }
        let prev = self.header.state.fetch_or(DETACHED, Ordering::AcqRel);
        // Only the handle sets `JOINING`, and it is being dropped: no
        // waker can be left unless the bit is there already.
        if prev & JOINING != 0 {
            let waker = self.with_join_waker(Option::take);
            drop(waker);
        }
        if prev & COMPLETE != 0 {
            // SAFETY: `COMPLETE` was set before `DETACHED`: the loop let go
            // of the stage, which is the handle's (ours) to drop.
            drop_quietly(unsafe { self.take_stage() });
        }
    }
}

/// Drops a task's future in place if dropped itself, which only happens
/// while a panic in the future's poll unwinds (the poll forgets it when it
/// returns).
struct DropOnUnwind<'a, F: Future>(&'a mut Stage<F>);

impl<F: Future> Drop for DropOnUnwind<'_, F> {
    fn drop(&mut self) {
        // A destructor that panics now, during the unwinding, would abort
        // the process if its panic left this function: caught and logged,
        // and the task completes with the poll's panic.
        let dropped = catch_unwind(AssertUnwindSafe(|| *self.0 = Stage::Consumed));
        if let Err(panic) = dropped {
            log::error!(
                "a task's future panicked while being dropped after its poll panicked ({})",
                describe(&*panic)
            );
            drop_quietly(panic);
        }
    }
}

/// Wakes `waker`; a panic inside it is logged, not propagated.
pub(crate) fn wake_quietly(waker: Waker) {
    if let Err(panic) = catch_unwind(AssertUnwindSafe(|| waker.wake())) {
        log::error!("a waker panicked ({}); the loop goes on", describe(&*panic));
    }
}

/// Wakes every waker in `wakers`, leaving the vector empty but keeping its
/// capacity, so the loop can reuse it without allocating.
///
/// Inline, the waking out of line: the loop calls this twice a tick, and in
/// a tick that only runs tasks both vectors are empty (a wake handed from
/// task to task pays a tick per hop).
#[inline]
pub(crate) fn wake_all(wakers: &mut Vec<Waker>) {
    if !wakers.is_empty() {
        wake_each(wakers);
    }
}

/// `wake_all`'s loop.
#[inline(never)]
fn wake_each(wakers: &mut Vec<Waker>) {
    for waker in wakers.drain(..) {
        wake_quietly(waker);
    }
}

/// Drops `value`; a panic in its destructor is logged, not propagated.
pub(crate) fn drop_quietly<T>(value: T) {
    if let Err(panic) = catch_unwind(AssertUnwindSafe(|| drop(value))) {
        log::error!(
            "a destructor panicked ({}); the loop goes on",
            describe(&*panic)
        );
    }
}

/// Spawn locations, each kept once: a task holds its own as a 4-byte
/// index into this table (beside its 4-byte poll count) instead of an
/// 8-byte pointer. Read back only by a dump or the stall detector.
mod sites {
    use std::cell::Cell;
    use std::collections::HashMap;
    use std::panic::Location;

    use parking_lot::Mutex;

    /// Every location seen, and each one's index in the first.
    type Table = (Vec<&'static Location<'static>>, HashMap<usize, u32>);
    static TABLE: Mutex<Option<Table>> = Mutex::new(None);

    thread_local! {
        /// Locations this thread indexed lately, by their address: a spawn
        /// from a site seen lately takes no lock. Address 0 marks an empty
        /// entry.
        static RECENT: [Cell<(usize, u32)>; 16] = const { [const { Cell::new((0, 0)) }; 16] };
    }

    /// `location`'s index in the table, entered if new.
    #[inline]
    pub(super) fn index(location: &'static Location<'static>) -> u32 {
        let address = std::ptr::from_ref(location) as usize;
        // A thread whose locals are gone (a spawn from a thread-local's
        // destructor) takes the lock.
        let recent = RECENT.try_with(|recent| {
            let slot = &recent[(address >> 3) % recent.len()];
            match slot.get() {
                (seen, index) if seen == address => index,
                _ => {
                    let index = enter(location, address);
                    slot.set((address, index));
                    index
                }
            }
        });
        recent.unwrap_or_else(|_| enter(location, address))
    }

    #[cold]
    fn enter(location: &'static Location<'static>, address: usize) -> u32 {
        let mut table = TABLE.lock();
        let (list, by_address) = table.get_or_insert_with(Default::default);
        *by_address.entry(address).or_insert_with(|| {
            list.push(location);
            u32::try_from(list.len() - 1).expect("fewer than 2^32 spawn sites")
        })
    }

    /// The location at `index`.
    pub(super) fn location(index: u32) -> &'static Location<'static> {
        TABLE.lock().as_ref().expect("a task's site was entered").0[index as usize]
    }
}

#[cfg(all(test, loom))]
mod loom_model;
