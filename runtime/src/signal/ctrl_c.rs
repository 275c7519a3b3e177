//! `ctrl_c`: the one-shot wait for SIGINT.

use std::io;

use super::{Signal, SignalKind};

/// Waits for SIGINT (Ctrl-C), listening from the future's first poll, not
/// its call; from then on Ctrl-C no longer ends the process (see [`Signal`]).
///
/// # Errors
///
/// As [`Signal::new`] and [`Signal::recv`].
///
/// # Cancellation
///
/// Dropping the future removes its listener; a SIGINT it had not yet
/// reported is lost.
///
/// # Examples
///
/// ```
/// use std::{future::poll_fn, pin::pin, task::Poll};
///
/// ioloop::block_on(async {
///     let mut ctrl_c = pin!(ioloop::signal::ctrl_c());
///     assert!(poll_fn(|cx| Poll::Ready(ctrl_c.as_mut().poll(cx))).await.is_pending());
///     signal_hook::low_level::raise(signal_hook::consts::SIGINT)?;
///     ctrl_c.await
/// })
/// .unwrap();
/// ```
#[doc(alias = "add_signal_handler")]
#[doc(alias = "KeyboardInterrupt")]
#[doc(alias = "SIGINT")]
pub async fn ctrl_c() -> io::Result<()> {
    Signal::new(SignalKind::interrupt())?.recv().await
}
