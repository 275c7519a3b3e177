//! Running a socket test's future on its own runtime, under a safety net.
//!
//! Use with `use testkit::net_run;`.

use std::future::Future;
use std::io;
use std::time::Duration;

use crate::util;

/// How long a socket test may take before it counts as hung. Generous: it
/// is the net for a lost wake-up, never what a test measures.
pub const SAFETY_NET: Duration = Duration::from_secs(60);

/// Runs the future `make` returns on a fresh runtime, on a fresh thread,
/// failing the test if it has not finished within [`SAFETY_NET`].
pub fn run<F>(make: impl FnOnce() -> F + Send + 'static) -> io::Result<()>
where
    F: Future<Output = io::Result<()>> + 'static,
{
    util::within(SAFETY_NET, move || ioloop::block_on(make()))
}
