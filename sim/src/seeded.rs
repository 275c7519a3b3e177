//! A seeded runtime's scheduler, given to the runtime through its `Pick`
//! seam ([`Seed::seed`]): which ready job runs next, drawn from an
//! [`Rng`], the hash of the order jobs ran in, and each task's tag, which
//! a simulation reads to know which host a socket is opened for.

use std::cell::{Cell, RefCell};

use ioloop_runtime::Builder;
use ioloop_runtime::seam::Pick;

use crate::rng::{Rng, TraceHash};

thread_local! {
    /// The tag of the task being polled on this thread (0: none): in a
    /// seeded loop, each task carries the tag current when it was spawned,
    /// so every task of one simulated host carries the host's.
    static TAG: Cell<u32> = const { Cell::new(0) };
}

/// A seeded runtime, in one call: [`Builder::scheduler`] with
/// [`Seeded`].
pub trait Seed {
    /// Makes every choice the loop is free to make a function of `seed`
    /// (see [`Builder::scheduler`]).
    ///
    /// ```
    /// use ioloop::sim::Seed;
    ///
    /// let rt = ioloop::Runtime::builder().seed(7).build().unwrap();
    /// assert!(rt.block_on(async { ioloop::sim::schedule_hash() }).is_some());
    /// ```
    fn seed(&mut self, seed: u64) -> &mut Self;
}

impl Seed for Builder {
    fn seed(&mut self, seed: u64) -> &mut Self {
        self.scheduler(seed, |seed| Box::new(Seeded::new(seed)))
    }
}

/// What a seeded loop draws its choices from and how it records them.
pub struct Seeded {
    rng: RefCell<Rng>,
    /// A hash of the order jobs ran in: two runs that chose alike match.
    trace: Cell<TraceHash>,
    /// Each task's tag, by task-list key.
    tags: RefCell<Vec<u32>>,
}

impl Seeded {
    /// A scheduler whose choices are a function of `seed`.
    pub fn new(seed: u64) -> Self {
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
        let tag = task.map_or(0, |key| self.tag(key));
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

    fn tag(&self, key: usize) -> u32 {
        self.tags.borrow().get(key).copied().unwrap_or(0)
    }
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

#[cfg(test)]
mod tests {
    use ioloop_runtime::seam::{Pick, abort_tagged};
    use ioloop_runtime::{Builder, Runtime, spawn_local, yield_now};

    use super::{Seed, Seeded, with_tag};

    /// The hash after each of `jobs` was chosen, on a fresh scheduler.
    fn hash(jobs: &[Option<usize>]) -> u64 {
        let seeded = Seeded::new(0);
        for &job in jobs {
            seeded.chosen(job);
        }
        seeded.hash()
    }

    #[test]
    fn every_job_hashes_apart_block_on_and_the_first_task_too() {
        // `block_on`'s future and task 0 are different jobs: a schedule
        // that ran one where the other ran is another schedule.
        assert_ne!(hash(&[None]), hash(&[Some(0)]));
        assert_ne!(hash(&[Some(0)]), hash(&[Some(1)]));
        assert_ne!(hash(&[Some(0), Some(1)]), hash(&[Some(1), Some(0)]));
        assert_eq!(hash(&[Some(3), None]), hash(&[Some(3), None]));
    }

    #[test]
    fn abort_tagged_aborts_the_tasks_of_one_tag_and_no_other() {
        let rt = Builder::new().seed(0).build().expect("a runtime");
        rt.block_on(async {
            let pending = || spawn_local(std::future::pending::<()>());
            let ones: Vec<_> = (0..3).map(|_| with_tag(1, pending)).collect();
            let two = with_tag(2, pending);
            let untagged = pending();
            yield_now().await;
            assert_eq!(abort_tagged(7), 0, "no task has tag 7");
            assert_eq!(abort_tagged(1), 3);
            for one in ones {
                assert!(one.await.expect_err("aborted").is_cancelled());
            }
            yield_now().await;
            assert!(!two.is_finished() && !untagged.is_finished());
            assert_eq!(abort_tagged(1), 0, "gone already");
        });
        // Outside a seeded runtime there is nothing to abort.
        assert_eq!(abort_tagged(1), 0);
        let plain = Runtime::new().expect("a runtime");
        plain.block_on(async {
            let _task = with_tag(1, || spawn_local(std::future::pending::<()>()));
            yield_now().await;
            assert_eq!(abort_tagged(1), 0);
        });
    }
}
