//! ioloop: a small, readable, fast single-threaded async runtime.
//!
//! It is the event loop from the lessons made real: a reactor that keeps
//! one waker per file descriptor and direction, a timer heap whose nearest
//! deadline becomes the poll timeout, and an executor that runs tasks when
//! they are woken.
//!
//! ```
//! use std::time::Duration;
//!
//! ioloop::block_on(async {
//!     let tasks: Vec<_> = (1..=3u64)
//!         .map(|i| ioloop::spawn(async move {
//!             ioloop::time::sleep(Duration::from_millis(i)).await;
//!             i * 10
//!         }))
//!         .collect();
//!     let mut sum = 0;
//!     for task in tasks {
//!         sum += task.await.unwrap();
//!     }
//!     assert_eq!(sum, 60);
//! });
//! ```
//!
//! Everything here is re-exported from `ioloop-runtime` (executor, reactor,
//! timers, blocking pool, signals) and `ioloop-net` (sockets, streams, the
//! callback layer); see their crate docs for how the loop works inside.
//!
//! New here from asyncio, Tornado, Twisted or the `selectors` lessons?
//! Start with the [`guide`]: every concept you know, mapped to the item
//! that plays its part, and one echoed line followed through the code.

#![forbid(unsafe_code)]

pub mod guide;

pub use ioloop_runtime::{
    Builder, Handle, JoinError, JoinHandle, Metrics, Runtime, ShutdownReport, YieldNow, block_on,
    signal, spawn, spawn_blocking, task, time, yield_now,
};

/// I/O: asyncio-style streams, and registering sources with the reactor.
pub mod io {
    pub use ioloop_net::io::*;
    pub use ioloop_runtime::io::{ReadyEvent, Registration};
}

/// The lesson's callback-style `Reactor`, served on ioloop.
pub mod callbacks {
    pub use ioloop_net::callbacks::*;
}

/// Networking: TCP and UDP sockets on the reactor.
pub mod net {
    pub use ioloop_net::ToSocketAddr;
    pub use ioloop_net::tcp::{self, *};
    pub use ioloop_net::udp::*;
}
