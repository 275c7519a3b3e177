//! `ctrl_c`: the one-shot wait for SIGINT.

use std::io;

use super::{Signal, SignalKind};

/// Waits for SIGINT, the signal a terminal sends on Ctrl-C.
///
/// The listener is installed when the future is first polled, not when
/// `ctrl_c` is called; a SIGINT before that is not seen by it. To listen
/// from a known point on, or for every Ctrl-C rather than the next, keep a
/// [`Signal`] for [`SignalKind::interrupt`] instead.
///
/// Once the first poll has installed the handler, Ctrl-C no longer
/// terminates the process, and it stays so after this future completes or
/// is dropped (see [the module docs](super#the-default-action-is-not-restored)).
///
/// # Errors
///
/// As [`Signal::new`] (outside an ioloop runtime, out of file
/// descriptors) and [`Signal::recv`].
///
/// # Cancellation
///
/// Dropping the future removes its listener; a SIGINT that it had not yet
/// reported is lost with it.
///
/// # Examples
///
/// A program that stops on Ctrl-C would `select` this against its work; here
/// the process presses Ctrl-C itself, once the future is listening:
///
/// ```
/// use std::future::poll_fn;
/// use std::pin::pin;
/// use std::task::Poll;
///
/// ioloop::block_on(async {
///     let mut ctrl_c = pin!(ioloop::signal::ctrl_c());
///     // The first poll installs the listener, and nothing has come yet.
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
