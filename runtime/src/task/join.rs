//! `JoinHandle`, the awaitable end of a spawned task, `AbortHandle`, a
//! way to abort it alone, and what `JoinError` (defined in `base.rs`) tells
//! its user.

use std::any::Any;
use std::fmt;
use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::ptr::NonNull;
use std::task::{Context, Poll, ready};

use crate::base::budget;
use crate::base::{JoinError, Repr, panic_message};
use crate::event_loop::cell::{Schedule, Task, Typed};

/// An owned permission to await a spawned task's output.
///
/// Awaiting the handle gives `Ok(output)` once the task has finished, or a
/// [`JoinError`] if it panicked or was aborted. A task that panicked had
/// its future dropped while the panic unwound, before the error reached
/// the handle (see [`spawn`](crate::spawn)). Dropping the handle detaches
/// the task: it keeps running and its output is dropped when it finishes.
///
/// `JoinHandle<T>` is `Send` and `Sync` when `T` is `Send`, so it can be
/// awaited or aborted from any thread.
///
/// ```
/// let sum = ioloop::block_on(async {
///     let a = ioloop::spawn(async { 20 });
///     let b = ioloop::spawn(async { 22 });
///     a.await.unwrap() + b.await.unwrap()
/// });
/// assert_eq!(sum, 42);
/// ```
///
/// Taking the output spends one unit of the awaiting task's cooperative
/// budget (see [`poll_budget`](crate::task::poll_budget)), as in tokio; a
/// poll that finds the task still running spends nothing.
///
/// # Panics
///
/// Polling a handle again after it returned `Ready` panics.
#[doc(alias = "Task")]
#[must_use = "the task runs on if its JoinHandle is dropped (it is detached): await the handle for the output, or `drop` it to say the task is meant to run alone"]
pub struct JoinHandle<T> {
    task: Task,
    /// `Send` and `Sync` only if `T` is `Send` (a `spawn_local` task's
    /// `!Send` output must be taken on the thread that spawned it), and
    /// `Unpin` whatever `T` is (a `Box` always is).
    _output: PhantomData<Box<std::sync::Mutex<T>>>,
}

impl<T> JoinHandle<T> {
    pub(crate) fn new<F, S>(task: &Typed<F, S>) -> Self
    where
        F: Future<Output = T> + 'static,
        S: Schedule,
    {
        JoinHandle {
            task: task.task(),
            _output: PhantomData,
        }
    }

    /// Asks the loop to drop the task's future.
    ///
    /// The future is dropped (its destructors run) the next time the loop
    /// picks the task up, or as soon as a poll of it running meanwhile
    /// returns (an abort from inside the task, or from another thread
    /// during the poll), unless the task finishes first; awaiting the
    /// handle then gives a [`JoinError`] for which
    /// [`is_cancelled`](JoinError::is_cancelled) is true. Aborting a task
    /// that has already finished does nothing.
    ///
    /// ```
    /// ioloop::block_on(async {
    ///     let task = ioloop::spawn(std::future::pending::<()>());
    ///     task.abort();
    ///     assert!(task.await.unwrap_err().is_cancelled());
    /// });
    /// ```
    pub fn abort(&self) {
        self.task.clone().abort();
    }

    /// Returns `true` once the task has finished: returned, panicked or been
    /// cancelled. Never waits.
    ///
    /// ```
    /// ioloop::block_on(async {
    ///     let task = ioloop::spawn(async {});
    ///     assert!(!task.is_finished());
    ///     ioloop::yield_now().await;
    ///     assert!(task.is_finished());
    /// });
    /// ```
    pub fn is_finished(&self) -> bool {
        self.task.is_complete()
    }

    /// An [`AbortHandle`] for this task.
    pub fn abort_handle(&self) -> AbortHandle {
        AbortHandle(self.task.clone())
    }
}

/// A permission to abort a task, not to await it, nor generic over its
/// output: from [`JoinHandle::abort_handle`] and
/// [`JoinSet::spawn`](crate::task::JoinSet::spawn), as in tokio. Dropping
/// it leaves the task be; until then it keeps the task's memory (not its
/// future or output).
///
/// ```
/// ioloop::block_on(async {
///     let task = ioloop::spawn(std::future::pending::<()>());
///     let abort = task.abort_handle();
///     abort.abort();
///     assert!(task.await.unwrap_err().is_cancelled());
///     assert!(abort.is_finished());
/// });
/// ```
pub struct AbortHandle(Task);

impl AbortHandle {
    /// Aborts the task, as [`JoinHandle::abort`] does.
    pub fn abort(&self) {
        self.0.clone().abort();
    }

    /// As [`JoinHandle::is_finished`]: still `false` right after
    /// [`abort`](Self::abort), until the loop has dropped the future.
    pub fn is_finished(&self) -> bool {
        self.0.is_complete()
    }
}

impl fmt::Debug for AbortHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AbortHandle")
            .field("finished", &self.is_finished())
            .finish()
    }
}

impl<T> Future for JoinHandle<T> {
    type Output = Result<T, JoinError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        // Taking the output spends a unit of the task's budget (a poll that
        // finds the task still running gives it back): a loop awaiting
        // many finished tasks yields as one reading a busy socket does.
        ready!(budget::poll_budget(cx));
        let mut poll: Option<Poll<Self::Output>> = None;
        // SAFETY: `new` made this handle from a task whose output is `T`.
        #[allow(unsafe_code)]
        unsafe {
            self.task.poll_join(cx, NonNull::from(&mut poll).cast())
        };
        let poll = poll.expect("a task's poll_join stores its result");
        if poll.is_pending() {
            budget::refund();
        }
        poll
    }
}

impl<T> Drop for JoinHandle<T> {
    fn drop(&mut self) {
        self.task.detach();
    }
}

impl<T> fmt::Debug for JoinHandle<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JoinHandle")
            .field("finished", &self.is_finished())
            .finish()
    }
}

impl JoinError {
    /// Returns `true` if the task was aborted, or dropped because its
    /// runtime shut down.
    ///
    /// ```
    /// ioloop::block_on(async {
    ///     let task = ioloop::spawn(std::future::pending::<()>());
    ///     task.abort();
    ///     assert!(task.await.unwrap_err().is_cancelled());
    /// });
    /// ```
    pub fn is_cancelled(&self) -> bool {
        matches!(*self.repr, Repr::Cancelled)
    }

    /// Returns `true` if the task panicked.
    ///
    /// ```
    /// ioloop::block_on(async {
    ///     let err = ioloop::spawn(async { panic!("boom") }).await.unwrap_err();
    ///     assert!(err.is_panic());
    /// });
    /// ```
    pub fn is_panic(&self) -> bool {
        matches!(*self.repr, Repr::Panic(_))
    }

    /// Returns the payload the task panicked with, for
    /// [`std::panic::resume_unwind`] or inspection.
    ///
    /// # Panics
    ///
    /// Panics if the task did not panic (it was cancelled); use
    /// [`try_into_panic`](JoinError::try_into_panic) to find out first.
    ///
    /// ```
    /// ioloop::block_on(async {
    ///     let err = ioloop::spawn(async { panic!("boom") }).await.unwrap_err();
    ///     assert_eq!(err.into_panic().downcast_ref::<&str>(), Some(&"boom"));
    /// });
    /// ```
    pub fn into_panic(self) -> Box<dyn Any + Send + 'static> {
        self.try_into_panic()
            .expect("JoinError::into_panic called on the error of a task that did not panic")
    }

    /// Returns the panic payload, or the error itself if the task was
    /// cancelled.
    ///
    /// # Errors
    ///
    /// Gives `self` back when the task did not panic.
    ///
    /// ```
    /// ioloop::block_on(async {
    ///     let task = ioloop::spawn(std::future::pending::<()>());
    ///     task.abort();
    ///     let err = task.await.unwrap_err();
    ///     assert!(err.try_into_panic().unwrap_err().is_cancelled());
    /// });
    /// ```
    pub fn try_into_panic(self) -> Result<Box<dyn Any + Send + 'static>, JoinError> {
        match *self.repr {
            Repr::Panic(payload) => Ok(payload.into_inner()),
            Repr::Cancelled | Repr::NoThread(_) => Err(self),
        }
    }
}

impl fmt::Display for JoinError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &*self.repr {
            Repr::Cancelled => f.write_str("task was cancelled"),
            Repr::Panic(payload) => match panic_message(&**payload.lock()) {
                Some(message) => write!(f, "task panicked: {message}"),
                None => f.write_str("task panicked"),
            },
            Repr::NoThread(err) => write!(f, "no thread could be started to run the job: {err}"),
        }
    }
}

impl fmt::Debug for JoinError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &*self.repr {
            Repr::Cancelled => f.write_str("JoinError::Cancelled"),
            Repr::NoThread(err) => write!(f, "JoinError::NoThread({err:?})"),
            Repr::Panic(payload) => match panic_message(&**payload.lock()) {
                Some(message) => write!(f, "JoinError::Panic({message:?})"),
                None => f.write_str("JoinError::Panic(..)"),
            },
        }
    }
}

impl std::error::Error for JoinError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &*self.repr {
            Repr::NoThread(err) => Some(err),
            _ => None,
        }
    }
}

impl From<JoinError> for std::io::Error {
    fn from(err: JoinError) -> Self {
        std::io::Error::other(err)
    }
}
