//! ioloop's sockets and asyncio-style streams, re-exported by `ioloop` as
//! `ioloop::net` and `ioloop::io`. Every socket is registered once with the
//! reactor, and its methods all follow one pattern: try the syscall; on
//! `WouldBlock`, clear readiness and wait; retry. A Unix socket is always
//! mio's; a TCP or UDP socket is mio's, or, opened by a host's task inside
//! a simulation, a socket of the simulated network that `ioloop-sim`
//! installs through [`seam`], and only `sys.rs` and `syscall.rs` tell the
//! two apart.
//!
//! - [`tcp`], [`udp`], [`unix`]: the sockets; [`ToSocketAddrs`], what
//!   `bind` and `connect` take, and [`lookup_host`] (names are resolved on
//!   the blocking pool).
//! - [`io`]: [`StreamReader`](io::StreamReader) and
//!   [`StreamWriter`](io::StreamWriter), the lesson's inbuf and outbuf
//!   behind `await`, [`read_buf`](io::read_buf), and the buffers alone,
//!   [`InBuf`](io::InBuf) and [`OutBuf`](io::OutBuf), for the layers built
//!   over the sockets in crates of their own (ioloop-callbacks, the
//!   lesson's callback `Reactor`).

#![forbid(unsafe_code)]

mod addr;
mod halves;
mod impls;
pub mod io;
mod options;
mod outbox;
pub mod seam;
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
