//! Replaying: the same seed gives the same trace, other seeds others.

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::rc::Rc;

use ioloop::sim::{Faults, Report};

use crate::echo::echo_world;

fn run(seed: u64, faults: Faults) -> Report {
    let reconnects = Rc::new(RefCell::new(0));
    echo_world(seed, faults, reconnects)
        .run()
        .unwrap_or_else(|failure| panic!("{failure}"))
}

fn trace(seed: u64, faults: Faults) -> u64 {
    run(seed, faults).trace_hash
}

#[test]
fn the_same_seed_gives_the_same_trace() {
    for seed in [0, 1, 99, u64::MAX] {
        for faults in [Faults::default(), Faults::all()] {
            // The whole report: the hash, the virtual time, the event log.
            let first = run(seed, faults.clone());
            assert!(!first.recent.is_empty());
            assert_eq!(run(seed, faults), first, "seed {seed}");
        }
    }
}

#[test]
fn other_seeds_give_other_traces() {
    let traces: BTreeSet<u64> = (0..20).map(|seed| trace(seed, Faults::all())).collect();
    assert_eq!(traces.len(), 20);
}
