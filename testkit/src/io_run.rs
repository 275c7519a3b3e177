//! Running a stream test on a fresh runtime, with a safety net: a test whose
//! failure mode is a hang (a line that never completes, a drain that never
//! returns) fails after a generous limit instead of stalling the suite.

use std::future::Future;
use std::io;
use std::time::Duration;

/// Far longer than any of these tests takes; never what a test measures.
pub const SAFETY: Duration = Duration::from_secs(60);

/// Runs the future `test` makes on a fresh ioloop runtime on its own
/// thread, failing the test if it takes longer than [`SAFETY`], even if it
/// never yields.
pub fn run<F, Fut>(test: F) -> io::Result<()>
where
    F: FnOnce() -> Fut + Send + 'static,
    Fut: Future<Output = io::Result<()>>,
{
    crate::util::within(SAFETY, move || ioloop::block_on(test()))
}
