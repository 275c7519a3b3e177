//! hyper 1.x on ioloop (the guide's "Serving HTTP with hyper"):
//! - [`HyperIo`], [`FuturesIo`]: hyper's `Read` and `Write` over an ioloop
//!   socket, into hyper's uninitialized buffer; over any futures-io stream.
//! - [`Executor`], [`LocalExecutor`]: where hyper spawns, `Send` or not.
//! - [`Timer`], [`Sleep`]: hyper's timeouts on ioloop's timer heap.
//! - [`serve`], [`Server`]: a listener and a service, one task per
//!   connection, HTTP/1.1 keep-alive or HTTP/2, and a graceful stop.

mod exec;
mod io;
mod serve;
mod timer;

pub use exec::{Executor, LocalExecutor};
pub use io::{FuturesIo, HyperIo, Socket};
pub use serve::{ServeService, Server, serve};
pub use timer::{Sleep, Timer};
