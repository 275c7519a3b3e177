//! Deterministic simulation: [`Sim`] runs a server and its clients in one
//! seeded world, where `TcpStream`, `TcpListener` and `UdpSocket` stand
//! for sockets of a simulated network (`network.rs`), reached through the
//! world on the thread (`world.rs`), and a failure names the seed that
//! replays it ([`run_seeds`], [`SEED_VAR`]).

mod errno;
mod harness;
mod network;
mod world;

pub use harness::{Failure, Faults, Report, SEED_VAR, Sim, run_seeds};

pub(crate) use world::{Socket, lookup, not_simulated, running};
