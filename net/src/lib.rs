//! ioloop's sockets and asyncio-style streams.
//!
//! Every socket here is a mio socket registered once with the reactor
//! through `ioloop_runtime::io::Registration`, and every socket method
//! follows the one pattern that type provides: try the syscall; on
//! `WouldBlock`, clear readiness and wait; retry.
//!
//! - [`tcp`]: [`TcpListener`], [`TcpStream`] and its halves, and
//!   [`TcpSocket`], for options set before binding or connecting.
//! - [`udp`]: [`UdpSocket`], datagrams.
//! - [`ToSocketAddrs`], what every `bind` and `connect` takes (literal
//!   addresses, slices of them, host names), and [`lookup_host`]: names
//!   are resolved on the runtime's blocking pool, never on the loop thread.
//! - [`unix`]: Unix domain sockets: [`UnixListener`], [`UnixStream`] and
//!   its halves, [`UnixDatagram`].
//! - [`io`]: [`StreamReader`](io::StreamReader) and
//!   [`StreamWriter`](io::StreamWriter), asyncio's streams: the lesson's
//!   `inbuf` and `outbuf`.
//! - [`callbacks`]: the lesson's callback `Reactor` (`on_connect`,
//!   `on_data`, `on_disconnect`, `queue_send`), served on ioloop.
//!
//! The `ioloop` facade re-exports the sockets as `ioloop::net` and the
//! streams as `ioloop::io`.

#![forbid(unsafe_code)]

mod addr;
pub mod callbacks;
mod halves;
mod impls;
pub mod io;
mod options;
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
