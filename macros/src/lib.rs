//! `#[ioloop::main]` and `#[ioloop::test]`: an `async fn` run on a new
//! runtime. Use them through the `ioloop` crate, which re-exports them
//! (feature `macros`, on by default); the code they write names
//! `::ioloop`.
//!
//! Each attribute turns `async fn name() -> R { body }` into a plain
//! `fn name() -> R` that holds the `async fn` as written and runs it with
//! `ioloop::block_on`. Whatever it cannot keep (parameters, generics, a
//! missing `async`) is a compile error at the tokens at fault.

#![forbid(unsafe_code)]

mod args;
mod entry;

use proc_macro::TokenStream;

use entry::Entry;

/// Runs an `async fn main` on a new runtime.
///
/// The function becomes a plain `fn` with the same attributes, visibility,
/// name and return type, which runs the body with `ioloop::block_on`. It
/// takes no parameters or generics. Arguments set the runtime's `Builder`:
/// `event_interval`, `events_capacity`, `max_blocking_threads`, each a
/// positive integer, and `start_paused`, `true` or `false` (a runtime whose
/// clock starts paused: see `ioloop::time::pause`).
///
/// # Panics
///
/// If the OS refuses the runtime its file descriptors, as
/// `ioloop::block_on` does.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
///
/// #[ioloop::main]
/// async fn main() -> std::io::Result<()> {
///     let task = ioloop::spawn(async { 40 + 2 });
///     let answer = ioloop::time::timeout(Duration::from_secs(10), task).await??;
///     assert_eq!(answer, 42);
///     Ok(())
/// }
/// ```
///
/// With a `Builder` setting:
///
/// ```
/// #[ioloop::main(max_blocking_threads = 2)]
/// async fn main() {
///     assert_eq!(ioloop::spawn_blocking(|| 6 * 7).await.unwrap(), 42);
/// }
/// ```
///
/// A function that is not `async` is refused, with the error at its `fn`:
///
/// ```compile_fail
/// #[ioloop::main]
/// fn main() {}
/// ```
#[proc_macro_attribute]
pub fn main(args: TokenStream, item: TokenStream) -> TokenStream {
    Entry::Main.expand(args.into(), item.into()).into()
}

/// Runs an `async fn` test on a new runtime, one per test.
///
/// The function becomes a `#[test]` with the same attributes (so
/// `#[should_panic]` and `#[ignore]` work), visibility, name and return
/// type, which runs the body with `ioloop::block_on`. The rest is as for
/// [`macro@main`]: no parameters or generics; the same arguments.
///
/// `start_paused = true` runs the test on a runtime whose clock is paused
/// from the start (`ioloop::Builder::start_paused`): it moves only by
/// `ioloop::time::advance`, or by jumping to the next timer when the
/// runtime has nothing else to do, so a test of code that waits on timers
/// takes no wall time and does not depend on the machine's speed.
///
/// # Panics
///
/// If the OS refuses the runtime its file descriptors, as
/// `ioloop::block_on` does.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
///
/// #[ioloop::test]
/// async fn a_sleep_wakes_after_its_duration() -> std::io::Result<()> {
///     let start = std::time::Instant::now();
///     ioloop::time::sleep(Duration::from_millis(5)).await;
///     assert!(start.elapsed() >= Duration::from_millis(5));
///     Ok(())
/// }
/// # fn main() {}
/// ```
///
/// On a paused clock, an hour's sleep takes no wall time:
///
/// ```
/// use std::time::Duration;
/// use ioloop::time::{Instant, sleep};
///
/// #[ioloop::test(start_paused = true)]
/// async fn an_hour_passes_at_once() {
///     let start = Instant::now();
///     sleep(Duration::from_secs(3600)).await;
///     assert_eq!(start.elapsed(), Duration::from_secs(3600));
/// }
/// # fn main() {}
/// ```
///
/// A test takes no parameters; the error points at them:
///
/// ```compile_fail
/// #[ioloop::test]
/// async fn takes_a_port(port: u16) {}
/// # fn main() {}
/// ```
///
/// `start_paused` takes `true` or `false`, not a number:
///
/// ```compile_fail
/// #[ioloop::test(start_paused = 1)]
/// async fn paused() {}
/// # fn main() {}
/// ```
#[proc_macro_attribute]
pub fn test(args: TokenStream, item: TokenStream) -> TokenStream {
    Entry::Test.expand(args.into(), item.into()).into()
}
