//! The reactor: which sources are registered, what they are ready for, and
//! who waits on them.
//!
//! - [`token`]: slab key + generation packed into a `mio::Token`.
//! - [`readiness`]: the readiness bits and [`ReadyEvent`].
//! - [`entries`]: the table of registrations, filled in after each poll.
//! - [`registration`]: [`Registration`], what sockets are built on.
//! - [`driver`]: the `mio::Poll` the loop sleeps in.

pub(crate) mod driver;
pub(crate) mod entries;
pub(crate) mod readiness;
pub(crate) mod registration;
pub(crate) mod token;

pub(crate) use entries::Reactor;
pub use readiness::ReadyEvent;
pub use registration::Registration;
