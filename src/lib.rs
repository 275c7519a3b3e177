//! ioloop: a small, readable, fast single-threaded async runtime, the event
//! loop of the lessons made real: a reactor over mio, a timer heap whose
//! nearest deadline becomes the poll timeout, an executor, and asyncio's
//! streams.
//!
//! ```
//! let answer = ioloop::block_on(async {
//!     let task = ioloop::spawn(async { 20 });
//!     task.await.unwrap() + 22
//! });
//! assert_eq!(answer, 42);
//! ```
//!
//! Everything here is re-exported: the runtime from `ioloop-runtime`, the
//! sockets and streams from `ioloop-net`, the callback layer from
//! `ioloop-callbacks`, the simulation from `ioloop-sim`, futures-io's
//! extension traits (in [`io`]) from futures-util; with the `macros`
//! feature (on by default), [`macro@main`] and [`macro@test`] from
//! `ioloop-macros`; with the `hyper` feature, `compat::hyper` from
//! `ioloop-compat`, and with `tokio-io`, `compat::tokio`.
//!
//! The [`guide`] is in chapters. Start with the one for where you come
//! from:
//!
//! - [Coming from asyncio](guide::from_asyncio): `asyncio.run`,
//!   `create_task`, `readline`, `write` + `drain`, ... and what plays
//!   each part here.
//! - [Coming from tokio](guide::from_tokio): what moves over by name, what
//!   of tokio runs here as it is, and what needs tokio's own runtime.
//! - [From the lessons' event loop](guide::lessons): the `selectors`
//!   lecture's `Reactor`, Tornado's IOLoop and Twisted's reactor, the
//!   cookbook's thread pool, each concept explained and mapped.
//!
//! Then [Where ioloop differs](guide::differences), and [one echoed
//! line](guide::echoed_line) followed through the code.

#![forbid(unsafe_code)]
// The front page and the guide link to the attributes, which are not here
// without the `macros` feature: those links are the only ones allowed to
// dangle, and only then.
#![cfg_attr(not(feature = "macros"), allow(rustdoc::broken_intra_doc_links))]

pub mod guide;

/// README.md's code, compiled as doc tests so it cannot drift.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

pub use ioloop_runtime::{
    Builder, EnterGuard, Handle, JoinError, JoinHandle, Metrics, Runtime, RuntimeId,
    ShutdownReport, YieldNow, block_on, spawn, spawn_blocking, spawn_local, task, time, yield_now,
};

#[cfg(feature = "macros")]
pub use ioloop_macros::{main, test};

/// Signals as ordinary I/O: [`ctrl_c`](signal::ctrl_c), [`Signal`](signal::Signal).
pub use ioloop_signal as signal;

/// I/O: asyncio-style streams, and registering sources with the reactor.
///
/// The futures-io traits every stream and socket implements, their
/// extension traits (`read`, `read_exact`, `read_to_end`, `write_all`,
/// `close`, ...) and `copy` are re-exported from futures-util, so a
/// program needs no second crate for them:
///
/// ```no_run
/// use ioloop::io::{AsyncReadExt, AsyncWriteExt};
///
/// # ioloop::block_on(async {
/// let mut stream = ioloop::net::TcpStream::connect("127.0.0.1:7").await?;
/// stream.write_all(b"ping\n").await?;
/// let mut reply = [0; 5];
/// stream.read_exact(&mut reply).await?;
/// # std::io::Result::Ok(())
/// # });
/// ```
pub mod io {
    pub use futures_util::io::{
        AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, copy,
    };
    pub use ioloop_net::io::*;
    #[cfg(unix)]
    pub use ioloop_process::{AsyncFd, Stderr, Stdin, Stdout, stderr, stdin, stdout};
    pub use ioloop_runtime::io::{
        ReadyEvent, Registration, Waiter, take_back_wake_after_poll, wake_after_poll,
    };
}

/// Child processes (the `ioloop-process` crate): [`Command`](process::Command)
/// mirrors `std::process::Command`; a [`Child`](process::Child)'s pipes are
/// futures-io streams and its exit is awaited on the loop, with no thread
/// per child. asyncio's `create_subprocess_exec`, tokio's `process`.
#[cfg(unix)]
pub mod process {
    pub use ioloop_process::{
        Child, ChildStderr, ChildStdin, ChildStdout, Command, ExitStatus, Output, Stdio,
    };
}

/// The lesson's callback-style `Reactor`, served on ioloop (the
/// `ioloop-callbacks` crate).
pub mod callbacks {
    pub use ioloop_callbacks::*;
}

/// Networking: TCP, UDP and Unix domain sockets on the reactor, the
/// addresses they take, and host names resolved off the loop thread.
pub mod net {
    pub use ioloop_net::tcp::{self, *};
    pub use ioloop_net::udp::*;
    #[cfg(unix)]
    pub use ioloop_net::unix::{self, UnixDatagram, UnixListener, UnixStream};
    pub use ioloop_net::{ToSocketAddrs, lookup_host};
}

/// Deterministic simulation (the `ioloop-sim` crate): [`Sim`](sim::Sim)
/// runs a server and its clients in one seeded world over a simulated
/// network, on a virtual clock, and a failure names the seed that replays
/// it; the seams below it are a seeded runtime ([`Builder::scheduler`]), the
/// loop's [`Backend`](sim::Backend) and net's socket seam.
pub mod sim {
    pub use ioloop_sim::*;
}

/// Adapters to other crates' runtime traits, each behind a feature.
///
/// - `hyper` (the `hyper` feature): hyper 1.x on ioloop: [`HyperIo`] and
///   [`FuturesIo`] (hyper's I/O traits), [`Executor`] and
///   [`LocalExecutor`], [`Timer`], and [`serve`]: a listener and a service,
///   HTTP/1.1 keep-alive or HTTP/2, stopped gracefully.
/// - `tokio` (the `tokio-io` feature): tokio's `AsyncRead`, `AsyncWrite`
///   and `AsyncBufRead` for the crates built on them (tokio-util's codecs,
///   tokio-rustls, tokio-postgres): `TokioIo` over ioloop's sockets, with
///   no zeroing or copy, and `FuturesIo` over any futures-io stream.
///
/// [`HyperIo`]: crate::compat::hyper::HyperIo
/// [`FuturesIo`]: crate::compat::hyper::FuturesIo
/// [`Executor`]: crate::compat::hyper::Executor
/// [`LocalExecutor`]: crate::compat::hyper::LocalExecutor
/// [`Timer`]: crate::compat::hyper::Timer
/// [`serve`]: crate::compat::hyper::serve
#[cfg(any(feature = "hyper", feature = "tokio-io"))]
pub mod compat {
    #[cfg(feature = "hyper")]
    pub use ioloop_compat::hyper;
    #[cfg(feature = "tokio-io")]
    pub use ioloop_compat::tokio;
}
