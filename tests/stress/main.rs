//! Scenarios at scale, and the ones that watch the whole process: tens of
//! thousands of connections, timers and wakes, fd exhaustion, panics
//! everywhere, a soak; the descriptors, resident memory and eventfds of
//! this very process.
//!
//! One at a time: every test here holds [`one_at_a_time`] for its whole
//! run, so each has the process (and the machine's two cores) to itself,
//! as it had when it was a binary of its own. The servers run in child
//! processes (this binary again, running only the calling test) where
//! their descriptors, memory and CPU are measured, or where an abort must
//! show as a failed exit.

use std::sync::{Mutex, MutexGuard, PoisonError};

mod close;
mod connections;
mod edge_wake;
mod edge_writer;
mod emfile;
mod panics;
mod soak;
mod tcp_fd_count;
mod timers;

/// The lock every test of this binary holds while it runs: descriptor
/// numbers reused at once, the process's open descriptors, its resident
/// memory and its eventfds are only this test's while no other runs.
fn one_at_a_time() -> MutexGuard<'static, ()> {
    static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());
    // A failed test poisons the lock; the next test owes it nothing.
    ONE_AT_A_TIME.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The rule above, checked: each test of this binary's files takes the
/// lock before it starts a runtime, a child or a thread (a test that did
/// not once let a runtime's eventfd be counted twice, `edge_wake.rs`).
#[test]
fn every_test_here_holds_the_lock() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/stress");
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(&dir).expect("tests/stress") {
        let path = entry.expect("an entry").path();
        let text = std::fs::read_to_string(&path).expect("a source file");
        for (i, test) in text.split("#[test]").enumerate().skip(1) {
            let body = test.split_once('{').map_or("", |(_, body)| body);
            let starts = ["Runtime::", "block_on", "within(", "spawn", "Command::"];
            let start = starts.iter().filter_map(|s| body.find(s)).min();
            let lock = body.find("one_at_a_time()");
            let holds = lock.is_some_and(|lock| start.is_none_or(|start| lock < start));
            let is_this = test.contains("fn every_test_here_holds_the_lock");
            if !holds && !is_this {
                missing.push(format!("{} (test {i})", path.display()));
            }
        }
    }
    assert!(missing.is_empty(), "tests without the lock: {missing:?}");
}
