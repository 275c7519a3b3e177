//! `JoinError`: why a task produced no output, as the task cell stores it.
//! What a user asks of it (`is_panic`, `Display`...) is in `task/join.rs`.

use std::any::Any;

use parking_lot::Mutex;

/// Why a task did not produce its output: it panicked, it was cancelled, or
/// (for [`spawn_blocking`](crate::spawn_blocking)) no thread could be
/// started to run it; the last is neither a panic nor a cancellation, and
/// its [`source`](std::error::Error::source) is the OS error.
///
/// # Examples
///
/// ```
/// ioloop::block_on(async {
///     let task = ioloop::spawn(async { panic!("boom") });
///     let err = task.await.unwrap_err();
///     assert!(err.is_panic());
///     let payload = err.into_panic();
///     assert_eq!(payload.downcast_ref::<&str>(), Some(&"boom"));
/// });
/// ```
pub struct JoinError {
    // Boxed: a task's output slot holds `Result<T, JoinError>`, and a thin
    // error keeps every task smaller; errors are rare, their box is cheap.
    pub(crate) repr: Box<Repr>,
}

pub(crate) enum Repr {
    Cancelled,
    // The mutex makes the error `Sync` (so it fits in `io::Error` and
    // error-reporting crates) without `unsafe`; it is only ever locked by
    // `into_panic` and `Display`, never contended.
    Panic(Mutex<Box<dyn Any + Send + 'static>>),
    /// The blocking pool could not start a thread for the job.
    NoThread(std::io::Error),
}

impl JoinError {
    pub(crate) fn cancelled() -> Self {
        JoinError {
            repr: Box::new(Repr::Cancelled),
        }
    }

    pub(crate) fn panic(payload: Box<dyn Any + Send + 'static>) -> Self {
        JoinError {
            repr: Box::new(Repr::Panic(Mutex::new(payload))),
        }
    }

    pub(crate) fn no_thread(err: std::io::Error) -> Self {
        JoinError {
            repr: Box::new(Repr::NoThread(err)),
        }
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
