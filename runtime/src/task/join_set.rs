//! `JoinSet`: a group of tasks whose results come back as they finish.
//!
//! - `table`: the set's tasks by id, in a hash table with a fixed hasher,
//!   and when the set's tables give memory back.
//! - `waiters`: the tasks waiting on a set, each woken when one of its
//!   tasks finishes.

mod table;
mod waiters;

use std::collections::VecDeque;
use std::fmt;
use std::future::{Future, poll_fn};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use crate::sync::lock::Mutex;

use super::join::{AbortHandle, JoinHandle};
use crate::base::{JoinError, budget};
use table::{Tasks, shrunk};
use waiters::Waiters;

/// A group of tasks, whose results [`join_next`](Self::join_next) hands
/// back in the order they finish: asyncio's `TaskGroup` and `gather`,
/// tokio's `JoinSet`.
///
/// Dropping the set aborts every task still in it. A set that lives on
/// gives back the memory a burst of tasks made it grow to as it drains.
/// Its order (of [`abort_all`](Self::abort_all), or of the aborts when it
/// drops) is the same on every run of a program, so a seeded run
/// ([`Builder::scheduler`](crate::Builder::scheduler)) replays.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use ioloop::task::JoinSet;
///
/// ioloop::block_on(async {
///     let mut set = JoinSet::new();
///     for ms in [30u64, 10, 20] {
///         set.spawn(async move {
///             ioloop::time::sleep(Duration::from_millis(ms)).await;
///             ms
///         });
///     }
///     let mut order = Vec::new();
///     while let Some(done) = set.join_next().await {
///         order.push(done.unwrap());
///     }
///     assert_eq!(order, [10, 20, 30]);
/// });
/// ```
#[doc(alias = "TaskGroup")]
#[doc(alias = "gather")]
pub struct JoinSet<T> {
    tasks: Tasks<T>,
    done: Arc<Mutex<Done>>,
    next_id: u64,
}

/// The tasks that finished and are not joined yet, in order, and the
/// tasks waiting on the set.
#[derive(Default)]
struct Done {
    ids: VecDeque<u64>,
    waiters: Waiters,
}

/// Dropped when its task's future ends, however it ends (output, panic,
/// abort): queues the task's id and wakes the set's waiters, after
/// letting go of the lock.
struct Notify {
    id: u64,
    done: Arc<Mutex<Done>>,
}

impl Drop for Notify {
    fn drop(&mut self) {
        let waiters = {
            let mut done = self.done.lock();
            done.ids.push_back(self.id);
            std::mem::take(&mut done.waiters)
        };
        waiters.wake();
    }
}

/// `future`, holding the [`Notify`] that tells the set when it ends
/// (dropped with it, however it ends).
async fn notifying<F: Future>(future: F, _notify: Notify) -> F::Output {
    future.await
}

impl<T> JoinSet<T> {
    /// An empty set.
    pub fn new() -> Self {
        JoinSet {
            tasks: Tasks::default(),
            done: Arc::default(),
            next_id: 0,
        }
    }

    /// How many tasks are in the set: running, or finished and not joined.
    pub fn len(&self) -> usize {
        self.tasks.len()
    }

    /// Whether the set holds no task.
    pub fn is_empty(&self) -> bool {
        self.tasks.is_empty()
    }

    /// Spawns `future` into the set, as [`spawn`](crate::spawn) does, and
    /// returns an [`AbortHandle`] for that one task: dropping it leaves the
    /// task be; aborting it makes [`join_next`](Self::join_next) give a
    /// cancelled [`JoinError`] for it.
    ///
    /// # Panics
    ///
    /// As [`spawn`](crate::spawn): outside an ioloop runtime. The set is
    /// then unchanged: a caught panic leaves it usable as it was.
    #[track_caller]
    pub fn spawn<F>(&mut self, future: F) -> AbortHandle
    where
        F: Future<Output = T> + Send + 'static,
        T: Send + 'static,
    {
        let (id, notify) = self.notify();
        self.insert(id, crate::spawn(notifying(future, notify)))
    }

    /// Spawns `future`, which need not be `Send`, into the set, as
    /// [`spawn_local`](crate::spawn_local) does.
    ///
    /// # Panics
    ///
    /// As [`spawn_local`](crate::spawn_local): off a loop's thread. The set
    /// is then unchanged, as for [`spawn`](Self::spawn), whose
    /// [`AbortHandle`] it returns too.
    #[track_caller]
    pub fn spawn_local<F>(&mut self, future: F) -> AbortHandle
    where
        F: Future<Output = T> + 'static,
        T: 'static,
    {
        let (id, notify) = self.notify();
        self.insert(id, crate::spawn_local(notifying(future, notify)))
    }

    /// Keeps `handle` under `id`, and gives its task's [`AbortHandle`].
    fn insert(&mut self, id: u64, handle: JoinHandle<T>) -> AbortHandle {
        let abort = handle.abort_handle();
        self.tasks.insert(id, handle);
        abort
    }

    /// The next id, and the [`Notify`] of a task spawned under it. If the
    /// spawn fails (and panics), the id is queued as done with no task
    /// under it, and skipped by the next [`poll_join_next`](Self::poll_join_next).
    fn notify(&mut self) -> (u64, Notify) {
        let id = self.next_id;
        self.next_id += 1;
        let done = self.done.clone();
        (id, Notify { id, done })
    }

    /// Waits for the next task to finish and returns its result, or `None`
    /// once the set is empty.
    ///
    /// Each result taken spends one unit of the task's cooperative budget,
    /// as awaiting a [`JoinHandle`] does (and as tokio's `join_next` does):
    /// draining a set of many finished tasks yields every 128 results, so
    /// other tasks run in between.
    ///
    /// # Cancellation
    ///
    /// Cancel-safe: a result is taken out of the set only when this returns
    /// it.
    pub async fn join_next(&mut self) -> Option<Result<T, JoinError>> {
        poll_fn(|cx| self.poll_join_next(cx)).await
    }

    /// Takes the result of a task that has finished, without waiting:
    /// `None` if none has (or the set is empty). Spends no budget, as
    /// tokio's does not: it cannot yield. Leaves the waker of a task
    /// waiting in [`join_next`](Self::join_next) in place, as tokio's does.
    pub fn try_join_next(&mut self) -> Option<Result<T, JoinError>> {
        match budget::without_limit(|| self.next(None)) {
            Poll::Ready(result) => result,
            Poll::Pending => None,
        }
    }

    /// Waits for every task and returns their outputs, in the order they
    /// finished: [`join_next`](Self::join_next) in a loop, as tokio's
    /// `join_all`.
    ///
    /// # Panics
    ///
    /// If a task failed, as tokio's does, and the set is dropped on the
    /// way, aborting the tasks still in it: a task's panic is resumed here
    /// (with its payload); an aborted task's [`JoinError`] is a panic with
    /// its message. To handle failures, call `join_next` in a loop instead.
    pub async fn join_all(mut self) -> Vec<T> {
        let mut outputs = Vec::with_capacity(self.len());
        while let Some(result) = self.join_next().await {
            match result {
                Ok(output) => outputs.push(output),
                Err(err) => match err.try_into_panic() {
                    Ok(payload) => std::panic::resume_unwind(payload),
                    Err(err) => panic!("{err}"),
                },
            }
        }
        outputs
    }

    /// Polls for the next task to finish; see [`join_next`](Self::join_next).
    ///
    /// Every task waiting on the set (sharing it behind a lock) is woken
    /// when one of its tasks finishes, and when the set is emptied by
    /// [`detach_all`](Self::detach_all); tokio's wakes only the latest to
    /// poll, and the others may wait for good.
    pub fn poll_join_next(&mut self, cx: &mut Context<'_>) -> Poll<Option<Result<T, JoinError>>> {
        self.next(Some(cx))
    }

    /// The result of the next task to finish, or `None` once the set is
    /// empty. `Pending` if none has finished: `cx`'s waker, if there is
    /// one, is then woken when one does. `try_join_next` gives none, so
    /// that it leaves the waker of a task waiting in `join_next` in place
    /// (it stored a no-op waker over it, and that task hung: bug 4 of
    /// issue 40).
    fn next(&mut self, cx: Option<&mut Context<'_>>) -> Poll<Option<Result<T, JoinError>>> {
        if self.tasks.is_empty() {
            return Poll::Ready(None);
        }
        let mut done = self.done.lock();
        // An id with no task under it is one whose spawn failed.
        let tasks = &self.tasks;
        let next = std::iter::from_fn(|| done.ids.pop_front()).find(|id| tasks.contains_key(id));
        let Some(id) = next else {
            if let Some(cx) = cx {
                done.waiters.add(cx.waker());
            }
            return Poll::Pending;
        };
        if let Some(room) = shrunk(done.ids.len(), done.ids.capacity()) {
            done.ids.shrink_to(room);
        }
        drop(done);
        let handle = self
            .tasks
            .get_mut(&id)
            .expect("a task that finished is in the set until joined");
        // The task's future has ended; its output is stored right after,
        // so this is ready at once, unless the set is polled on another
        // thread than the loop's: the id then goes back to the front, and
        // the handle wakes this task once the output is in. With no waker
        // of its own (`try_join_next`), the handle is polled only once the
        // output is in, so that its poll parks no waker.
        let poll = match cx {
            Some(cx) => Pin::new(handle).poll(cx),
            None if handle.is_finished() => {
                Pin::new(handle).poll(&mut Context::from_waker(Waker::noop()))
            }
            None => Poll::Pending,
        };
        let Poll::Ready(result) = poll else {
            self.done.lock().ids.push_front(id);
            return Poll::Pending;
        };
        self.tasks.remove(&id);
        if let Some(room) = shrunk(self.tasks.len(), self.tasks.capacity()) {
            self.tasks.shrink_to(room);
        }
        Poll::Ready(Some(result))
    }

    /// Aborts every task in the set. They stay in it until joined, each
    /// then giving a cancelled [`JoinError`] (or its output, if it had
    /// finished first).
    pub fn abort_all(&self) {
        for handle in self.tasks.values() {
            handle.abort();
        }
    }

    /// Removes every task from the set without aborting it: each runs on
    /// to its end, as a dropped [`JoinHandle`]'s does, even once the set is
    /// dropped. The set is then empty, and as new.
    pub fn detach_all(&mut self) {
        // Dropping a handle detaches its task. A new `Done`: the detached
        // tasks queue their ids on the old one as they end, and it goes
        // with the last of them. Whoever waits on the set (sharing it
        // with this caller) is woken, to find it empty.
        self.tasks = Tasks::default();
        let old = std::mem::take(&mut self.done);
        let waiters = std::mem::take(&mut old.lock().waiters);
        waiters.wake();
    }

    /// Aborts every task and waits until all have ended, dropping their
    /// results.
    pub async fn shutdown(&mut self) {
        self.abort_all();
        while self.join_next().await.is_some() {}
    }
}

impl<T> Default for JoinSet<T> {
    fn default() -> Self {
        JoinSet::new()
    }
}

/// Spawns each future into the set, as [`spawn`](JoinSet::spawn) does.
impl<T, F> Extend<F> for JoinSet<T>
where
    F: Future<Output = T> + Send + 'static,
    T: Send + 'static,
{
    fn extend<I: IntoIterator<Item = F>>(&mut self, futures: I) {
        for future in futures {
            self.spawn(future);
        }
    }
}

/// A set of a task per future, as [`Extend`] makes them.
///
/// ```
/// use ioloop::task::JoinSet;
///
/// ioloop::block_on(async {
///     let set: JoinSet<_> = (1..=3).map(|n| async move { n * 10 }).collect();
///     let mut outputs = set.join_all().await;
///     outputs.sort();
///     assert_eq!(outputs, [10, 20, 30]);
/// });
/// ```
impl<T, F> FromIterator<F> for JoinSet<T>
where
    F: Future<Output = T> + Send + 'static,
    T: Send + 'static,
{
    fn from_iter<I: IntoIterator<Item = F>>(futures: I) -> Self {
        let mut set = JoinSet::new();
        set.extend(futures);
        set
    }
}

impl<T> Drop for JoinSet<T> {
    fn drop(&mut self) {
        self.abort_all();
    }
}

impl<T> fmt::Debug for JoinSet<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JoinSet").field("len", &self.len()).finish()
    }
}
