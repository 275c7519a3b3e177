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
