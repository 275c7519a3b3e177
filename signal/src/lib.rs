//! Signals as ordinary I/O, asyncio's `loop.add_signal_handler`: [`ctrl_c`]
//! waits once for SIGINT; a [`Signal`] for a [`SignalKind`] waits again and
//! again. The guide's "Signals" chapter says how a signal reaches the loop.
//!
//! A crate of its own, re-exported as `ioloop::signal`: a layer over the
//! runtime's public [`Registration`](ioloop_runtime::io::Registration), as
//! smol's `async-signal` is over `async-io`, so the runtime's core stays
//! the loop, its tasks, timers and I/O.

mod kind;
mod listener;

use std::io;

pub use kind::SignalKind;
pub use listener::Signal;

/// Waits for SIGINT (Ctrl-C): a [`Signal`] for [`SignalKind::interrupt`],
/// made at the first poll and received once. From then on Ctrl-C no longer
/// ends the process (see [`Signal`]); dropping the future removes the
/// listener, losing a SIGINT not yet reported.
///
/// # Errors
///
/// As [`Signal::new`] and [`Signal::recv`].
#[doc(alias = "add_signal_handler")]
#[doc(alias = "KeyboardInterrupt")]
#[doc(alias = "SIGINT")]
pub async fn ctrl_c() -> io::Result<()> {
    Signal::new(SignalKind::interrupt())?.recv().await
}
