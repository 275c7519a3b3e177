//! The event loop: the core of the runtime, which imports nothing from the
//! layers above it. The tick (`core.rs`), the run queue and the one place a
//! woken task is queued; the task cell (`cell.rs`); the reactor's table of
//! sources and their waiters (`reactor/`); the timer heap (`timers.rs`) and
//! the clock (`clock.rs`); what other threads reach (`shared.rs`).
//!
//! Layers above reach into it; it reaches up only through
//! [`BlockingPool`](shared::BlockingPool), a trait the blocking pool
//! implements.

pub(crate) mod cell;
pub(crate) mod clock;
pub(crate) mod core;
pub(crate) mod homes;
pub(crate) mod reactor;
pub(crate) mod shared;
pub(crate) mod timers;
