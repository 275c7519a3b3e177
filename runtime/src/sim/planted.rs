//! Bugs planted for tests/sim/planted.rs to show that a simulation catches
//! them: compiled in only with the test-only `planted-bugs` feature, and
//! each off until a test turns it on for its thread ([`plant`]).

use std::cell::Cell;

/// A bug the library can be built with, of a kind found in ioloop from
/// outside before the simulation existed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Planted {
    /// A lost wake: an event that makes a source both readable and
    /// writable wakes only its readers (an `else if` where both
    /// directions should be checked).
    LostWake,
    /// A short write mishandled: when the kernel takes only part of a
    /// stream's outbox, the rest is dropped as if sent.
    ShortWrite,
    /// A waiter never woken: of several timers due in one firing, only
    /// the first task is woken; the others' timers are gone.
    WaiterNeverWoken,
}

thread_local! {
    static PLANTED: Cell<Option<Planted>> = const { Cell::new(None) };
}

/// Turns `bug` on (or, with `None`, every bug off) for this thread.
pub fn plant(bug: Option<Planted>) {
    PLANTED.set(bug);
}

/// Whether `bug` is on for this thread.
pub fn planted(bug: Planted) -> bool {
    PLANTED.get() == Some(bug)
}
