//! What deterministic simulation needs from the runtime: a seeded source
//! of chance ([`Rng`]). A runtime built with
//! [`Builder::seed`](crate::Builder::seed) makes every scheduling choice
//! it is free to make from one, so the same seed runs the same way.

mod rng;

pub use rng::Rng;
