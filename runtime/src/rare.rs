//! Rare paths on purpose (issue 41): the core's unlikely branches, which a
//! simulation makes it take at seeded random to see that they hold. The
//! hook is a plain function pointer, set only while a simulation runs on
//! the thread; outside one, [`rare`] is one thread-local read, on cold
//! paths only, and answers `false`.

use std::cell::Cell;

/// A branch of the core a simulation may make the loop take.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RarePoint {
    /// A second poll-function caller on one direction evicts the oldest
    /// (woken, to register again) as if the shared waiters were full.
    Evict,
    /// Timers that fire in one tick wake their tasks in reverse order.
    TimerOrder,
}

/// What answers the core's rare points: a simulation's seeded chance, which
/// counts it.
pub type RareHook = fn(RarePoint) -> bool;

thread_local! {
    static HOOK: Cell<Option<RareHook>> = const { Cell::new(None) };
}

/// Makes `hook` answer this thread's rare points (`None`: no one does, every
/// answer is `false`); returns the hook it replaces, to be put back.
pub fn set_rare_hook(hook: Option<RareHook>) -> Option<RareHook> {
    HOOK.replace(hook)
}

/// Whether to take `point`'s branch now: only ever inside a simulation.
pub(crate) fn rare(point: RarePoint) -> bool {
    HOOK.get().is_some_and(|hook| hook(point))
}

#[cfg(test)]
mod tests {
    use super::{RarePoint, rare, set_rare_hook};

    #[test]
    fn the_hook_answers_only_while_set() {
        assert!(!rare(RarePoint::Evict), "no simulation: no rare path");
        assert!(set_rare_hook(Some(|point| point == RarePoint::Evict)).is_none());
        assert!(rare(RarePoint::Evict));
        assert!(!rare(RarePoint::TimerOrder));
        assert!(set_rare_hook(None).is_some());
        assert!(!rare(RarePoint::Evict), "unset: no rare path");
    }
}
