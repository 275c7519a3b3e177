//! ioloop under other crates' runtime traits: hyper 1.x, in `hyper` (feature
//! `hyper`; the facade's `ioloop::compat::hyper`). A crate of its own for one
//! `unsafe` call the facade forbids: see the guide's "Serving HTTP with hyper".

#![deny(unsafe_code)]

#[cfg(feature = "hyper")]
pub mod hyper;
