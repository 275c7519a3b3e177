//! `timeout`, `timeout_at`, their future, `Timeout`, and its error, `Elapsed`.

use std::fmt;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use super::instant::Instant;
use super::sleep::{Sleep, sleep, sleep_until};
use crate::base::budget;

/// Runs `future`, giving up once `duration` has passed.
///
/// `Ok(output)` if the future finishes first, `Err(Elapsed)` if the
/// deadline passes first. The future is polled before the deadline is
/// checked, so a ready future wins even with a zero duration; the deadline
/// is checked on every poll, even one that spent the task's
/// [budget](crate::task::poll_budget), so an always-busy future still times
/// out. The deadline is on the current runtime's clock, [paused](super::pause)
/// or not (see [`Instant::now`]).
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

/// Runs `future`, giving up at `deadline`: [`timeout`] with an instant.
///
/// # Cancellation
///
/// As [`timeout`].
///
/// # Panics
///
/// As [`timeout`].
pub fn timeout_at<F: Future>(deadline: Instant, future: F) -> Timeout<F> {
    Timeout {
        future,
        sleep: sleep_until(deadline),
    }
}

pin_project_lite::pin_project! {
    /// The future returned by [`timeout`] and [`timeout_at`].
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

/// The error [`timeout`](timeout) returns when the deadline passed
/// before the future finished.
///
/// Converts into an [`io::Error`] of kind [`io::ErrorKind::TimedOut`], so
/// `?` works in functions that return `io::Result`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Elapsed(pub(crate) ());

impl fmt::Display for Elapsed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("deadline has elapsed")
    }
}

impl std::error::Error for Elapsed {}

impl From<Elapsed> for io::Error {
    fn from(err: Elapsed) -> Self {
        io::Error::new(io::ErrorKind::TimedOut, err)
    }
}
