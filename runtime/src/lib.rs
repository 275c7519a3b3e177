//! The core of [ioloop](https://docs.rs/ioloop): an executor, a reactor over
//! mio, and a timer heap, in one single-threaded event loop.
//!
//! Most programs use this crate through the `ioloop` facade, which
//! re-exports everything here.
//!
//! # The model
//!
//! A [`Runtime`] is one loop, run by [`Runtime::block_on`] on the calling
//! thread. Each turn of the loop (a *tick*) does four things, in order:
//!
//! 1. **Run** the tasks that were ready when the tick began, in the order
//!    they were woken. A task woken during the tick waits for the next one.
//! 2. **Fire** the timers whose deadline has passed, waking their tasks.
//! 3. **Poll** the OS (`epoll_wait`): with a zero timeout if tasks are
//!    ready, else until the nearest timer deadline, else until an event.
//! 4. **Dispatch**: for each I/O event, record the source's readiness and
//!    wake the tasks waiting to read or write it.
//!
//! A task is a future plus a little state, allocated once by [`spawn`].
//! Its waker puts it back on the run queue: directly when woken on the loop
//! thread, through an injection queue and the poller's waker when woken
//! from another thread.
//!
//! An I/O source is registered once, edge-triggered, for both directions
//! ([`io::Registration`]). The reactor keeps, per source, the readiness bits
//! in one atomic word and the tasks waiting on each direction; sockets try
//! the syscall first and wait on readiness only after `WouldBlock`.
//!
//! # Where things are
//!
//! | module | what it holds |
//! |---|---|
//! | `runtime` | [`Runtime`], [`Builder`], [`block_on`]; where the loop's state waits between turns |
//! | `handle` | [`Handle`], [`spawn`], [`spawn_blocking`]: the one way work reaches a runtime |
//! | `core` | the loop's own state, the tick, and where a woken task queues |
//! | `shared` | what other threads reach: injection queue, park state |
//! | [`task`] | the task cell, [`JoinHandle`], [`JoinError`], [`yield_now`], the budget, [`task::Dump`] |
//! | `reactor` | the per-source readiness table, [`io::Registration`] |
//! | [`time`] | [`time::sleep`], [`time::timeout`], [`time::interval`] and the timer heap; the runtime's clock, [`time::Instant`], and virtual time for tests ([`time::pause`]) |
//! | `blocking` | the thread pool behind [`spawn_blocking`] |
//! | [`signal`] | [`signal::ctrl_c`] and other Unix signals, through the reactor |
//! | `metrics` | [`Metrics`]: what the loop did, for tests and benchmarks |
//! | `watch` | what the loop is polling, published for the stall detector and a dump |
//! | `stall` | the stall detector: a watchdog thread that reports a poll running past [`Builder::slow_poll_threshold`] while it runs |
//! | `sync` | the atomics and locks, swapped for loom's under `--cfg loom` |

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
mod stall;
mod sync;
pub mod task;
pub mod time;

pub use handle::{Handle, spawn, spawn_blocking, spawn_local};
pub use metrics::Metrics;
pub use runtime::{Builder, EnterGuard, Runtime, ShutdownReport, block_on};
pub use task::{JoinError, JoinHandle, YieldNow, yield_now};
