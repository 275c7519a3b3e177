//! Running blocking code off the loop: [`spawn_blocking`].
//!
//! - `pool`: the threads, started on demand, retired when idle.

pub(crate) mod pool;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use crate::context;
use crate::handle::Handle;
use crate::shared::Shared;
use crate::task::{JoinHandle, TaskCell};

/// Runs `f` on a thread of the runtime's blocking pool and returns a handle
/// to await its result, without blocking the loop.
///
/// For work that would stall every task if it ran on the loop thread: a
/// slow computation (the cookbook's `fib(n)`), a blocking library call,
/// file I/O. While it runs the loop serves everything else, and sleeps in
/// the poller if there is nothing else; the closure's completion wakes the
/// task awaiting the handle.
///
/// The closure runs with the runtime as its context:
/// [`Handle::current`], [`spawn`](crate::spawn), `spawn_blocking` and
/// sockets reach the runtime that started the job. A future it polls itself
/// (with `futures::executor::block_on`, or a [`Runtime::block_on`] waiting
/// its turn) can sleep and do I/O on that runtime.
///
/// [`Runtime::block_on`]: crate::Runtime::block_on
///
/// # Panics
///
/// If called outside an ioloop runtime; use
/// [`Handle::spawn_blocking`] from other threads.
///
/// # Cancellation
///
/// A closure that has started cannot be stopped. [`JoinHandle::abort`]
/// before it starts means it never runs; after, it runs to the end and its
/// result is dropped: the handle reports [`is_cancelled`] once the closure
/// has returned. Dropping the handle lets the closure finish and drops its
/// result.
///
/// # Errors
///
/// The handle gives a [`JoinError`](crate::JoinError) if `f` panics
/// ([`is_panic`]), if the handle was aborted, or if no pool thread could be
/// started to run it (the error's `source()` is the OS error).
///
/// [`is_cancelled`]: crate::JoinError::is_cancelled
/// [`is_panic`]: crate::JoinError::is_panic
///
/// # Examples
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
    match Handle::try_current() {
        Some(handle) => handle.spawn_blocking(f),
        None => panic!(
            "ioloop::spawn_blocking called outside an ioloop runtime: call it from inside \
             block_on or a task, or use Handle::spawn_blocking from other threads"
        ),
    }
}

impl Handle {
    /// Runs `f` on this runtime's blocking pool, from any thread. See
    /// [`spawn_blocking`].
    ///
    /// # Examples
    ///
    /// ```
    /// let rt = ioloop::Runtime::new().unwrap();
    /// let handle = rt.handle().clone();
    /// let job = std::thread::spawn(move || handle.spawn_blocking(|| 6 * 7)).join().unwrap();
    /// assert_eq!(rt.block_on(job).unwrap(), 42);
    /// ```
    pub fn spawn_blocking<F, T>(&self, f: F) -> JoinHandle<T>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        let job = Blocking(Some((f, self.shared().clone())));
        let task = TaskCell::new(job, self.shared().clone());
        let handle = JoinHandle::new(task.clone());
        self.shared().pool.spawn(task);
        handle
    }
}

/// A closure dressed as a future that completes on its first poll, so a
/// blocking job is the same single-allocation task as a spawned future.
/// It runs working for its runtime (see `context::work_for`).
struct Blocking<F>(Option<(F, Arc<Shared>)>);

// The closure is never pinned: it is moved out and called.
impl<F> Unpin for Blocking<F> {}

impl<F: FnOnce() -> T, T> Future for Blocking<F> {
    type Output = T;

    fn poll(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<T> {
        let (f, shared) = self.0.take().expect("a blocking job runs once");
        let _working = context::work_for(shared);
        Poll::Ready(f())
    }
}
