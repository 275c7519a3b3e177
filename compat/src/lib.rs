//! ioloop under other crates' runtime traits. Today: hyper 1.x, in
//! `hyper` behind the `hyper` feature (re-exported by the
//! `ioloop` facade as `ioloop::compat::hyper` under its own `hyper`
//! feature).
//!
//! This crate exists because hyper hands a reader an uninitialized buffer,
//! and filling it without zeroing it first takes one `unsafe` call, which
//! the facade (`#![forbid(unsafe_code)]`) cannot make. That call is the
//! only `unsafe` here, in `hyper/io.rs`, argued in its `SAFETY` comment;
//! everything else is denied it.

#![deny(unsafe_code)]

#[cfg(feature = "hyper")]
pub mod hyper;
