//! Deterministic simulation, re-exported by `ioloop` as `ioloop::sim`:
//! [`Sim`] runs a server and its clients in one seeded world, where
//! `TcpStream`, `TcpListener` and `UdpSocket` stand for sockets of a
//! simulated network (`network.rs`), on a virtual clock, and a failure
//! names the seed that replays it ([`run_seeds`], [`SEED_VAR`]).
//!
//! The library under test is the one that runs in production: a world
//! reaches it only through two seams, the runtime's [`Backend`] (what its
//! loop polls beside the OS; `world.rs`'s `Seam`) and net's
//! `ioloop_net::seam::Network` (where a simulated socket's calls go;
//! `world.rs`'s `Sockets`), and through a seeded runtime
//! ([`Seed::seed`], the runtime's `Builder::scheduler` with [`Seeded`]), whose order of
//! jobs [`schedule_hash`] hashes.

#![forbid(unsafe_code)]

mod errno;
mod harness;
mod network;
mod rare;
mod rng;
mod seeded;
mod seeds;
mod unix;
mod world;

pub use harness::{COVERAGE_VAR, Failure, Faults, Report, SEED_VAR, Sim};
pub use ioloop_runtime::seam::{Backend, Ready, schedule_hash};
pub use rare::RARE_POINTS;
pub use rng::{Rng, TraceHash};
pub use seeded::{Seed, Seeded, tag, with_tag};
pub use seeds::{DETERMINISM_VAR, check_determinism, run_seed, run_seeds};
