//! Replaying: the same seed gives the same trace, other seeds others.

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::rc::Rc;

use ioloop::sim::{Faults, Report};

use crate::echo::echo_world;
use crate::hyper::hyper_world;
use crate::kv::kv_world;
use crate::retry::Seen;

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

#[test]
fn the_kv_and_hyper_worlds_replay_the_same_trace_from_the_same_seed() {
    let hash = |sim: &mut ioloop::sim::Sim| match sim.run() {
        Ok(report) => report.trace_hash,
        Err(failure) => panic!("{failure}"),
    };
    let seen = Rc::new(RefCell::new(Seen::default()));
    for seed in [0, 1, 7] {
        let kv = || kv_world(seed, Faults::all(), 8, seen.clone());
        assert_eq!(hash(&mut kv()), hash(&mut kv()), "kv, seed {seed}");
        let http = || hyper_world(seed, Faults::all(), 8, seen.clone());
        assert_eq!(hash(&mut http()), hash(&mut http()), "hyper, seed {seed}");
    }
}
