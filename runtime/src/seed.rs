//! A seeded runtime's scheduler (`Builder::seed`), through the core's
//! `Pick` seam: which ready job runs next, drawn from an [`Rng`], the
//! hash of the order jobs ran in, and each task's tag, which a simulation
//! reads to know which host a socket is opened for.

use std::cell::{Cell, RefCell};

use crate::event_loop::backend::Pick;
use crate::event_loop::core;
use crate::rng::{Rng, TraceHash};

thread_local! {
    /// The tag of the task being polled on this thread (0: none): in a
    /// seeded loop, each task carries the tag current when it was spawned,
    /// so every task of one simulated host carries the host's.
    static TAG: Cell<u32> = const { Cell::new(0) };
}

/// What a seeded loop draws its choices from and how it records them.
pub(crate) struct Seeded {
    rng: RefCell<Rng>,
    /// A hash of the order jobs ran in: two runs that chose alike match.
    trace: Cell<TraceHash>,
    /// Each task's tag, by task-list key.
    tags: RefCell<Vec<u32>>,
}

impl Seeded {
    /// A scheduler whose choices are a function of `seed`.
    pub(crate) fn new(seed: u64) -> Self {
        Seeded {
            rng: RefCell::new(Rng::new(seed)),
            trace: Cell::new(TraceHash::new()),
            tags: RefCell::new(Vec::new()),
        }
    }
}

/// Every order in which jobs can become ready (a timer, an I/O event, a
/// waiter, a spawn) comes through the run queue, so this one choice
/// covers them all.
impl Pick for Seeded {
    fn choose(&self, ready: usize) -> usize {
        self.rng.borrow_mut().below(ready as u64) as usize
    }

    fn chosen(&self, task: Option<usize>) {
        // The job's tag is current while it runs (and until the next pick):
        // what it spawns carries it.
        let tag = task.map_or(0, |key| self.tags.borrow().get(key).copied().unwrap_or(0));
        TAG.set(tag);
        let id = task.map_or(0, |key| key as u64 + 1);
        let mut hash = self.trace.get();
        hash.add(&id.to_le_bytes());
        self.trace.set(hash);
    }

    fn entered(&self, key: usize) {
        let mut tags = self.tags.borrow_mut();
        if tags.len() <= key {
            tags.resize(key + 1, 0);
        }
        tags[key] = TAG.get();
    }

    fn hash(&self) -> u64 {
        self.trace.get().get()
    }
}

/// A hash of the order the loop on this thread ran its jobs in so far, if
/// it is seeded ([`Builder::seed`](crate::Builder::seed)): the same seed,
/// the same hash. `None` outside a seeded runtime.
pub fn schedule_hash() -> Option<u64> {
    core::with_core(|core| core.and_then(|core| core.schedule_hash()))
}

/// The tag of the task running on this thread; 0 if none. In a seeded
/// runtime each task carries the tag that was current when it was spawned
/// (its spawner's): a simulation tags a host's first task with the host,
/// and every task that one spawns is the host's too.
pub fn tag() -> u32 {
    TAG.get()
}

/// Runs `f` with `tag` current: a task it spawns on a seeded runtime
/// carries `tag`.
pub fn with_tag<R>(tag: u32, f: impl FnOnce() -> R) -> R {
    struct Restore(u32);
    impl Drop for Restore {
        fn drop(&mut self) {
            TAG.set(self.0);
        }
    }
    let _restore = Restore(TAG.replace(tag));
    f()
}
