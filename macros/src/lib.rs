//! `#[ioloop::main]` and `#[ioloop::test]`, re-exported by `ioloop`.

#![forbid(unsafe_code)]

mod args;
mod entry;

use proc_macro::TokenStream;

use entry::Entry;

/// Runs an `async fn main` on a new runtime, through `ioloop::block_on`.
///
/// It becomes a plain `fn`, keeping its attributes, visibility, name and
/// return type; it takes no parameters or generics. Arguments (`Builder`'s):
/// - `event_interval = N`, `events_capacity = N`, `max_blocking_threads = N`;
/// - `start_paused = true` (or `false`): see `ioloop::time::pause`.
///
/// # Panics
///
/// If the OS refuses the runtime its file descriptors, as `block_on` does.
///
/// # Examples
///
/// ```
/// #[ioloop::main(max_blocking_threads = 2)]
/// async fn main() {
///     assert_eq!(ioloop::spawn_blocking(|| 6 * 7).await.unwrap(), 42);
/// }
/// ```
#[proc_macro_attribute]
pub fn main(args: TokenStream, item: TokenStream) -> TokenStream {
    Entry::Main.expand(args.into(), item.into()).into()
}

/// Runs an `async fn` test on a new runtime: a `#[test]` (`#[should_panic]`
/// and `#[ignore]` work), otherwise as [`macro@main`], with its arguments.
///
/// # Panics
///
/// As [`macro@main`].
///
/// # Examples
///
/// ```
/// use std::time::Duration;
///
/// #[ioloop::test(start_paused = true)]
/// async fn an_hour_passes_at_once() {
///     let start = ioloop::time::Instant::now();
///     ioloop::time::sleep(Duration::from_secs(3600)).await;
///     assert_eq!(start.elapsed(), Duration::from_secs(3600));
/// }
/// # fn main() {}
/// ```
#[proc_macro_attribute]
pub fn test(args: TokenStream, item: TokenStream) -> TokenStream {
    Entry::Test.expand(args.into(), item.into()).into()
}

/// What the attributes refuse: `compile_fail` doctests, kept in `tests/`.
#[cfg(doctest)]
#[doc = include_str!("../tests/compile_fail.md")]
struct CompileFail;
