//! `Elapsed`, the error of a timeout.

use std::fmt;
use std::io;

/// The error [`timeout`](super::timeout) returns when the deadline passed
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
