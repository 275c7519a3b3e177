//! ioloop under other crates' runtime traits:
//! - hyper 1.x, in `hyper` (feature `hyper`; the facade's
//!   `ioloop::compat::hyper`; the guide's chapter "Serving HTTP with hyper");
//! - tokio's I/O traits, in `tokio` (feature `tokio-io`; the facade's
//!   `ioloop::compat::tokio`; the guide's "Coming from tokio").
//!
//! A crate of its own for the `unsafe` the facade forbids: two calls in
//! each of `HyperIo`'s and `TokioIo`'s `poll_read`, which let the kernel
//! fill the caller's uninitialized buffer.

#![deny(unsafe_code)]

#[cfg(feature = "hyper")]
pub mod hyper;
#[cfg(any(feature = "hyper", feature = "tokio-io"))]
mod socket;
#[cfg(feature = "tokio-io")]
pub mod tokio;
