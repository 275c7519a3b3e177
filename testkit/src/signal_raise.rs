//! Sending signals to the test process, for tests/signal_*.rs.
//!
//! Use with `use testkit::signal_raise;`.
//!
//! Signals are process-wide: a test that raises one must hold a listener
//! for it already (or the default action may kill the test runner), and
//! tests in one file that run in parallel must each raise a signal of their
//! own, so that one test's delivery is not another's.

use std::ffi::c_int;
use std::io;

/// Sends `signum` to the calling thread, the way `raise(3)` does: the
/// handler has run by the time this returns.
pub fn raise(signum: c_int) -> io::Result<()> {
    // SAFETY: raise has no memory-safety preconditions; an invalid number
    // is reported through the return value.
    if unsafe { libc::raise(signum) } == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Sends `signum` to the whole process, the way `kill(1)` does: the kernel
/// picks any thread that does not block it, the loop's thread included.
pub fn kill_self(signum: c_int) -> io::Result<()> {
    // SAFETY: kill has no memory-safety preconditions; the target is this
    // very process.
    if unsafe { libc::kill(libc::getpid(), signum) } == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// The calling thread, as [`to_thread`] takes it.
pub fn this_thread() -> libc::pthread_t {
    // SAFETY: pthread_self has no preconditions and cannot fail.
    unsafe { libc::pthread_self() }
}

/// Sends `signum` to `thread` alone, the way `pthread_kill(3)` does: its
/// handler runs on that thread, interrupting a system call it waits in.
/// `thread` must still be running.
pub fn to_thread(thread: libc::pthread_t, signum: c_int) -> io::Result<()> {
    // SAFETY: the caller keeps `thread` alive (a thread id used after the
    // thread is joined is undefined behaviour for pthread_kill); a bad
    // signal number is reported through the return value.
    match unsafe { libc::pthread_kill(thread, signum) } {
        0 => Ok(()),
        err => Err(io::Error::from_raw_os_error(err)),
    }
}
