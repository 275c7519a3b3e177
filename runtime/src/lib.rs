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
mod clock;
mod event_loop;
mod handle;
pub mod io;
mod joiners;
mod metrics;
mod rare;
mod runtime;
mod seed;
mod stall;
mod sync;
pub mod task;
pub mod time;

/// The library's lock and its check that no waker is woken under it, for
/// ioloop-net: not part of the API.
#[doc(hidden)]
pub use sync::lock;

/// The seams a simulation drives a runtime through, re-exported by
/// `ioloop-sim` (as `ioloop::sim`): the [`Backend`](seam::Backend) a loop
/// built with [`Builder::build_simulated`] polls beside the OS, the
/// [`Pick`](seam::Pick) a seeded loop ([`Builder::scheduler`]) chooses its
/// next job with, what a seeded runtime answers
/// ([`schedule_hash`](seam::schedule_hash), [`abort_tagged`](seam::abort_tagged)),
/// and the hook of its rare paths.
pub mod seam {
    pub use crate::event_loop::backend::{Backend, MakePick, Pick, Ready};
    pub use crate::rare::{RareHook, RarePoint, set_rare_hook};
    pub use crate::seed::{abort_tagged, schedule_hash};
}

pub use handle::{Handle, RuntimeId, spawn, spawn_blocking, spawn_local};
pub use metrics::Metrics;
pub use runtime::{Builder, EnterGuard, Runtime, ShutdownReport, block_on};
pub use task::{JoinError, JoinHandle, YieldNow, yield_now};
