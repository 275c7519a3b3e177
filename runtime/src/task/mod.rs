//! Tasks: spawning, joining, yielding.
//!
//! - `cell`: the task itself (state bits, future, output) in one
//!   allocation, and how waking it schedules it.
//! - `join`: [`JoinHandle`] and [`JoinError`].
//! - `yield_now`: giving the loop a turn ([`yield_now()`]).
//! - `budget`: how much I/O a task may do per poll before it must yield.

pub(crate) mod budget;
pub use budget::{Unconstrained, consume_budget, poll_budget, unconstrained};
mod cell;
mod join;
mod yield_now;

use std::future::Future;

pub(crate) use cell::{Runnable, TaskCell, UNREGISTERED};
pub use join::{JoinError, JoinHandle};
pub use yield_now::{YieldNow, yield_now};

use crate::context;

/// Runs `future` as a new task on the runtime running on this thread, and
/// returns a handle to await its output.
///
/// The task starts on the loop's next tick; it runs concurrently with the
/// caller and every other task, on the same thread. Dropping the handle
/// detaches the task (it keeps running).
///
/// # Panics
///
/// If called outside an ioloop runtime: outside `block_on`, its tasks and
/// the runtime's blocking jobs. From another thread, use
/// [`Handle::spawn`](crate::Handle::spawn).
///
/// # Examples
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
    let mut future = Some(future);
    let local = context::with_core(|core| {
        let core = core?;
        let task = TaskCell::new(future.take()?, core.shared.clone());
        let handle = JoinHandle::new(task.clone());
        core.register(task);
        Some(handle)
    });
    match local {
        Some(handle) => handle,
        None => match context::working_for() {
            // A blocking job (or a `block_on` waiting its turn): hand the
            // task to the loop, wherever it runs.
            Some(shared) => crate::Handle::new(shared).spawn(future.take().expect("not spawned")),
            None => panic!(
                "ioloop::spawn called outside an ioloop runtime: call it from inside \
                 block_on, a task or a blocking job, or use Handle::spawn from other threads"
            ),
        },
    }
}
