//! The core, bottom up: the clock and timer heap (`timers.rs`), the reactor
//! (`reactor.rs`), the task cell (`cell.rs`), the tick and the half other
//! threads reach (`core.rs`). It imports nothing from the layers above; it
//! reaches up only through `core::BlockingPool`, and through
//! `backend::Backend` to a simulation standing in for the OS.

pub(crate) mod backend;
pub(crate) mod cell;
pub(crate) mod core;
pub(crate) mod reactor;
pub(crate) mod timers;
