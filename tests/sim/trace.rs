//! Replaying: the same seed gives the same trace, other seeds others.

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::rc::Rc;

use ioloop::sim::Faults;

use crate::echo::echo_world;

fn trace(seed: u64, faults: Faults) -> u64 {
    let reconnects = Rc::new(RefCell::new(0));
    match echo_world(seed, faults, reconnects).run() {
        Ok(report) => report.trace_hash,
        Err(failure) => panic!("{failure}"),
    }
}

#[test]
fn the_same_seed_gives_the_same_trace() {
    for seed in [0, 1, 99, u64::MAX] {
        for faults in [Faults::default(), Faults::all()] {
            let first = trace(seed, faults.clone());
            assert_eq!(trace(seed, faults), first, "seed {seed}");
        }
    }
}

#[test]
fn other_seeds_give_other_traces() {
    let traces: BTreeSet<u64> = (0..20).map(|seed| trace(seed, Faults::all())).collect();
    assert_eq!(traces.len(), 20);
}
