//! `timeout`, `timeout_at` and their future, `Timeout`.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use super::error::Elapsed;
use super::instant::Instant;
use super::sleep::{Sleep, sleep, sleep_until};
use crate::task::budget;

/// Runs `future`, giving up once `duration` has passed.
///
/// Returns `Ok(output)` if the future finishes first, `Err(Elapsed)` if the
/// deadline passes first. The future is polled before the deadline is
/// checked, so a future that is already ready wins even with a zero
/// duration.
///
/// The deadline is on the current runtime's clock (see
/// [`Instant::now`]): on a [paused](super::pause) runtime, the timeout
/// elapses when the virtual clock reaches it.
///
/// The deadline is checked on every poll even when the future has spent
/// the task's whole [budget](crate::task::poll_budget): a future that is
/// always busy still times out, at the first poll past the deadline.
///
/// # Cancellation
///
/// When the deadline passes, `future` is dropped along with the `Timeout`;
/// whatever it had half done is lost unless it is itself cancel-safe.
///
/// # Panics
///
/// The returned future panics if polled outside an ioloop runtime.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use ioloop::time::timeout;
///
/// ioloop::block_on(async {
///     assert_eq!(timeout(Duration::from_secs(1), async { 7 }).await, Ok(7));
///     assert!(timeout(Duration::from_millis(5), std::future::pending::<()>()).await.is_err());
/// });
/// ```
#[doc(alias = "wait_for")]
pub fn timeout<F: Future>(duration: Duration, future: F) -> Timeout<F> {
    Timeout {
        future,
        sleep: sleep(duration),
    }
}

/// Runs `future`, giving up at `deadline`.
///
/// As [`timeout`], with an instant instead of a duration.
///
/// # Panics
///
/// The returned future panics if polled outside an ioloop runtime.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use ioloop::time::Instant;
///
/// ioloop::block_on(async {
///     let deadline = Instant::now() + Duration::from_millis(5);
///     let r = ioloop::time::timeout_at(deadline, std::future::pending::<()>()).await;
///     assert!(r.is_err());
/// });
/// ```
pub fn timeout_at<F: Future>(deadline: Instant, future: F) -> Timeout<F> {
    Timeout {
        future,
        sleep: sleep_until(deadline),
    }
}

pin_project_lite::pin_project! {
    /// The future returned by [`timeout`] and [`timeout_at`].
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// ioloop::block_on(async {
    ///     let t: ioloop::time::Timeout<_> = ioloop::time::timeout(Duration::from_secs(1), async { 5 });
    ///     assert_eq!(t.await, Ok(5));
    /// });
    /// ```
    #[derive(Debug)]
    #[must_use = "futures do nothing unless you `.await` or poll them"]
    pub struct Timeout<F> {
        #[pin]
        future: F,
        sleep: Sleep,
    }
}

impl<F> Timeout<F> {
    /// The wrapped future.
    pub fn get_ref(&self) -> &F {
        &self.future
    }

    /// Takes the wrapped future back, dropping the deadline.
    pub fn into_inner(self) -> F {
        self.future
    }
}

impl<F: Future> Future for Timeout<F> {
    type Output = Result<F::Output, Elapsed>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let had_budget = budget::has_remaining();
        if let Poll::Ready(output) = this.future.poll(cx) {
            return Poll::Ready(Ok(output));
        }
        let elapsed = if had_budget && !budget::has_remaining() {
            // The future spent the last of the budget (and has arranged to
            // run again). Its deadline must not need budget too, or a
            // future that is busy on every poll would never time out.
            budget::without_limit(|| Pin::new(&mut *this.sleep).poll(cx))
        } else {
            // Elapsing spends budget as any completed sleep does, so a loop
            // of `timeout(ZERO, ..)` still yields.
            Pin::new(this.sleep).poll(cx)
        };
        elapsed.map(|()| Err(Elapsed(())))
    }
}
