//! What the loom models share: a scheduler that only queues, a runtime's
//! `Shared` with no loop behind it, the loop's handling of injected work, a
//! waker that records being woken, and a value that counts its drops.
//!
//! No model thread runs a loop (this thread's current runtime is empty),
//! so every wake and spawn in a model of the runtime takes the path a
//! foreign thread takes: the injection queue and the park state. The task
//! models need none of that: a task knows only its scheduler.

use std::collections::VecDeque;
use std::sync::Arc;
use std::task::{Wake, Waker};
use std::time::Duration;

use super::{AtomicBool, AtomicUsize, Mutex, Ordering, PollWaker};
use crate::blocking::{self, Pool};
use crate::event_loop::cell::{Schedule, Task};
use crate::event_loop::core::{Core, Driver};
use crate::event_loop::core::{Job, Shared};
use crate::event_loop::reactor::{Reactor, WAKER_TOKEN};
use crate::joiners::Joiners;

/// A scheduler that queues woken tasks for the model to run.
pub(crate) struct Queue(Mutex<VecDeque<Task>>, Joiners);

impl Default for Queue {
    fn default() -> Self {
        Queue(Mutex::new(VecDeque::new()), Joiners::default())
    }
}

impl Schedule for Queue {
    fn schedule(&self, task: Task) -> Option<Task> {
        // Another model thread may run the task to its end, dropping it
        // and this queue, as soon as it is in: a reference is kept.
        let kept = task.clone();
        self.0.lock().push_back(task);
        Some(kept)
    }

    fn joiners(&self) -> &Joiners {
        &self.1
    }
}

impl Queue {
    /// The tasks queued so far, taken out in one go.
    pub(crate) fn take(&self) -> Vec<Task> {
        self.0.lock().drain(..).collect()
    }

    /// Runs queued tasks until none are left, those their runs queue
    /// included: the loop's part in the task models. Returns how many ran.
    pub(crate) fn run_all(&self) -> usize {
        let mut ran = 0;
        loop {
            let tasks = self.take();
            if tasks.is_empty() {
                return ran;
            }
            for task in tasks {
                task.run();
                ran += 1;
            }
        }
    }
}

/// A runtime's shared half, as `Runtime::new` builds it, minus the loop.
///
/// The reactor needs a real epoll instance for its registry: its syscalls
/// never block and loom does not see them, which is fine, since the models
/// are about what happens around the reactor's lock, not in the kernel.
pub(crate) fn shared() -> Arc<Shared> {
    let poll = mio::Poll::new().expect("an epoll instance");
    let waker = PollWaker::new(poll.registry(), WAKER_TOKEN).expect("the poller's waker");
    let registry = poll.registry().try_clone().expect("a second registry fd");
    let pool = Pool::new(blocking::Config {
        max_threads: 1,
        keep_alive: Duration::from_secs(1),
        stack_size: None,
    });
    Arc::new(Shared::new(waker, Reactor::new(registry), pool))
}

/// The loop's own state for `shared`, with a poller of its own that the
/// models never wait in.
pub(crate) fn core(shared: &Arc<Shared>) -> Core {
    let poll = mio::Poll::new().expect("an epoll instance");
    Core::new(shared.clone(), Driver::new(poll, 8), 61, None)
}

/// The jobs handed in from other threads, taken out of the injection queue
/// in one go, as `Core::take_injected` does.
pub(crate) fn take_injected(shared: &Shared) -> Vec<Job> {
    shared.inject.lock().queue.drain(..).collect()
}

/// A waker that records that it was woken.
#[derive(Default)]
pub(crate) struct Flag(AtomicBool);

impl Flag {
    pub(crate) fn new() -> Arc<Flag> {
        Arc::new(Flag::default())
    }

    pub(crate) fn waker(self: &Arc<Self>) -> Waker {
        Waker::from(self.clone())
    }

    /// Whether it was woken since the last call.
    pub(crate) fn take(&self) -> bool {
        self.0.swap(false, Ordering::AcqRel)
    }
}

impl Wake for Flag {
    fn wake(self: Arc<Self>) {
        self.0.store(true, Ordering::Release);
    }
}

/// A value that counts its drops in a shared counter, so a model can tell
/// a value dropped once from one dropped twice or leaked.
pub(crate) struct Counted(pub(crate) Arc<AtomicUsize>);

impl Counted {
    pub(crate) fn new() -> (Counted, Arc<AtomicUsize>) {
        let drops = Arc::new(AtomicUsize::new(0));
        (Counted(drops.clone()), drops)
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::AcqRel);
    }
}
