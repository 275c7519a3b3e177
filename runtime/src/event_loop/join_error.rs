//! `JoinError`: why a task produced no output.

use std::any::Any;
use std::fmt;

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
    repr: Box<Repr>,
}

enum Repr {
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

    /// Returns `true` if the task was aborted, or dropped because its
    /// runtime shut down.
    ///
    /// # Examples
    ///
    /// ```
    /// ioloop::block_on(async {
    ///     let task = ioloop::spawn(std::future::pending::<()>());
    ///     task.abort();
    ///     assert!(task.await.unwrap_err().is_cancelled());
    /// });
    /// ```
    pub fn is_cancelled(&self) -> bool {
        matches!(*self.repr, Repr::Cancelled)
    }

    /// Returns `true` if the task panicked.
    ///
    /// # Examples
    ///
    /// ```
    /// ioloop::block_on(async {
    ///     let err = ioloop::spawn(async { panic!("boom") }).await.unwrap_err();
    ///     assert!(err.is_panic());
    /// });
    /// ```
    pub fn is_panic(&self) -> bool {
        matches!(*self.repr, Repr::Panic(_))
    }

    /// Returns the payload the task panicked with, for
    /// [`std::panic::resume_unwind`] or inspection.
    ///
    /// # Panics
    ///
    /// Panics if the task did not panic (it was cancelled); use
    /// [`try_into_panic`](JoinError::try_into_panic) to find out first.
    ///
    /// # Examples
    ///
    /// ```
    /// ioloop::block_on(async {
    ///     let err = ioloop::spawn(async { panic!("boom") }).await.unwrap_err();
    ///     assert_eq!(err.into_panic().downcast_ref::<&str>(), Some(&"boom"));
    /// });
    /// ```
    pub fn into_panic(self) -> Box<dyn Any + Send + 'static> {
        self.try_into_panic()
            .expect("JoinError::into_panic called on the error of a task that did not panic")
    }

    /// Returns the panic payload, or the error itself if the task was
    /// cancelled.
    ///
    /// # Errors
    ///
    /// Gives `self` back when the task did not panic.
    ///
    /// # Examples
    ///
    /// ```
    /// ioloop::block_on(async {
    ///     let task = ioloop::spawn(std::future::pending::<()>());
    ///     task.abort();
    ///     let err = task.await.unwrap_err();
    ///     assert!(err.try_into_panic().unwrap_err().is_cancelled());
    /// });
    /// ```
    pub fn try_into_panic(self) -> Result<Box<dyn Any + Send + 'static>, JoinError> {
        match *self.repr {
            Repr::Panic(payload) => Ok(payload.into_inner()),
            Repr::Cancelled | Repr::NoThread(_) => Err(self),
        }
    }
}

impl fmt::Display for JoinError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &*self.repr {
            Repr::Cancelled => f.write_str("task was cancelled"),
            Repr::Panic(payload) => match panic_message(&**payload.lock()) {
                Some(message) => write!(f, "task panicked: {message}"),
                None => f.write_str("task panicked"),
            },
            Repr::NoThread(err) => write!(f, "no thread could be started to run the job: {err}"),
        }
    }
}

impl fmt::Debug for JoinError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &*self.repr {
            Repr::Cancelled => f.write_str("JoinError::Cancelled"),
            Repr::NoThread(err) => write!(f, "JoinError::NoThread({err:?})"),
            Repr::Panic(payload) => match panic_message(&**payload.lock()) {
                Some(message) => write!(f, "JoinError::Panic({message:?})"),
                None => f.write_str("JoinError::Panic(..)"),
            },
        }
    }
}

impl std::error::Error for JoinError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &*self.repr {
            Repr::NoThread(err) => Some(err),
            _ => None,
        }
    }
}

impl From<JoinError> for std::io::Error {
    fn from(err: JoinError) -> Self {
        std::io::Error::other(err)
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
