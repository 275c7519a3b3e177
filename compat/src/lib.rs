//! ioloop under other crates' runtime traits: hyper 1.x, in `hyper` (feature
//! `hyper`; the facade's `ioloop::compat::hyper`). A crate of its own for the
//! `unsafe` the facade forbids (two calls, in `HyperIo`'s `poll_read`): see
//! the guide's chapter "Serving HTTP with hyper".

#![deny(unsafe_code)]

#[cfg(feature = "hyper")]
pub mod hyper;
