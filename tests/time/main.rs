//! Timers: `sleep`, `interval` and `timeout`.

mod interval;
mod sleep;
mod timeout;
