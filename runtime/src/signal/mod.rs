//! Signals as ordinary I/O, asyncio's `loop.add_signal_handler`: [`ctrl_c`]
//! waits once for SIGINT; a [`Signal`] for a [`SignalKind`] waits again and
//! again. Deliveries coalesce, and the first listener for a signal leaves
//! its default action off for good (see [`Signal`]); the guide's
//! "Signals" chapter says how a signal reaches the loop, and why.

mod ctrl_c;
mod kind;
mod listener;

pub use ctrl_c::ctrl_c;
pub use kind::SignalKind;
pub use listener::Signal;
