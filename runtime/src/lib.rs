//! The core of ioloop: an executor, a reactor over mio, and a timer heap,
//! in one single-threaded event loop. Most programs use it through the
//! `ioloop` facade (the repository's root package; not published yet),
//! which re-exports everything here.
//!
//! A [`Runtime`] is one loop, run by [`Runtime::block_on`] on the calling
//! thread; each turn (a tick) runs the tasks that were ready, fires the
//! timers that are due, and polls the OS. The facade's guide walks the tick
//! step by step; ARCHITECTURE.md maps the files: `event_loop/` is the core,
//! `base.rs` and `sync/` below it, everything else above.

#![deny(unsafe_code)]
#![warn(missing_docs)]

mod base;
mod blocking;
mod event_loop;
mod handle;
pub mod io;
mod metrics;
mod runtime;
pub mod signal;
pub mod sim;
mod stall;
mod sync;
pub mod task;
pub mod time;

/// The library's lock and its check that no waker is woken under it, for
/// ioloop-net: not part of the API.
#[doc(hidden)]
pub use sync::lock;

pub use handle::{Handle, RuntimeId, spawn, spawn_blocking, spawn_local};
pub use metrics::Metrics;
pub use runtime::{Builder, EnterGuard, Runtime, ShutdownReport, block_on};
pub use task::{JoinError, JoinHandle, YieldNow, yield_now};
