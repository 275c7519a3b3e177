//! A dump of a runtime's live tasks: what each is doing, and what it waits
//! on, as a JVM's thread dump shows its threads.
//!
//! It costs the hot path nothing but a poll counter per task: a dump
//! matches wakers to tasks. A task's waker points at the task itself, so
//! the data pointer of every waker parked in the reactor (a read or a
//! write waiting on a source), in the timer heap and in a task's join slot
//! names the task that will be woken, and that is what the task waits on.
//!
//! What another thread can reach while the loop is stuck in a poll: the
//! task list, the reactor's waiters and the join slots (all behind locks
//! the loop never holds across a poll), and which task is being polled.
//! The timer heap belongs to the loop: timer waits are known only to a
//! dump taken on the loop's own thread (from a task, say).
//!
//! Times (a task's age, a timer's time left) are read on the runtime's
//! clock, which is virtual once it is paused, as in every simulation: the
//! real clock there said a 60-second sleep was due in 60 s however far
//! the virtual clock had moved (bug 9 of issue 40).

use std::collections::BTreeMap;
use std::fmt;
use std::panic::Location;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::clock;
use crate::event_loop::core;
use crate::event_loop::core::Shared;
use crate::event_loop::reactor::Direction;

/// The live tasks of a runtime, from [`Handle::dump`](crate::Handle::dump):
/// asyncio's `all_tasks()` with each task's `print_stack()`, as far as a
/// future can tell.
///
/// Its `Display` prints one line per task, oldest first.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use ioloop::task::{TaskState, WaitReason};
///
/// ioloop::block_on(async {
///     let sleeper = ioloop::spawn(ioloop::time::sleep(Duration::from_secs(60)));
///     ioloop::yield_now().await; // the sleeper's first poll arms its timer
///     let dump = ioloop::Handle::current().dump();
///     eprintln!("{dump}");
///     let task = &dump.tasks[0];
///     assert_eq!(task.state, TaskState::Idle);
///     assert!(matches!(task.waits_on[..], [WaitReason::Timer { .. }]));
///     sleeper.abort();
/// });
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Dump {
    /// Every task the loop has taken in and that has not finished, by id.
    ///
    /// A task spawned during the current tick (or from another thread and
    /// not yet taken in) enters the list at the start of the next tick,
    /// before its first poll.
    pub tasks: Vec<TaskDump>,
    /// The `block_on` future is being polled.
    pub main_running: bool,
}

/// One task in a [`Dump`].
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct TaskDump {
    /// The task's id: unique in its runtime, never reused; the one the
    /// stall detector's warnings name.
    pub id: u64,
    /// Where it was spawned (`spawn`, `spawn_local`, `Handle::spawn`,
    /// `Runtime::spawn`, `JoinSet::spawn`...).
    pub location: &'static Location<'static>,
    /// Idle, queued or being polled.
    pub state: TaskState,
    /// How many times it has been polled.
    pub polls: u64,
    /// Time since it entered the loop's task list (within a tick of its
    /// spawn), on the runtime's clock: virtual time on a paused runtime.
    pub age: Duration,
    /// What an idle task waits on, where the dump could tell: empty if it
    /// waits on something else (a channel, a lock, a waker wrapped by a
    /// combinator) or is not idle.
    pub waits_on: Vec<WaitReason>,
}

/// What a task is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum TaskState {
    /// Waiting to be woken.
    Idle,
    /// Woken, in the run queue.
    Scheduled,
    /// Being polled right now. A task that stays so blocks the loop.
    Running,
}

/// Something an idle task waits on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum WaitReason {
    /// An I/O source to become readable (or to close).
    Read {
        /// The source's slot in the reactor's table.
        source: usize,
    },
    /// An I/O source to become writable.
    Write {
        /// The source's slot in the reactor's table.
        source: usize,
    },
    /// A timer (`sleep`, `timeout`, `interval`).
    Timer {
        /// When it fires, on the runtime's clock (see
        /// [`time::Instant`](crate::time::Instant)).
        deadline: Instant,
        /// How long it had left when the dump was taken, on the runtime's
        /// clock; zero once it is due.
        due_in: Duration,
    },
    /// Another task to finish (its `JoinHandle`).
    Join {
        /// The id of the task awaited.
        task: u64,
    },
}

/// Takes the dump of `shared`'s runtime, from any thread.
pub(crate) fn take(shared: &Arc<Shared>) -> Dump {
    let running = shared.watch.running();
    let listed: Vec<_> = shared
        .tasks
        .lock()
        .slab
        .iter()
        .map(|(key, listed)| (key, listed.id, listed.born, listed.task.clone()))
        .collect();
    // The clock tasks were born on, and timers armed on.
    let now = shared.clock.get().now();
    let mut dumps = Vec::with_capacity(listed.len());
    let mut by_data = BTreeMap::new();
    for (key, id, born, task) in &listed {
        if task.is_complete() {
            // Done, and leaving the list at the start of the next tick.
            continue;
        }
        let state = if running.is_some_and(|(_, k)| k == *key) {
            TaskState::Running
        } else if task.is_scheduled() {
            TaskState::Scheduled
        } else {
            TaskState::Idle
        };
        // Only an idle task waits.
        if state == TaskState::Idle {
            by_data.insert(task.as_ptr(), dumps.len());
        }
        dumps.push(TaskDump {
            id: *id,
            location: task.location(),
            state,
            polls: task.polls(),
            age: Duration::from_nanos(now.saturating_sub(*born)),
            waits_on: Vec::new(),
        });
    }
    let mut waits = |data: *const (), reason: WaitReason| {
        if let Some(&i) = by_data.get(&data)
            && !dumps[i].waits_on.contains(&reason)
        {
            dumps[i].waits_on.push(reason);
        }
    };
    shared
        .reactor
        .for_each_waiter(|source, direction, data| match direction {
            Direction::Read => waits(data, WaitReason::Read { source }),
            Direction::Write => waits(data, WaitReason::Write { source }),
        });
    for (_, id, _, task) in &listed {
        if let Some(data) = task.joiner() {
            waits(data, WaitReason::Join { task: *id });
        }
    }
    // The timer heap, if this is the loop's thread and no one holds it.
    core::with_core(|core| {
        if let Some(core) = core.filter(|core| Arc::ptr_eq(&core.shared, shared))
            && let Ok(timers) = core.timers.try_borrow()
        {
            timers.for_each_waiter(|at, data| {
                let deadline = clock::instant(at);
                let due_in = Duration::from_nanos(at.saturating_sub(now));
                waits(data, WaitReason::Timer { deadline, due_in });
            });
        }
    });
    dumps.sort_by_key(|task| task.id);
    Dump {
        tasks: dumps,
        main_running: running.is_some_and(|(_, key)| key == crate::base::MAIN),
    }
}

impl fmt::Display for Dump {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ioloop task dump: {} live task(s)", self.tasks.len())?;
        if self.main_running {
            write!(f, "; the block_on future is being polled")?;
        }
        for task in &self.tasks {
            write!(f, "\n  {task}")?;
        }
        Ok(())
    }
}

impl fmt::Display for TaskDump {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "task #{} spawned at {}: {}, polled {} time(s), age {:.3?}",
            self.id, self.location, self.state, self.polls, self.age
        )?;
        for (i, reason) in self.waits_on.iter().enumerate() {
            let sep = if i == 0 { "; waits on " } else { ", " };
            write!(f, "{sep}{reason}")?;
        }
        Ok(())
    }
}

impl fmt::Display for TaskState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TaskState::Idle => "idle",
            TaskState::Scheduled => "scheduled",
            TaskState::Running => "RUNNING",
        })
    }
}

impl fmt::Display for WaitReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WaitReason::Read { source } => write!(f, "reading I/O source {source}"),
            WaitReason::Write { source } => write!(f, "writing I/O source {source}"),
            WaitReason::Timer { due_in, .. } => write!(f, "a timer due in {due_in:.3?}"),
            WaitReason::Join { task } => write!(f, "task #{task} to finish"),
        }
    }
}
