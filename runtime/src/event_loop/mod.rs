//! The core: the tick (`core.rs`), the task cell, the reactor's table and
//! waiters, the timer heap and the clock. It imports nothing from the
//! layers above it, and reaches up only through `shared::BlockingPool`.

pub(crate) mod cell;
pub(crate) mod clock;
pub(crate) mod core;
pub(crate) mod homes;
pub(crate) mod reactor;
pub(crate) mod shared;
pub(crate) mod timers;
