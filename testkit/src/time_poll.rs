//! Polling a future exactly once, for tests that must tell "ready at once"
//! from "ready after a wait" without looking at the clock.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

/// Polls `future` once with a waker that does nothing.
///
/// On the loop thread (inside `block_on`) this arms timers exactly as an
/// `.await` would; the difference is only that nobody is woken when they
/// fire, which is what a test that merely wants to know "ready or not, right
/// now?" needs.
pub fn poll_once<F: Future + Unpin>(future: &mut F) -> Poll<F::Output> {
    Pin::new(future).poll(&mut Context::from_waker(Waker::noop()))
}
