//! Where every world of this suite gets its [`Sim`]: one place to turn on
//! what a world is run with beyond its seed and faults (the library's rare
//! paths, issue 41 item 2, go on here once they land), so that each world
//! (echo, callbacks, kv, hyper, the workload) meets them at once.

use ioloop::sim::{Faults, Sim};

/// A world for `seed`, injecting `faults`.
pub fn sim(seed: u64, faults: Faults) -> Sim {
    let mut sim = Sim::new(seed);
    sim.faults(faults);
    sim
}

/// Whether `faults` can break a TCP connection: without them, a world's
/// clients are strict (a connection that breaks fails the run).
pub fn breaks_tcp(faults: &Faults) -> bool {
    faults.reset > 0.0 || faults.partitions || faults.stops
}
