//! One spawned task: its state bits, its future and, later, its output, in a
//! single allocation.
//!
//! A task is a `TaskCell<F, S>` allocated by hand, with its own reference
//! count; a [`Task`] is one counted reference, a thin pointer to the
//! task's [`Header`] (which knows the task's type). The same pointer is
//! the task's waker (its type's vtable, `TaskCell::WAKER`), and its entry
//! in a run queue, in the runtime's list of live tasks and in its
//! `JoinHandle`. Spawning allocates once; waking takes a reference at
//! most, which never allocates; the loop polls a task with a waker that
//! takes none.
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
//! Taking and giving back `RUNNING` is one atomic operation each, where a lock
//! was two (2026-12-02: three fewer read-modify-writes per spawned task, one
//! fewer per poll). The `unsafe`, counted (tests/docs_figures holds this count
//! to the code): 4 `unsafe impl` (`Send` and `Sync` for the cell and for
//! `Task`), 9 `unsafe fn` (one declared by a trait, `Runnable::poll_join`) and
//! 24 `unsafe` blocks: reaching the stage (`with_stage`, whose callers each say
//! why they own it), and pinning the future in place, which is what lets it
//! live in the task's own allocation instead of a second `Box`; the task's
//! allocation, its reference count and its wakers (`Task`, `TaskCell::WAKER`), as an `Arc` and `std::task::Wake`
//! would do them with 16 bytes more a task; and handing the `JoinHandle` its
//! output through a pointer of its type (`poll_join`).
//!
//! The waker of a `JoinHandle` waiting for its task is not in the task: it
//! is in the scheduler's table of joiners (`joiners.rs`), keyed by the
//! task's address, where only tasks whose handle waits pay for it.
//!
//! Wakers and destructors are user code. The loop calls them in many places
//! (after I/O events, when timers fire, when a task completes); a panic in
//! any of them is logged and the loop goes on, as Tornado logs an exception
//! raised by a handler and keeps serving: `wake_quietly`, `wake_all` and
//! `drop_quietly` at the end of this file.

use std::future::Future;
use std::marker::PhantomData;
use std::mem::ManuallyDrop;
use std::panic::{AssertUnwindSafe, Location, catch_unwind};
use std::pin::Pin;
use std::ptr::NonNull;
use std::sync::Arc;
use std::task::{Context, Poll, RawWaker, RawWakerVTable, Waker};

use crate::base::{JoinError, describe};
use crate::joiners::Joiners;
use crate::sync::{AtomicU32, AtomicU64, Ordering, UnsafeCell, lock};

/// The task is in a run queue (local or injected), or about to be put there.
/// Set by whoever wakes the task first; cleared by the loop just before it
/// polls the task. A wake that finds it set does nothing: that is what makes
/// a burst of wakes cost one queue entry.
const SCHEDULED: u64 = 1 << 0;
/// The future is gone: it returned `Ready`, panicked, or was cancelled. The
/// output (if anyone wants it) is in `stage`. Never cleared.
const COMPLETE: u64 = 1 << 1;
/// `abort()` was called. The loop drops the future the next time it picks
/// the task up, unless the task completes first.
const CANCELLED: u64 = 1 << 2;
/// The `JoinHandle` was dropped: nobody will read the output, so whoever
/// sets the second of `COMPLETE` / `DETACHED` drops it. Also set when the
/// handle takes the output, so that its drop, which nearly always follows,
/// finds nothing to do.
const DETACHED: u64 = 1 << 3;
/// Spawned by `spawn_local`: its future (and perhaps its output) need not
/// be `Send`, so the loop must only ever poll or drop it on its home thread
/// (see the `Send` impl below). Never changes.
const LOCAL: u64 = 1 << 4;
/// A `JoinHandle` has left a waker in its scheduler's table of joiners
/// (`Joiners`, keyed by the task's address). Set after the waker is in,
/// in the same word as `COMPLETE`, so that `complete` and the handle each
/// see the other's bit: only a task whose handle is waiting takes the
/// table's lock when it completes (most are detached, or joined after they
/// finish). Never cleared.
const JOINING: u64 = 1 << 5;
/// Someone owns `stage` to poll or drop the future: the loop (or a pool
/// thread, for a blocking task) in `run`, or a `cancel`. Set and cleared
/// by the same thread, never while `COMPLETE` is set; a `cancel` that finds
/// it set leaves the future to its owner, who sees `CANCELLED` when it lets
/// go and drops the future then.
const RUNNING: u64 = 1 << 6;
// Bit 7 is free. It was the lock of a join waker kept in each task
// (`JOIN_LOCK`) until the waker moved to the scheduler's table of joiners
// (`joiners.rs`): 16 bytes less in every task, most of which never have
// their handle wait.

/// The state word holds the bits above in its low byte, the task's spawn
/// site (its index in `sites`) in the next 24 bits, and its slot in the
/// loop's task list in the high 32: one word instead of three keeps a
/// spawned task 16 bytes smaller.
const SITE_SHIFT: u32 = 8;
const SITE_MASK: u64 = (1 << 24) - 1;
const KEY_SHIFT: u32 = 32;
/// The flag bits and the site: what a new key leaves as it was.
const BELOW_KEY: u64 = (1 << KEY_SHIFT) - 1;

/// `key` of a task that was spawned from another thread and has not been
/// entered into the loop's task list yet (every key bit set). Keys are
/// below it: 4 billion tasks alive at once would take 300 GB.
pub(crate) const UNREGISTERED: usize = u32::MAX as usize;

/// A spawned task, as a scheduler, the task list, a waker and a handle see
/// it, whatever its future's type: one thin pointer, owning one reference.
///
/// A task is allocated by hand (a `Box` made raw), with its own reference
/// count in its [`Header`] (2026-12-03): an `Arc<dyn Runnable>` would take
/// two words in each queue, list and handle (the pointer and the vtable's)
/// and 16 bytes in the task for its counts, where this takes one word and
/// 4 bytes. A task's waker is this pointer with its type's vtable
/// (`TaskCell::WAKER`).
pub(crate) struct Task(NonNull<Header>);

/// The first field of every task (which is `#[repr(C)]`), so that a pointer
/// to a task is a pointer to its header: how a [`Task`] counts references,
/// finds its type, and reads its state (its key, whether it is done)
/// with no call through the type.
pub(crate) struct Header {
    /// State bits, the spawn site, and the task-list key (see `KEY_SHIFT`).
    state: AtomicU64,
    /// References: `Task`s, wakers (each is one) and `JoinHandle`s. The
    /// task is freed by whoever drops the last.
    refs: AtomicU32,
    /// Polls so far, saturating. Written by the loop only (a load and a
    /// store), read by a dump on any thread. Not a protocol, so std's
    /// atomic, not loom's.
    polls: std::sync::atomic::AtomicU32,
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
        (self.state.load(Ordering::Relaxed) >> KEY_SHIFT) as usize
    }

    /// Records the task's slot in the loop's task list: when it enters the
    /// list, and when the list is compacted.
    pub(crate) fn set_key(&self, key: usize) {
        // Only the loop thread sets the key bits; wakers may be changing the
        // state bits concurrently, and keep their changes.
        assert!(key < UNREGISTERED, "4 billion tasks alive at once");
        let _ = self
            .state
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |s| {
                Some((s & BELOW_KEY) | ((key as u64) << KEY_SHIFT))
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

    /// Marks the task `SCHEDULED`; `true` if the caller must queue it (it
    /// was neither queued already nor done). The one rule every wake and
    /// abort goes by.
    fn mark_scheduled(&self) -> bool {
        let prev = self.state.fetch_or(SCHEDULED, Ordering::AcqRel);
        prev & (SCHEDULED | COMPLETE) == 0
    }

    /// One more reference. As `Arc`'s, a count past any real use (here
    /// 2^31) aborts: it can only be a leak of clones in a loop.
    fn acquire(&self) {
        if self.refs.fetch_add(1, Ordering::Relaxed) > i32::MAX as u32 {
            std::process::abort();
        }
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
    /// Takes over the reference `data` (a waker's data) stands for.
    ///
    /// # Safety
    ///
    /// `data` is a task's header, and the caller gives up one reference it
    /// holds to that task.
    #[allow(unsafe_code)]
    unsafe fn from_raw(data: *const ()) -> Task {
        // SAFETY: passed on to our caller: a header is never null.
        Task(unsafe { NonNull::new_unchecked(data.cast_mut().cast()) })
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

    /// The task as a `dyn Runnable` pointer.
    fn wide(&self) -> *const dyn Runnable {
        (self.header().widen)(self.0.as_ptr())
    }

    /// A waker of this task (`vtable`, its type's) that holds no
    /// reference of its own: valid while `self` is (the loop, running the
    /// task). Made from `self`'s pointer, which may reach (and, through a
    /// clone that outlives every other reference, free) the whole task.
    fn borrowed_waker(&self, vtable: &'static RawWakerVTable) -> ManuallyDrop<Waker> {
        // SAFETY: `as_ptr` is the task's header, alive while `self` is; the
        // waker is never dropped (`ManuallyDrop`), so it gives back no
        // reference it did not take. Its clones take one.
        #[allow(unsafe_code)]
        ManuallyDrop::new(unsafe { Waker::from_raw(RawWaker::new(self.as_ptr(), vtable)) })
    }

    /// Where the task is: its header, which is also its wakers' data.
    pub(crate) fn as_ptr(&self) -> *const () {
        self.0.as_ptr().cast_const().cast()
    }

    /// Runs the task (see [`Runnable::run`]).
    #[inline(always)]
    pub(crate) fn run(self) -> bool {
        self.run_once(&self)
    }

    /// Runs a blocking task (see [`Runnable::run_blocking`]).
    pub(crate) fn run_blocking(self) {
        self.run_blocking_once();
    }

    /// Marks the task cancelled and queues it, where its future is dropped
    /// (a `JoinHandle`'s or an `AbortHandle`'s `abort`).
    pub(crate) fn abort(self) {
        let prev = self.header().state.fetch_or(CANCELLED, Ordering::AcqRel);
        if prev & (CANCELLED | COMPLETE) == 0 && self.header().mark_scheduled() {
            let wide = self.wide();
            // SAFETY: `self` keeps the task alive until `schedule` has it;
            // from then on `schedule` keeps it alive until it returns,
            // handing back what it keeps to be dropped after.
            #[allow(unsafe_code)]
            let kept = unsafe { &*wide }.schedule(self);
            drop(kept);
        }
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
        self.header().acquire();
        Task(self.0)
    }
}

impl Drop for Task {
    fn drop(&mut self) {
        // `AcqRel`, as `Arc`'s drop with its fence: whoever frees the task
        // sees every other holder's last use of it.
        if self.header().refs.fetch_sub(1, Ordering::AcqRel) == 1 {
            // SAFETY: that was the last reference: nobody else reaches the
            // task. It was allocated as a `Box<TaskCell<F, S>>`
            // (`TaskCell::with_state`), which `wide` points to, typed.
            #[allow(unsafe_code)]
            drop(unsafe { Box::from_raw(self.wide().cast_mut()) });
        }
    }
}

// SAFETY: a `Task` is a counted reference to a `dyn Runnable`, as an
// `Arc<dyn Runnable>` is, and `Runnable` is `Send + Sync`.
#[allow(unsafe_code)]
unsafe impl Send for Task {}
// SAFETY: as for `Send`.
#[allow(unsafe_code)]
unsafe impl Sync for Task {}

/// A task just made, knowing its types: for its `JoinHandle` (which must
/// know the output's) and the loom models; [`into_task`](Self::into_task)
/// forgets them.
pub(crate) struct Typed<F: Future, S> {
    task: Task,
    _types: PhantomData<fn() -> (F, S)>,
}

impl<F: Future, S> Typed<F, S> {
    /// One more reference, as a `Task`.
    pub(crate) fn task(&self) -> Task {
        self.task.clone()
    }

    /// The reference, as a `Task`.
    pub(crate) fn into_task(self) -> Task {
        self.task
    }
}

impl<F: Future, S> Clone for Typed<F, S> {
    fn clone(&self) -> Self {
        Typed {
            task: self.task(),
            _types: PhantomData,
        }
    }
}

impl<F: Future, S> std::ops::Deref for Typed<F, S> {
    type Target = TaskCell<F, S>;

    fn deref(&self) -> &TaskCell<F, S> {
        // SAFETY: `task` holds a reference to a task made as a
        // `TaskCell<F, S>` (`TaskCell::with_state`, the one maker of a
        // `Typed`), whose header is its first field.
        #[allow(unsafe_code)]
        unsafe {
            self.task.0.cast::<TaskCell<F, S>>().as_ref()
        }
    }
}

/// Where a woken task goes, and where its handle's waker waits: what a task
/// needs from the runtime.
pub(crate) trait Schedule: Send + Sync + 'static + Sized {
    /// Queues `task`, woken, on this scheduler (the task's own, which
    /// `self` is borrowed from). Returns a reference to drop once the
    /// call has returned: one that kept the task (and so `self`) alive
    /// while another thread might have run it to its end meanwhile.
    fn schedule(&self, task: Task) -> Option<Task>;
    /// The wakers of the `JoinHandle`s waiting for this scheduler's tasks.
    fn joiners(&self) -> &Joiners;
}

/// What a scheduler does with a task.
pub(crate) trait Runnable: Send + Sync {
    /// Runs the task once (or cancels it, if it was aborted). Returns `true`
    /// if this call completed the task, which must then leave the task
    /// list; a task that was already complete returns `false`, so its old
    /// slot (perhaps reused) is never freed twice. `me` is the caller's
    /// reference to this task, held meanwhile.
    fn run_once(&self, me: &Task) -> bool;
    /// Runs a blocking task's closure on the calling (pool) thread.
    fn run_blocking_once(&self);
    /// Drops the future if it is still there and completes the task with
    /// `error`: the runtime shut down, or no thread could run a blocking job.
    /// If the future is being polled meanwhile, its poller drops it when
    /// the poll returns (completing the task as cancelled).
    fn cancel(&self, error: JoinError);
    /// Completes the task as cancelled without dropping its future, which
    /// is leaked: for a local task when its runtime is dropped away from
    /// its home thread.
    fn abandon(&self);
    /// Queues `me` (this task) on its scheduler: see [`Schedule::schedule`].
    fn schedule(&self, me: Task) -> Option<Task>;
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

/// A task: state bits, its scheduler, and its future or output. The waker
/// of whoever awaits its `JoinHandle` is kept by the scheduler
/// ([`Schedule::joiners`]).
#[repr(C)]
pub(crate) struct TaskCell<F: Future, S> {
    /// First, so that a [`Task`] (a pointer to it) finds the rest.
    pub(crate) header: Header,
    /// Where the task goes back to when woken.
    pub(crate) scheduler: Arc<S>,
    /// Owned by whoever the state word names (see the module doc); reached
    /// only through `with_stage`.
    stage: UnsafeCell<Stage<F>>,
}

// SAFETY: a task is shared between threads (a `Task` is its waker, and
// wakers go anywhere), but what it holds is reached in three ways only:
// the loop polls, cancels or completes it; the `JoinHandle` takes or drops
// the output; a waker touches the state word and the scheduler. For a task
// made by `allocate`, the future and output are `Send`; the state word hands
// the stage to one owner at a time (`with_stage`), and the scheduler's
// table of joiners has its own lock. For one made by `allocate_local` they need not be, and these hold
// instead, each kept by the runtime:
// - it is made on the thread running the loop, and that loop refuses to
//   run on another thread while local tasks live (`runtime.rs`, `block_on`),
//   so every poll, cancel and completion happens on the home thread;
// - a runtime dropped on another thread leaks the futures of its local
//   tasks instead of dropping them there (`Core::shutdown`), and a wake
//   after shutdown never cancels a local task off the loop (`Shared::inject`);
// - the future is in the task list until it is gone, so the last `Task`
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
    pub(crate) fn allocate(
        future: F,
        scheduler: Arc<S>,
        location: &'static Location<'static>,
    ) -> Typed<F, S> {
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
    pub(crate) fn allocate_local(
        future: F,
        scheduler: Arc<S>,
        location: &'static Location<'static>,
    ) -> Typed<F, S> {
        TaskCell::with_state(future, scheduler, SCHEDULED | LOCAL, location)
    }

    fn with_state(
        future: F,
        scheduler: Arc<S>,
        bits: u64,
        location: &'static Location<'static>,
    ) -> Typed<F, S> {
        let site = u64::from(sites::index(location));
        assert!(site <= SITE_MASK, "16 million spawn sites");
        let cell = Box::new(TaskCell {
            header: Header {
                state: AtomicU64::new(
                    bits | (site << SITE_SHIFT) | ((UNREGISTERED as u64) << KEY_SHIFT),
                ),
                refs: AtomicU32::new(1),
                polls: std::sync::atomic::AtomicU32::new(0),
                widen: widen::<F, S>,
            },
            scheduler,
            stage: UnsafeCell::new(Stage::Running(future)),
        });
        // `header` is the cell's first field, at its start (`#[repr(C)]`);
        // the pointer keeps the whole box's provenance. Freed by the last
        // `Task` (its `Drop`).
        Typed {
            task: Task(NonNull::from(Box::leak(cell)).cast::<Header>()),
            _types: PhantomData,
        }
    }

    /// The vtable of this type's wakers, whose data is the task's header
    /// and which each own one reference: a clone takes one more, a drop
    /// gives it back, a wake by value hands it to the run queue (or gives
    /// it back). One per type, so that a wake goes to the scheduler with
    /// no call through the task's type.
    const WAKER: RawWakerVTable = RawWakerVTable::new(
        Self::clone_waker,
        Self::wake_waker,
        Self::wake_waker_by_ref,
        Self::drop_waker,
    );

    #[allow(unsafe_code)]
    unsafe fn clone_waker(data: *const ()) -> RawWaker {
        // SAFETY: `data` is the header of a task the waker holds a
        // reference to.
        unsafe { &*data.cast::<Header>() }.acquire();
        RawWaker::new(data, &Self::WAKER)
    }

    #[allow(unsafe_code)]
    unsafe fn wake_waker(data: *const ()) {
        // SAFETY: the waker's reference becomes the `Task`'s.
        let task = unsafe { Task::from_raw(data) };
        // After taking it: if the check panics, the reference the waker
        // gave up is dropped as it unwinds, not leaked.
        lock::assert_unlocked();
        Self::wake(task);
    }

    #[allow(unsafe_code)]
    unsafe fn wake_waker_by_ref(data: *const ()) {
        lock::assert_unlocked();
        // SAFETY: the waker holds a reference, and keeps it.
        let header = unsafe { &*data.cast::<Header>() };
        // Checked before taking a reference: a redundant wake costs a load.
        if header.state.load(Ordering::Acquire) & (SCHEDULED | COMPLETE) == 0 {
            header.acquire();
            // SAFETY: the reference just taken becomes the `Task`'s.
            Self::wake(unsafe { Task::from_raw(data) });
        }
    }

    #[allow(unsafe_code)]
    unsafe fn drop_waker(data: *const ()) {
        // SAFETY: the waker's reference becomes the `Task`'s, dropped.
        drop(unsafe { Task::from_raw(data) });
    }

    /// Queues `task` (this type's) unless it is queued already or done,
    /// handing it this reference.
    #[allow(unsafe_code)]
    fn wake(task: Task) {
        if task.header().mark_scheduled() {
            // SAFETY: a task of this type (its waker's vtable says so), kept
            // alive by `task` until `schedule` has it, and from then on by
            // `schedule` until it returns (it hands back what it keeps, to
            // be dropped after).
            let cell = unsafe { task.0.cast::<Self>().as_ref() };
            let kept = cell.scheduler.schedule(task);
            drop(kept);
        }
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

    /// The task's key in its scheduler's table of joiners: its address,
    /// which no other task has while this one lives.
    #[inline]
    fn address(&self) -> usize {
        std::ptr::from_ref(&self.header) as usize
    }

    /// Takes the stage to poll or drop the future: sets `RUNNING`, and
    /// clears the bits in `clear`, in one step. Returns the state before,
    /// or `None` if the future is gone or someone else holds it.
    fn claim(&self, clear: u64) -> Option<u64> {
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
            && let Some(waker) = self.scheduler.joiners().take(self.address())
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
                // SAFETY: the future lives inside the task's own
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
}

impl<F, S> Runnable for TaskCell<F, S>
where
    F: Future + 'static,
    S: Schedule,
{
    fn run_once(&self, me: &Task) -> bool {
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
            let polls = &self.header.polls;
            polls.store(
                polls.load(Ordering::Relaxed).saturating_add(1),
                Ordering::Relaxed,
            );
            // The caller's reference keeps the task alive through the poll,
            // so its waker need not take one (clones of it do).
            let waker = me.borrowed_waker(&Self::WAKER);
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

    fn run_blocking_once(&self) {
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

    #[allow(unsafe_code)]
    fn abandon(&self) {
        if self.claim(0).is_some() {
            // SAFETY: `claim` gave us the stage.
            std::mem::forget(unsafe { self.take_stage() });
            self.complete(Err(JoinError::cancelled()));
        }
    }

    fn schedule(&self, me: Task) -> Option<Task> {
        self.scheduler.schedule(me)
    }

    fn location(&self) -> &'static Location<'static> {
        let state = self.header.state.load(Ordering::Relaxed);
        sites::location(((state >> SITE_SHIFT) & SITE_MASK) as u32)
    }

    fn polls(&self) -> u64 {
        self.header.polls.load(Ordering::Relaxed).into()
    }

    fn joiner(&self) -> Option<*const ()> {
        if self.header.state.load(Ordering::Acquire) & JOINING == 0 {
            return None;
        }
        self.scheduler.joiners().data(self.address())
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

impl<F, S> TaskCell<F, S>
where
    F: Future + 'static,
    S: Schedule,
{
    #[allow(unsafe_code)]
    fn join(&self, cx: &mut Context<'_>) -> Poll<Result<F::Output, JoinError>> {
        if self.header.state.load(Ordering::Acquire) & COMPLETE == 0 {
            let old = self
                .scheduler
                .joiners()
                .register(self.address(), cx.waker());
            // Dropped outside the lock: a waker's drop can run arbitrary code.
            drop(old);
            // Our bit and `complete`'s are set in one word: whichever is set
            // second sees the first. So either `complete` sees `JOINING` and
            // takes the waker, or we see `COMPLETE` here...
            if self.header.state.fetch_or(JOINING, Ordering::AcqRel) & COMPLETE == 0 {
                return Poll::Pending;
            }
            // ...and take back the waker we just left: `complete` found no
            // `JOINING`, or (the handle polled before) took an earlier
            // poll's waker before ours went in. No other task has this key
            // while ours lives. A waker left by an earlier poll alone went in
            // before that poll set `JOINING`: `complete` takes it.
            drop(self.scheduler.joiners().take(self.address()));
        }
        // SAFETY: `COMPLETE` is set and the handle (us) is not gone: the
        // stage is the handle's.
        match unsafe { self.take_stage() } {
            Stage::Finished(output) => {
                // Nothing is left for `detach` to drop or take: the output
                // is ours, and the table's entry gone or `complete`'s.
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
            drop(self.scheduler.joiners().take(self.address()));
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
    // Outside `catch_unwind`: a wake under a lock is the caller's bug.
    lock::assert_unlocked();
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

/// `wake_all`'s loop: one `catch_unwind` around all the wakes rather than
/// one each (as `wake_quietly` would), entered again after a panic for
/// the wakers left, so a waker that panics is logged and the rest are
/// still woken, in order.
#[inline(never)]
fn wake_each(wakers: &mut Vec<Waker>) {
    lock::assert_unlocked();
    let mut left = wakers.drain(..);
    while let Err(panic) = catch_unwind(AssertUnwindSafe(|| left.by_ref().for_each(Waker::wake))) {
        log::error!("a waker panicked ({}); the loop goes on", describe(&*panic));
        drop_quietly(panic);
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
    use std::collections::BTreeMap;
    use std::panic::Location;

    use crate::sync::lock::Mutex;

    /// Every location seen, and each one's index in the first, by address.
    /// Looked up only when a thread's cache misses: a tree is no slower
    /// there than a hash table, and its order is fixed.
    type Table = (Vec<&'static Location<'static>>, BTreeMap<usize, u32>);
    static TABLE: Mutex<Table> = Mutex::new((Vec::new(), BTreeMap::new()));

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
        let (list, by_address) = &mut *TABLE.lock();
        *by_address.entry(address).or_insert_with(|| {
            list.push(location);
            u32::try_from(list.len() - 1).expect("fewer than 2^32 spawn sites")
        })
    }

    /// The location at `index`.
    pub(super) fn location(index: u32) -> &'static Location<'static> {
        TABLE.lock().0[index as usize]
    }
}

#[cfg(all(test, loom))]
mod loom_model;

#[cfg(test)]
mod tests {
    #[cfg(not(loom))]
    use super::{Schedule, Task};
    #[cfg(not(loom))]
    use crate::joiners::Joiners;

    /// A scheduler for tasks nothing wakes.
    #[cfg(not(loom))]
    struct Unwoken(Joiners);

    #[cfg(not(loom))]
    impl Schedule for Unwoken {
        fn schedule(&self, _: Task) -> Option<Task> {
            unreachable!("nothing wakes the task")
        }
        fn joiners(&self) -> &Joiners {
            &self.0
        }
    }

    /// The interleavings of a join that loom's models reach only across
    /// threads, made on one: the task completes while its handle is
    /// leaving its waker (inside the waker's `clone`, which the handle's
    /// poll calls before it takes the table's lock). On a first poll,
    /// `complete` finds no `JOINING` and takes nothing; on a second (the
    /// handle polled again with another waker), it takes and wakes the
    /// first poll's waker, and the second's goes in after. Either way the
    /// handle, seeing `COMPLETE` after it set the bit, returns the output
    /// and takes its own entry back: left there, the entry would outlive
    /// the task, under an address the next task may have.
    #[cfg(not(loom))]
    #[test]
    fn a_task_completing_as_its_handle_leaves_a_waker_leaves_no_entry() {
        use std::future::Future;
        use std::panic::Location;
        use std::pin::Pin;
        use std::sync::atomic::{AtomicUsize, Ordering};
        use std::sync::{Arc, Mutex};
        use std::task::{Context, Poll, RawWaker, RawWakerVTable, Wake, Waker};

        use super::{Task, TaskCell};
        use crate::joiners::Joiners;
        use crate::task::JoinHandle;

        // The task the next clone of the waker runs; the clones count.
        static TO_RUN: Mutex<Option<Task>> = Mutex::new(None);
        static CLONES: AtomicUsize = AtomicUsize::new(0);
        const VTABLE: RawWakerVTable = RawWakerVTable::new(clone, |_| {}, |_| {}, |_| {});
        fn clone(_: *const ()) -> RawWaker {
            CLONES.fetch_add(1, Ordering::Relaxed);
            if let Some(task) = TO_RUN.lock().unwrap().take() {
                assert!(task.run(), "completed by this run");
            }
            RawWaker::new(std::ptr::null(), &VTABLE)
        }
        // SAFETY: the vtable's functions touch no data (the pointer is
        // null and never read), and every one of them is sound to call
        // any number of times from any thread.
        #[allow(unsafe_code)]
        let waker = unsafe { Waker::from_raw(RawWaker::new(std::ptr::null(), &VTABLE)) };
        #[derive(Default)]
        struct Woken(AtomicUsize);
        impl Wake for Woken {
            fn wake(self: Arc<Self>) {
                self.0.fetch_add(1, Ordering::Relaxed);
            }
        }

        for polled_before in [false, true] {
            let scheduler = Arc::new(Unwoken(Joiners::default()));
            let task = TaskCell::allocate(async { 5 }, scheduler.clone(), Location::caller());
            let mut handle = JoinHandle::new(&task);
            let first = Arc::new(Woken::default());
            if polled_before {
                let first = Waker::from(first.clone());
                let polled = Pin::new(&mut handle).poll(&mut Context::from_waker(&first));
                assert!(polled.is_pending());
            }
            *TO_RUN.lock().unwrap() = Some(task.task());
            let clones = CLONES.load(Ordering::Relaxed);
            let polled = Pin::new(&mut handle).poll(&mut Context::from_waker(&waker));
            assert_eq!(CLONES.load(Ordering::Relaxed), clones + 1, "left once");
            assert!(matches!(polled, Poll::Ready(Ok(5))));
            let woken = first.0.load(Ordering::Relaxed);
            assert_eq!(woken, usize::from(polled_before), "the first waker woken");
            let left = scheduler.0.waiting();
            assert_eq!(left, 0, "an entry outlived its wait ({polled_before})");
        }
    }

    /// A waker's `clone` is user code, and may do anything a task may,
    /// such as poll another `JoinHandle` of the same runtime: the table of
    /// joiners clones before it takes its lock, so that poll takes the lock
    /// freely (a clone under it would wait for itself forever).
    #[cfg(not(loom))]
    #[test]
    fn a_wakers_clone_may_join_another_task_of_the_same_scheduler() {
        use std::future::{Future, pending};
        use std::panic::Location;
        use std::pin::Pin;
        use std::sync::{Arc, Mutex};
        use std::task::{Context, RawWaker, RawWakerVTable, Waker};

        use super::TaskCell;
        use crate::task::JoinHandle;

        // The handle the clones of the waker poll, and how many did.
        static OTHER: Mutex<Option<JoinHandle<()>>> = Mutex::new(None);
        static POLLS: Mutex<usize> = Mutex::new(0);
        const VTABLE: RawWakerVTable = RawWakerVTable::new(clone, |_| {}, |_| {}, |_| {});
        fn clone(_: *const ()) -> RawWaker {
            if let Some(other) = OTHER.lock().unwrap().as_mut() {
                let noop = &mut Context::from_waker(Waker::noop());
                assert!(Pin::new(other).poll(noop).is_pending());
                *POLLS.lock().unwrap() += 1;
            }
            RawWaker::new(std::ptr::null(), &VTABLE)
        }
        // SAFETY: as in the test above: no data, every function sound to
        // call any number of times from any thread.
        #[allow(unsafe_code)]
        let waker = unsafe { Waker::from_raw(RawWaker::new(std::ptr::null(), &VTABLE)) };

        let scheduler = Arc::new(Unwoken(Joiners::default()));
        let here = Location::caller();
        let other = TaskCell::allocate(pending::<()>(), scheduler.clone(), here);
        *OTHER.lock().unwrap() = Some(JoinHandle::new(&other));
        let task = TaskCell::allocate(pending::<()>(), scheduler.clone(), here);
        let mut handle = JoinHandle::new(&task);
        let polled = Pin::new(&mut handle).poll(&mut Context::from_waker(&waker));
        assert!(polled.is_pending());
        assert_eq!(*POLLS.lock().unwrap(), 1);
        assert_eq!(scheduler.0.waiting(), 2, "both handles wait");
        drop(OTHER.lock().unwrap().take());
        drop(handle);
        assert_eq!(scheduler.0.waiting(), 0);
    }

    /// A cancel from another thread while the loop (or a pool thread)
    /// polls the task finds `RUNNING` held, and leaves the future to its
    /// poller: the task is not finished under the poll's feet; the poll,
    /// letting go, sees `CANCELLED`, drops the future and completes the task
    /// as cancelled. (loom's cancel models check the same across every
    /// interleaving; this one, on two threads in a fixed order, is in the
    /// fast set.)
    #[cfg(not(loom))]
    #[test]
    fn a_cancel_while_another_thread_polls_leaves_the_future_to_its_poller() {
        use std::future::{Future, poll_fn};
        use std::panic::Location;
        use std::pin::Pin;
        use std::sync::{Arc, Barrier};
        use std::task::{Context, Poll, Waker};

        use super::{Runnable, TaskCell};
        use crate::base::JoinError;
        use crate::task::JoinHandle;

        // Statics, so that the future holds nothing of them.
        static INSIDE: Barrier = Barrier::new(2);
        static LEAVE: Barrier = Barrier::new(2);
        let scheduler = Arc::new(Unwoken(Joiners::default()));
        let future = poll_fn(|_| {
            INSIDE.wait();
            LEAVE.wait();
            Poll::<()>::Pending
        });
        let task = TaskCell::allocate(future, scheduler, Location::caller());
        let mut handle = JoinHandle::new(&task);
        let poller = {
            let task = task.task();
            std::thread::spawn(move || task.run())
        };
        INSIDE.wait();
        task.cancel(JoinError::cancelled());
        assert!(!handle.is_finished(), "finished while its poll runs");
        LEAVE.wait();
        assert!(poller.join().unwrap(), "completed by the poll letting go");
        let joined = Pin::new(&mut handle).poll(&mut Context::from_waker(Waker::noop()));
        assert!(matches!(joined, Poll::Ready(Err(e)) if e.is_cancelled()));
    }

    /// The tests that read the lock count, kept in debug builds only (and
    /// loom has its own locks).
    #[cfg(all(debug_assertions, not(loom)))]
    mod locks {
        use std::panic::Location;

        use super::super::sites::{index, location};
        use crate::sync::lock::taken;

        #[track_caller]
        fn here() -> &'static Location<'static> {
            Location::caller()
        }

        /// A dump asks every task who joins it, and every task completes:
        /// a task whose handle never waited does either without the table's
        /// lock; one whose handle waits takes it once (naming the handle's
        /// waker, or taking it to wake).
        #[test]
        fn only_a_task_whose_handle_waits_looks_in_the_table_of_joiners() {
            use std::future::{Future, pending};
            use std::pin::Pin;
            use std::sync::Arc;
            use std::task::{Context, Waker};

            use super::super::{Runnable, TaskCell};
            use super::Unwoken;
            use crate::joiners::Joiners;
            use crate::task::JoinHandle;

            let scheduler = Arc::new(Unwoken(Joiners::default()));
            let task = TaskCell::allocate(pending::<()>(), scheduler, here());
            let mut handle = JoinHandle::new(&task);
            let before = taken();
            assert_eq!(task.joiner(), None);
            assert_eq!(taken(), before, "a lock for a task nobody waits for");

            let waker = Waker::noop();
            let polled = Pin::new(&mut handle).poll(&mut Context::from_waker(waker));
            assert!(polled.is_pending());
            let before = taken();
            assert_eq!(task.joiner(), Some(waker.data()));
            assert_eq!(taken(), before + 1);
            drop(handle);
            assert_eq!(task.joiner(), None);

            // Completing: no lock for a task whose handle never waited, one
            // for a task whose handle waits (to take its waker).
            for waits in [false, true] {
                let scheduler = Arc::new(Unwoken(Joiners::default()));
                let task = TaskCell::allocate(async {}, scheduler, here());
                let mut handle = JoinHandle::new(&task);
                if waits {
                    let polled = Pin::new(&mut handle).poll(&mut Context::from_waker(waker));
                    assert!(polled.is_pending());
                }
                let before = taken();
                assert!(task.task().run(), "completed");
                assert_eq!(taken() - before, u64::from(waits), "waits: {waits}");
                // Taking the output: the waker was taken by the completion
                // (or never left), so no lock either way.
                let before = taken();
                let joined = Pin::new(&mut handle).poll(&mut Context::from_waker(waker));
                assert!(joined.is_ready());
                assert_eq!(taken(), before, "the output taken, waits: {waits}");
            }

            // Dropping a handle: no lock unless it waits.
            for waits in [false, true] {
                let scheduler = Arc::new(Unwoken(Joiners::default()));
                let task = TaskCell::allocate(pending::<()>(), scheduler, here());
                let mut handle = JoinHandle::new(&task);
                if waits {
                    let polled = Pin::new(&mut handle).poll(&mut Context::from_waker(waker));
                    assert!(polled.is_pending());
                }
                let before = taken();
                drop(handle);
                assert_eq!(
                    taken() - before,
                    u64::from(waits),
                    "dropped, waits: {waits}"
                );
            }
        }

        /// A spawn from a site this thread indexed lately takes no lock:
        /// sites that fall in different entries of the thread's cache all
        /// stay there, however they take turns.
        #[test]
        fn sites_seen_lately_are_indexed_without_a_lock() {
            #[rustfmt::skip]
            let all = [
                here(), here(), here(), here(), here(), here(), here(), here(),
                here(), here(), here(), here(), here(), here(), here(), here(),
                here(), here(), here(), here(), here(), here(), here(), here(),
                here(), here(), here(), here(), here(), here(), here(), here(),
            ];
            // One site for each entry of the cache some site falls in.
            let mut entries = [None; 16];
            for location in all {
                let address = std::ptr::from_ref(location) as usize;
                entries[(address >> 3) % 16].get_or_insert(location);
            }
            let sites: Vec<_> = entries.into_iter().flatten().collect();
            assert!(
                sites.len() >= 4,
                "32 sites fall in {} of 16 entries",
                sites.len()
            );

            let before = taken();
            let first: Vec<u32> = sites.iter().map(|site| index(site)).collect();
            assert_eq!(
                taken() - before,
                sites.len() as u64,
                "each new site is entered once"
            );
            let before = taken();
            for _ in 0..3 {
                for (site, expected) in sites.iter().zip(&first).rev() {
                    assert_eq!(index(site), *expected);
                }
            }
            assert_eq!(
                taken(),
                before,
                "{} sites seen lately took a lock",
                sites.len()
            );
            for (site, at) in sites.iter().zip(&first) {
                assert!(std::ptr::eq(location(*at), *site));
            }
        }
    }
}
