//! ioloop's sockets and asyncio-style streams.
//!
//! This crate builds on `ioloop_runtime::io::Registration`: every socket
//! type here is a mio socket registered once with the reactor, and every
//! socket method follows the one pattern that type provides (try the call;
//! on `WouldBlock`, clear readiness and wait; retry).
//!
//! It is re-exported by the `ioloop` facade as `ioloop::net` (sockets) and
//! `ioloop::io` (streams).

#![forbid(unsafe_code)]
