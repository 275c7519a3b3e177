//! The bugs planted in the library (the test-only feature `planted-bugs`:
//! `cargo test -p testkit --test sim --features planted-bugs`), each of a
//! kind found in ioloop from outside before the simulation existed: each
//! is caught by `line_echo`'s world, with no fault injected, within a
//! bounded number of seeds, and the seed that catches it replays the same
//! failure.

use std::cell::RefCell;
use std::rc::Rc;

use ioloop::sim::{Failure, Faults, Planted, plant, run_seeds};

use crate::echo::echo_world;

/// Seeds tried before a planted bug counts as missed.
const SEEDS: u64 = 200;

/// Runs `line_echo`'s world with `bug` planted until a seed fails; checks
/// that seed fails again the same way; returns the failure.
fn caught(bug: Planted) -> Failure {
    plant(Some(bug));
    let world = |seed| echo_world(seed, Faults::default(), Rc::new(RefCell::new(0)));
    let found = run_seeds(0..SEEDS, world);
    let replay = found
        .as_ref()
        .err()
        .map(|failure| world(failure.seed).run());
    plant(None);
    let failure = match found {
        Err(failure) => failure,
        Ok(runs) => panic!("{bug:?} went unnoticed in {runs} seeds"),
    };
    let again = replay.expect("replayed").expect_err("the seed fails again");
    assert_eq!(
        (&again.what, again.trace_hash),
        (&failure.what, failure.trace_hash)
    );
    // And without the bug, the same seed passes.
    world(failure.seed).run().unwrap_or_else(|f| panic!("{f}"));
    eprintln!("{bug:?} caught by seed {}: {}", failure.seed, failure.what);
    failure
}

#[test]
fn a_lost_wake_is_caught_and_its_seed_replays() {
    let failure = caught(Planted::LostWake);
    assert!(failure.what.contains("no echo"), "{failure}");
}

#[test]
fn a_mishandled_short_write_is_caught_and_its_seed_replays() {
    let failure = caught(Planted::ShortWrite);
    assert!(failure.what.contains("line"), "{failure}");
}

#[test]
fn a_waiter_never_woken_is_caught_and_its_seed_replays() {
    let failure = caught(Planted::WaiterNeverWoken);
    assert!(failure.what.contains("client"), "{failure}");
}
