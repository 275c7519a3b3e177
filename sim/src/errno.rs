//! The simulated network's errors: the kernel's own, as raw OS errors, so a
//! simulated call fails with the kind *and* the code that a real socket's
//! would (`tests/sim/kernel/` compares both, scenario by scenario).

use std::io;

pub(crate) use libc::{
    EADDRINUSE, EADDRNOTAVAIL, EAGAIN, EBADF, ECONNABORTED, ECONNREFUSED, ECONNRESET, EDESTADDRREQ,
    EINVAL, EMFILE, EMSGSIZE, ENOENT, ENOTCONN, EPIPE,
};

/// A raw OS error number, as a pending `SO_ERROR` holds one.
pub(crate) type Errno = i32;

/// The error the kernel reports as `errno`.
pub(crate) fn os(errno: Errno) -> io::Error {
    io::Error::from_raw_os_error(errno)
}
