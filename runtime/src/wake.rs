//! Running other people's code from inside the loop without letting it
//! unwind into the loop.
//!
//! Wakers and destructors are user code. The loop calls them in many places
//! (after I/O events, when timers fire, when a task completes); a panic in
//! any of them is logged and the loop goes on, as Tornado logs an exception
//! raised by a handler and keeps serving.

use std::any::Any;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::task::Waker;

/// Wakes `waker`; a panic inside it is logged, not propagated.
pub(crate) fn wake_quietly(waker: Waker) {
    if let Err(panic) = catch_unwind(AssertUnwindSafe(|| waker.wake())) {
        log::error!("a waker panicked ({}); the loop goes on", describe(&*panic));
    }
}

/// Wakes every waker in `wakers`, leaving the vector empty but keeping its
/// capacity, so the loop can reuse it without allocating.
pub(crate) fn wake_all(wakers: &mut Vec<Waker>) {
    for waker in wakers.drain(..) {
        wake_quietly(waker);
    }
}

/// Drops `value`; a panic in its destructor is logged, not propagated.
pub(crate) fn drop_quietly<T>(value: T) {
    if let Err(panic) = catch_unwind(AssertUnwindSafe(|| drop(value))) {
        log::error!(
            "a destructor panicked ({}); the loop goes on",
            describe(&*panic)
        );
    }
}

/// A panic payload's message, when it is a string (as `panic!` makes it).
pub(crate) fn panic_message(payload: &(dyn Any + Send)) -> Option<&str> {
    payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
}

/// A panic payload's message, or a placeholder, for logging.
pub(crate) fn describe(payload: &(dyn Any + Send)) -> &str {
    panic_message(payload).unwrap_or("a non-string payload")
}
