//! `yield_now`: let the rest of the loop run.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

/// Gives the loop a turn: the task goes to the back of the run queue and
/// runs again after the next I/O poll, so a task that yields in a loop
/// cannot starve timers, I/O or other tasks.
///
/// # Examples
///
/// ```
/// ioloop::block_on(async {
///     let other = ioloop::spawn(async { 1 });
///     ioloop::yield_now().await;
///     assert!(other.is_finished());
/// });
/// ```
#[doc(alias = "sleep(0)")]
pub fn yield_now() -> YieldNow {
    YieldNow { yielded: false }
}

/// The future returned by [`yield_now`].
///
/// # Examples
///
/// ```
/// ioloop::block_on(async {
///     let yielding: ioloop::YieldNow = ioloop::yield_now();
///     yielding.await;
/// });
/// ```
#[derive(Debug)]
#[must_use = "futures do nothing unless you `.await` or poll them"]
pub struct YieldNow {
    yielded: bool,
}

impl Future for YieldNow {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.yielded {
            return Poll::Ready(());
        }
        self.yielded = true;
        // Queued behind everything already ready; the tick runs only what
        // was ready when it began, and the loop polls the OS before the
        // next one because a task yielded.
        crate::base::budget::yield_to_poll();
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}
