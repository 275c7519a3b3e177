//! Timers: `sleep`, `interval` and `timeout`.

mod interval;
mod paused;
mod sleep;
mod timeout;
