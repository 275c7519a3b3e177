//! Deterministic simulation's side of net: the simulated network the
//! sockets stand behind inside a simulation (issue 32).

mod network;
mod world;

pub(crate) use network::{Faults, HostId, NetConfig, Network, Ready, SockId};
pub(crate) use world::{Socket, lookup, not_simulated, running};
