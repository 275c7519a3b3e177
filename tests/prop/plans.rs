//! Strategies for the `StreamWriter` properties: water marks, a plan for the
//! in-memory writer (partial takes, `Pending`, `WouldBlock`, failures), and
//! the bytes to write, each one telling where in the stream it belongs.

use std::io;

use proptest::prelude::*;

use testkit::io_writer::{Act, Plan};

/// The error kind of an injected failure: one nothing else produces, so a
/// test can tell it apart and retry.
pub const INJECTED: io::ErrorKind = io::ErrorKind::ConnectionAborted;

/// `(high, low)` water marks: the default (0, 0), small ones a few writes
/// cross, and large ones past the 64 KiB the buffer keeps when it empties.
pub fn limits() -> impl Strategy<Value = (usize, usize)> {
    prop_oneof![
        2 => Just((0, 0)),
        3 => (0..=300usize).prop_flat_map(|high| (Just(high), 0..=high)),
        1 => (0..=100_000usize).prop_flat_map(|high| (Just(high), 0..=high)),
    ]
}

/// What the in-memory writer does, call after call: the list repeats.
#[derive(Clone, Debug)]
pub struct Acts(pub Vec<Act>);

/// Partial takes of every size, refusals and failures. Each list ends with
/// a take of at least one byte, so every pass over it makes progress and
/// a retrying caller finishes.
pub fn acts() -> impl Strategy<Value = Acts> {
    let act = prop_oneof![
        4 => (1..=64usize).prop_map(Act::Take),
        2 => (1..=5_000usize).prop_map(Act::Take),
        1 => Just(Act::Take(usize::MAX)),
        2 => Just(Act::Pending),
        2 => Just(Act::WouldBlock),
        1 => Just(Act::Fail(io::ErrorKind::Interrupted)),
        1 => Just(Act::Fail(INJECTED)),
    ];
    (prop::collection::vec(act, 0..=12), 1..=200usize).prop_map(|(mut acts, last)| {
        acts.push(Act::Take(last));
        Acts(acts)
    })
}

impl Acts {
    /// The plan for `io_writer::planned`: call `i` does `acts[i % len]`.
    pub fn plan(self) -> Plan {
        Box::new(move |call, _| self.0[call % self.0.len()])
    }
}

/// The `i`th byte of the written stream: a mix of the position's bits, so
/// a byte lost, repeated or moved shows as a mismatch nearby.
pub fn byte_at(i: usize) -> u8 {
    ((i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 56) as u8
}

/// A write's length: mostly small, some around a socket buffer, now and
/// then past the 64 KiB the buffer keeps.
pub fn write_len() -> impl Strategy<Value = usize> {
    prop_oneof![
        6 => 0..=300usize,
        2 => 0..=5_000usize,
        1 => 60_000..=70_000usize,
    ]
}
