//! ioloop's sockets and asyncio-style streams, re-exported by `ioloop` as
//! `ioloop::net` and `ioloop::io`. Every socket is a mio socket registered
//! once with the reactor, whose methods all follow one pattern: try the
//! syscall; on `WouldBlock`, clear readiness and wait; retry.
//!
//! - [`tcp`], [`udp`], [`unix`]: the sockets; [`ToSocketAddrs`], what
//!   `bind` and `connect` take, and [`lookup_host`] (names are resolved on
//!   the blocking pool).
//! - [`io`]: [`StreamReader`](io::StreamReader) and
//!   [`StreamWriter`](io::StreamWriter), the lesson's inbuf and outbuf, and
//!   [`read_buf`](io::read_buf).
//! - [`callbacks`]: the lesson's callback `Reactor`, served on ioloop.

#![forbid(unsafe_code)]

mod addr;
pub mod callbacks;
mod halves;
mod impls;
pub mod io;
mod options;
mod outbox;
pub mod sim;
mod sys;
mod syscall;
pub mod tcp;
pub mod udp;
#[cfg(unix)]
pub mod unix;

pub use addr::{ToSocketAddrs, lookup_host};
pub use tcp::*;
pub use udp::*;
#[cfg(unix)]
pub use unix::{UnixDatagram, UnixListener, UnixStream};
