//! The cooperative budget: each poll may complete 128 I/O operations
//! (readiness checks, taking a finished task's output); then the check
//! returns `Pending` after waking the task, which goes behind the next
//! poll of the OS (see the guide's chapter on the tick). Its per-thread
//! state is in `base/budget.rs`.

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

/// Spends one unit of the current task's cooperative budget, or, if it is
/// used up, wakes the task (to run after the next poll of the OS) and
/// returns `Pending`. Every readiness check and `Sleep` poll does this;
/// call it from a source whose progress never depends on the reactor (an
/// in-memory reader), so a task looping over it still lets others run.
/// Outside an ioloop task it always proceeds.
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

/// [`poll_budget`], inline: it runs several times per echoed message, and
/// is a load, a compare and a store but for the rare yield.
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

/// Runs `future` without the cooperative budget, for a bounded burst of
/// work in one poll (arming a million timers); a future that loops forever
/// on ready sources inside it can starve the loop.
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
