//! One spawned task: its state bits, its future and, later, its output, in a
//! single allocation.
//!
//! A task is an `Arc<TaskCell<F, S>>`. The same `Arc` is the task's waker
//! (`std::task::Wake`), its entry in a run queue and in the runtime's list
//! of live tasks (as a [`Task`]), and the target of its `JoinHandle` (as
//! `Arc<dyn Join<T>>`). Spawning allocates once; waking clones the `Arc` at
//! most, which never allocates.
//!
//! The task knows nothing of the loop: waking it hands it to its scheduler
//! `S` ([`Schedule`]), which decides where it queues. A task's life has
//! three verbs: it is *run* (polled), *cancelled* (its future dropped), and
//! *completed* (its output stored and its joiner woken) by either.
//!
//! Only the loop thread polls a task, so the future is never polled from two
//! places at once. The `stage` mutex makes the cell `Sync` without an
//! `unsafe impl`, and is uncontended: the loop holds it while polling, the
//! join handle only once the task is complete. The one `unsafe` block is
//! the pinning of the future in place, which is what lets the future live
//! in the task's own allocation instead of a second `Box`.
//!
//! Wakers and destructors are user code. The loop calls them in many places
//! (after I/O events, when timers fire, when a task completes); a panic in
//! any of them is logged and the loop goes on, as Tornado logs an exception
//! raised by a handler and keeps serving: `wake_quietly`, `wake_all` and
//! `drop_quietly` at the end of this file.

use std::future::Future;
use std::panic::{AssertUnwindSafe, Location, catch_unwind};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

use super::join::{Join, JoinError};
use crate::sync::{AtomicUsize, Mutex, MutexGuard, Ordering};
use std::sync::atomic::AtomicU64;

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

/// The state word holds the bits above in its low `KEY_SHIFT` bits and the
/// task's slot in the loop's task list above them: one word instead of two
/// keeps a spawned task 8 bytes smaller.
const KEY_SHIFT: u32 = 6;
const BITS_MASK: usize = (1 << KEY_SHIFT) - 1;

/// `key` of a task that was spawned from another thread and has not been
/// entered into the loop's task list yet (every key bit set).
pub(crate) const UNREGISTERED: usize = usize::MAX >> KEY_SHIFT;

/// A spawned task, as a scheduler sees it, whatever its future's type.
pub(crate) type Task = Arc<dyn Runnable>;

/// Where a woken task goes: the one thing a task needs from the runtime.
pub(crate) trait Schedule: Send + Sync + 'static {
    /// Queues `task` to run.
    fn schedule(&self, task: Task);

    /// Queues `cell`, woken: [`schedule`](Self::schedule) through the
    /// cell's own scheduler. A scheduler may override it to queue the cell
    /// without a reference of its own to itself (two atomic operations on
    /// every wake, for a scheduler that is an `Arc`).
    fn schedule_cell<F: Future + 'static>(cell: Arc<TaskCell<F, Self>>)
    where
        Self: Sized,
    {
        let scheduler = cell.scheduler.clone();
        scheduler.schedule(cell);
    }
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
    fn cancel(&self, error: JoinError);
    /// Completes the task as cancelled without dropping its future, which
    /// is leaked: for a local task when its runtime is dropped away from
    /// its home thread.
    fn abandon(&self);
    /// Spawned by `spawn_local`: run and cancel only on its home thread.
    fn is_local(&self) -> bool;
    /// The task's slot in the loop's task list.
    fn key(&self) -> usize;
    /// Records the task's slot in the loop's task list: when it enters the
    /// list, and when the list is compacted.
    fn set_key(&self, key: usize);
    /// Where the task was spawned.
    fn location(&self) -> &'static Location<'static>;
    /// How many times the loop has polled the task.
    fn polls(&self) -> u64;
    /// Queued to run (`SCHEDULED`), and not complete.
    fn is_scheduled(&self) -> bool;
    /// The future is gone.
    fn is_complete(&self) -> bool;
    /// The data pointer of the waker of whoever awaits this task's
    /// `JoinHandle`, if someone does: matched against tasks by a dump.
    fn joiner(&self) -> Option<*const ()>;
}

/// Where the future is in its life.
enum Stage<F: Future> {
    Running(F),
    Finished(Result<F::Output, JoinError>),
    Consumed,
}

/// A task: state bits, its scheduler, its future or output, and the waker
/// of whoever awaits its `JoinHandle`.
pub(crate) struct TaskCell<F: Future, S> {
    /// State bits, and the task-list key above them.
    state: AtomicUsize,
    scheduler: Arc<S>,
    stage: Mutex<Stage<F>>,
    join_waker: Mutex<Option<Waker>>,
    /// Where the task was spawned, for the stall detector and the dump.
    location: &'static Location<'static>,
    /// Polls so far. Written by the loop only (a load and a store), read
    /// by a dump on any thread.
    polls: AtomicU64,
}

// SAFETY: a task is shared between threads (its `Arc` is its waker, and
// wakers go anywhere), but what it holds is reached in three ways only:
// the loop polls, cancels or completes it; the `JoinHandle` takes or drops
// the output; a waker touches the state word and the scheduler. For a task
// made by `new`, the future and output are `Send`, and the mutexes do the
// rest. For one made by `new_local` they need not be, and these hold
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
// SAFETY: as for `Send` above: every access to the future and output goes
// through the `stage` mutex, on the thread the invariants above allow.
#[allow(unsafe_code)]
unsafe impl<F: Future, S: Send + Sync> Sync for TaskCell<F, S> {}

impl<F: Future, S> TaskCell<F, S> {
    /// The scheduler the task goes back to when woken.
    pub(crate) fn scheduler(&self) -> &S {
        &self.scheduler
    }
}

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
            state: AtomicUsize::new(bits | (UNREGISTERED << KEY_SHIFT)),
            scheduler,
            stage: Mutex::new(Stage::Running(future)),
            join_waker: Mutex::new(None),
            location,
            polls: AtomicU64::new(0),
        })
    }

    /// Completes the task: drops the future in place, stores `output`, sets
    /// `COMPLETE` and hands the output to the `JoinHandle` (waking it), or
    /// drops it if the handle is gone.
    fn complete(&self, mut stage: MutexGuard<'_, Stage<F>>, output: Result<F::Output, JoinError>) {
        // The future's destructor is user code: a panic there must not
        // unwind into the loop. Its output is lost either way.
        let output = match catch_unwind(AssertUnwindSafe(|| *stage = Stage::Consumed)) {
            Ok(()) => output,
            Err(panic) => {
                log::error!("a task's future panicked while being dropped");
                Err(JoinError::panic(panic))
            }
        };
        *stage = Stage::Finished(output);
        drop(stage);
        let prev = self.state.fetch_or(COMPLETE, Ordering::AcqRel);
        if prev & DETACHED != 0 {
            let stage = std::mem::replace(&mut *self.stage.lock(), Stage::Consumed);
            drop_quietly(stage);
        } else if prev & JOINING != 0
            && let Some(waker) = self.join_waker.lock().take()
        {
            wake_quietly(waker);
        }
    }

    /// Drops the future if it is still there, completing the task with
    /// `error`; returns whether it was there.
    fn cancel_future(&self, error: JoinError) -> bool {
        let stage = self.stage.lock();
        if !matches!(*stage, Stage::Running(_)) {
            return false;
        }
        self.complete(stage, Err(error));
        true
    }

    /// Polls the future once with `cx` and, if that finished it, completes
    /// the task. Returns whether it completed.
    #[allow(unsafe_code)]
    fn poll_future(&self, cx: &mut Context<'_>, blocking: bool) -> bool {
        let mut stage = self.stage.lock();
        let Stage::Running(future) = &mut *stage else {
            return false;
        };
        // SAFETY: the future lives inside the task's `Arc` allocation, which
        // never moves, and it is only ever reached through this `stage`
        // mutex. It leaves `Stage::Running` only by being dropped in place
        // (`complete` assigns over it), so the pinning contract holds: the
        // future is not moved between this poll and its drop.
        let future = unsafe { Pin::new_unchecked(future) };
        let output = match catch_unwind(AssertUnwindSafe(|| future.poll(cx))) {
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
        self.complete(stage, output);
        true
    }

    fn is_cancelled(&self) -> bool {
        self.state.load(Ordering::Acquire) & CANCELLED != 0
    }

    /// Puts the task in a run queue unless it is already in one or done.
    fn schedule(self: Arc<Self>) {
        let prev = self.state.fetch_or(SCHEDULED, Ordering::AcqRel);
        if prev & (SCHEDULED | COMPLETE) == 0 {
            S::schedule_cell(self);
        }
    }
}

impl<F, S> Runnable for TaskCell<F, S>
where
    F: Future + 'static,
    S: Schedule,
{
    fn run(self: Arc<Self>) -> bool {
        let prev = self.state.fetch_and(!SCHEDULED, Ordering::AcqRel);
        if prev & COMPLETE != 0 {
            // A stale queue entry: the task completed since it was queued,
            // and whoever completed it already reported so.
            return false;
        }
        if prev & CANCELLED != 0 {
            return self.cancel_future(JoinError::cancelled());
        }
        // Only the loop thread polls, so a load and a store suffice.
        self.polls
            .store(self.polls.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
        let waker = Waker::from(self.clone());
        self.poll_future(&mut Context::from_waker(&waker), false)
    }

    fn run_blocking(self: Arc<Self>) {
        // `SCHEDULED` is never cleared for a blocking task: it was set at
        // spawn and stays set, so no wake or abort can ever queue it on the
        // loop (where polling it would block on the stage lock while the
        // closure runs here).
        if self.is_cancelled() {
            self.cancel_future(JoinError::cancelled());
            return;
        }
        // A blocking closure completes in one poll and never wakes itself.
        if !self.poll_future(&mut Context::from_waker(Waker::noop()), true) {
            self.cancel_future(JoinError::cancelled());
        }
    }

    fn cancel(&self, error: JoinError) {
        // Marked cancelled too: a blocking closure running meanwhile has
        // its result dropped, as an abort would.
        self.state.fetch_or(CANCELLED, Ordering::AcqRel);
        self.cancel_future(error);
    }

    fn abandon(&self) {
        let mut stage = self.stage.lock();
        if matches!(*stage, Stage::Running(_)) {
            std::mem::forget(std::mem::replace(&mut *stage, Stage::Consumed));
            self.complete(stage, Err(JoinError::cancelled()));
        }
    }

    fn is_local(&self) -> bool {
        self.state.load(Ordering::Relaxed) & LOCAL != 0
    }

    fn key(&self) -> usize {
        self.state.load(Ordering::Relaxed) >> KEY_SHIFT
    }

    fn set_key(&self, key: usize) {
        // Only the loop thread sets the key bits; wakers may be changing the
        // state bits concurrently, and keep their changes.
        debug_assert!(key < UNREGISTERED);
        let mut state = self.state.load(Ordering::Relaxed);
        loop {
            let new = (state & BITS_MASK) | (key << KEY_SHIFT);
            match self
                .state
                .compare_exchange_weak(state, new, Ordering::Relaxed, Ordering::Relaxed)
            {
                Ok(_) => return,
                Err(actual) => state = actual,
            }
        }
    }

    fn location(&self) -> &'static Location<'static> {
        self.location
    }

    fn polls(&self) -> u64 {
        self.polls.load(Ordering::Relaxed)
    }

    fn is_scheduled(&self) -> bool {
        self.state.load(Ordering::Relaxed) & (SCHEDULED | COMPLETE) == SCHEDULED
    }

    fn is_complete(&self) -> bool {
        self.state.load(Ordering::Acquire) & COMPLETE != 0
    }

    fn joiner(&self) -> Option<*const ()> {
        self.join_waker.lock().as_ref().map(Waker::data)
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
        if self.state.load(Ordering::Acquire) & (SCHEDULED | COMPLETE) == 0 {
            self.clone().schedule();
        }
    }
}

impl<F, S> Join<F::Output> for TaskCell<F, S>
where
    F: Future + 'static,
    S: Schedule,
{
    fn poll_join(&self, cx: &mut Context<'_>) -> Poll<Result<F::Output, JoinError>> {
        if self.state.load(Ordering::Acquire) & COMPLETE == 0 {
            let old = {
                let mut slot = self.join_waker.lock();
                match &*slot {
                    Some(w) if w.will_wake(cx.waker()) => None,
                    _ => slot.replace(cx.waker().clone()),
                }
            };
            // Dropped outside the lock: a waker's drop can run arbitrary code.
            drop(old);
            // Our bit and `complete`'s are set in one word: whichever is set
            // second sees the first. So either `complete` sees `JOINING` and
            // takes the waker, or we see `COMPLETE` here.
            if self.state.fetch_or(JOINING, Ordering::AcqRel) & COMPLETE == 0 {
                return Poll::Pending;
            }
        }
        match std::mem::replace(&mut *self.stage.lock(), Stage::Consumed) {
            Stage::Finished(output) => {
                // Nothing is left for `detach` to drop or take: the output
                // is ours, and a join waker still in its slot (registered
                // as the task completed) goes with the task.
                self.state.fetch_or(DETACHED, Ordering::Release);
                Poll::Ready(output)
            }
            _ => panic!("JoinHandle polled after it returned its output"),
        }
    }

    fn abort(self: Arc<Self>) {
        let prev = self.state.fetch_or(CANCELLED, Ordering::AcqRel);
        if prev & (CANCELLED | COMPLETE) == 0 {
            self.schedule();
        }
    }

    fn is_finished(&self) -> bool {
        self.state.load(Ordering::Acquire) & COMPLETE != 0
    }

    fn detach(&self) {
        // The handle took the output (see `poll_join`): nothing to do.
        if self.state.load(Ordering::Acquire) & DETACHED != 0 {
            return;
        }
        let prev = self.state.fetch_or(DETACHED, Ordering::AcqRel);
        // Only the handle sets `JOINING`, and it is being dropped: no
        // waker can be left unless the bit is there already.
        if prev & JOINING != 0 {
            let waker = self.join_waker.lock().take();
            drop(waker);
        }
        if prev & COMPLETE != 0 {
            let stage = std::mem::replace(&mut *self.stage.lock(), Stage::Consumed);
            drop_quietly(stage);
        }
    }
}

/// Wakes `waker`; a panic inside it is logged, not propagated.
pub(crate) fn wake_quietly(waker: Waker) {
    if let Err(panic) = catch_unwind(AssertUnwindSafe(|| waker.wake())) {
        log::error!(
            "a waker panicked ({}); the loop goes on",
            super::join::describe(&*panic)
        );
    }
}

/// Wakes every waker in `wakers`, leaving the vector empty but keeping its
/// capacity, so the loop can reuse it without allocating.
pub(crate) fn wake_all(wakers: &mut Vec<Waker>) {
    for waker in wakers.drain(..) {
        wake_quietly(waker);
    }
}

/// Drops `value`; a panic in its destructor is logged, not propagated.
pub(crate) fn drop_quietly<T>(value: T) {
    if let Err(panic) = catch_unwind(AssertUnwindSafe(|| drop(value))) {
        log::error!(
            "a destructor panicked ({}); the loop goes on",
            super::join::describe(&*panic)
        );
    }
}

#[cfg(all(test, loom))]
mod loom_model;
