//! The cooperative budget: how many I/O operations a task may complete in
//! one poll before it is made to yield.
//!
//! A task only gives the loop back when it returns `Pending`. A task whose
//! sockets are always ready (an echo loop on loopback, an accept loop under
//! a burst of connections) never does, and would starve every other task,
//! the timers and the poller. So each poll starts with a budget; every
//! readiness check on a registration spends one unit, and when none is
//! left the check returns `Pending` after waking the task, which sends it
//! to the back of the run queue, behind the next poll of the OS.
//!
//! Taking a finished task's output (awaiting a `JoinHandle`, a `JoinSet`'s
//! `join_next`) spends one unit too, as in tokio: a loop draining many
//! finished tasks is made to yield like a loop reading a busy socket.
//!
//! 128 operations per poll: large enough that a busy connection does
//! useful batches between yields, small enough that one task cannot hold
//! the loop for long.

use std::task::{Context, Poll};

use crate::base::budget::{LEFT, UNLIMITED, yield_to_poll};

/// Lifts the limit: the loop on this thread has stopped running jobs.
pub(crate) fn lift() {
    LEFT.set(UNLIMITED);
}

/// Whether the running task may still spend budget.
#[inline]
pub(crate) fn has_remaining() -> bool {
    LEFT.get() != 0
}

/// Runs `f` with no limit, then restores the budget as it was.
pub(crate) fn without_limit<R>(f: impl FnOnce() -> R) -> R {
    let before = LEFT.replace(UNLIMITED);
    let output = f();
    // A panic in `f` skips this; the next job's reset repairs it.
    LEFT.set(before);
    output
}

/// Spends one unit of the current task's cooperative budget, or, if the
/// budget is used up, wakes the task (which then runs again after the next
/// poll of the OS) and returns `Pending`.
///
/// Every readiness check on a registration and every poll of a `Sleep`
/// already does this. Call it from a future or a source of your own whose
/// progress never depends on the reactor (an in-memory reader, a channel
/// that is always full), so that a task looping over it still lets timers,
/// I/O and other tasks run. Outside an ioloop task it always proceeds.
///
/// # Examples
///
/// ```
/// use std::future::poll_fn;
/// use std::task::Poll;
///
/// ioloop::block_on(async {
///     // A source that is always ready: without the budget this loop would
///     // never give the loop a turn, and the other task would never run.
///     let other = ioloop::spawn(async { "ran" });
///     while !other.is_finished() {
///         poll_fn(|cx| ioloop::task::poll_budget(cx).map(|()| Poll::Ready(()))).await;
///     }
///     assert_eq!(other.await.unwrap(), "ran");
/// });
/// ```
#[inline]
pub fn poll_budget(cx: &mut Context<'_>) -> Poll<()> {
    poll_proceed(cx)
}

/// Spends one unit of the current task's budget, yielding to the loop if
/// it is used up: the `async` form of [`poll_budget`].
///
/// # Examples
///
/// ```
/// ioloop::block_on(async {
///     let other = ioloop::spawn(async { 1 });
///     let mut spins = 0;
///     while !other.is_finished() {
///         ioloop::task::consume_budget().await;
///         spins += 1;
///     }
///     assert!(spins >= 128); // a whole budget, then a yield
/// });
/// ```
pub async fn consume_budget() {
    std::future::poll_fn(poll_budget).await
}

/// Spends one unit of the current task's budget, or, if it is used up,
/// wakes the task, sends it behind the next poll of the OS, and returns
/// `Pending`.
///
/// Inline: it runs several times per echoed message, from this crate and
/// (through [`poll_budget`]) from the sockets' crate, and is a load, a
/// compare and a store but for the rare yield.
#[inline]
pub(crate) fn poll_proceed(cx: &mut Context<'_>) -> Poll<()> {
    let left = LEFT.get();
    if left == 0 {
        return out_of_budget(cx);
    }
    if left != UNLIMITED {
        LEFT.set(left - 1);
    }
    Poll::Ready(())
}

/// Gives back the unit a [`poll_proceed`] just spent, for an operation
/// that then found nothing ready: only progress spends budget.
#[inline]
pub(crate) fn refund() {
    let left = LEFT.get();
    if left != UNLIMITED {
        LEFT.set(left + 1);
    }
}

/// The budget is spent: yield behind the next poll of the OS.
#[cold]
fn out_of_budget(cx: &mut Context<'_>) -> Poll<()> {
    yield_to_poll();
    cx.waker().wake_by_ref();
    Poll::Pending
}

pin_project_lite::pin_project! {
    /// The future returned by [`unconstrained`].
    #[derive(Debug)]
    #[must_use = "futures do nothing unless you `.await` or poll them"]
    pub struct Unconstrained<F> {
        #[pin]
        inner: F,
    }
}

/// Runs `future` without the cooperative budget: its readiness checks and
/// elapsed sleeps never make it yield.
///
/// For a future that must do a bounded burst of work in one poll (arming
/// a million timers, draining a known amount of buffered data) and would
/// otherwise be cut into slices. A future that loops forever on ready
/// sources inside it can starve the loop: use with care.
///
/// # Examples
///
/// ```
/// use std::future::poll_fn;
/// use std::task::Poll;
///
/// ioloop::block_on(ioloop::task::unconstrained(async {
///     // Far more than one budget, in one poll: never told to yield.
///     for _ in 0..1000 {
///         assert!(poll_fn(|cx| Poll::Ready(ioloop::task::poll_budget(cx).is_ready())).await);
///     }
/// }));
/// ```
pub fn unconstrained<F: std::future::Future>(future: F) -> Unconstrained<F> {
    Unconstrained { inner: future }
}

impl<F: std::future::Future> std::future::Future for Unconstrained<F> {
    type Output = F::Output;

    fn poll(self: std::pin::Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let inner = self.project().inner;
        without_limit(|| inner.poll(cx))
    }
}
