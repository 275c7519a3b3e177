//! Which runtime, if any, this thread belongs to.
//!
//! While `block_on` runs, the loop's [`Core`] sits in a thread-local slot.
//! That is how `ioloop::spawn`, `sleep` and a waker fired on the loop thread
//! find the loop without being handed it, and how `block_on` refuses to
//! start a second loop inside the first.
//!
//! A thread may also work *for* a runtime without running its loop: a
//! blocking-pool thread during a job, or a `block_on` waiting for another
//! thread's turn to end. It holds the runtime's [`Shared`] half in a second
//! slot, so `Handle::current()`, `spawn` and `sleep` reach the loop from
//! there, across threads.
//!
//! The core's slot is only borrowed mutably to put the core in or take it
//! out; everything in between takes shared borrows, so a task's poll can
//! reach the core while the loop that polls it also holds it.
//!
//! Every access uses `try_with`: a runtime kept in a `thread_local!` is
//! dropped while the thread's locals are being destroyed, and these slots
//! may already be gone by then.

use std::cell::RefCell;
use std::sync::Arc;
use std::thread::{self, Thread};

use parking_lot::Mutex;

use crate::core::{Core, Job};
use crate::shared::Shared;

thread_local! {
    static CURRENT: RefCell<Option<Box<Core>>> = const { RefCell::new(None) };
    static WORKING_FOR: RefCell<Option<Arc<Shared>>> = const { RefCell::new(None) };
}

/// Runs `f` with the core of the runtime running on this thread, or `None`.
pub(crate) fn with_core<R>(f: impl FnOnce(Option<&Core>) -> R) -> R {
    let mut f = Some(f);
    // `try_with` fails only while the thread's locals are being destroyed;
    // no loop runs then.
    match CURRENT.try_with(|slot| {
        let core = slot.borrow();
        (f.take().expect("called once"))(core.as_deref())
    }) {
        Ok(r) => r,
        Err(_) => (f.take().expect("called once"))(None),
    }
}

/// The shared half of the runtime this thread belongs to: the one whose
/// loop it runs, else the one it works for.
pub(crate) fn current() -> Option<Arc<Shared>> {
    with_core(|core| core.map(|core| core.shared.clone())).or_else(working_for)
}

/// The runtime this thread works for without running its loop.
pub(crate) fn working_for() -> Option<Arc<Shared>> {
    WORKING_FOR
        .try_with(|slot| slot.borrow().clone())
        .ok()
        .flatten()
}

/// Pushes `job` on the local run queue if this thread runs the loop that
/// owns `shared`; gives it back otherwise.
pub(crate) fn push_local(shared: &Shared, job: Job) -> Result<(), Job> {
    with_core(|core| match core {
        Some(core) if std::ptr::eq(&*core.shared, shared) => {
            core.push(job);
            Ok(())
        }
        _ => Err(job),
    })
}

/// Returns `true` if some runtime's loop is running on this thread.
pub(crate) fn is_inside() -> bool {
    with_core(|core| core.is_some())
}

/// Makes this thread work for `shared` until the guard drops: a blocking
/// job, or a `block_on` waiting its turn.
pub(crate) fn work_for(shared: Arc<Shared>) -> WorkingFor {
    let previous = WORKING_FOR
        .try_with(|slot| slot.borrow_mut().replace(shared))
        .ok()
        .flatten();
    WorkingFor { previous }
}

/// Restores the runtime this thread worked for before [`work_for`].
pub(crate) struct WorkingFor {
    previous: Option<Arc<Shared>>,
}

impl Drop for WorkingFor {
    fn drop(&mut self) {
        let previous = self.previous.take();
        // Fails only while the thread's locals are destroyed: nothing to restore.
        let _ = WORKING_FOR.try_with(|slot| *slot.borrow_mut() = previous);
    }
}

/// Where a runtime's core lives while no thread runs its loop, and the
/// threads waiting for it.
#[derive(Default)]
pub(crate) struct Home {
    slot: Mutex<Slot>,
}

#[derive(Default)]
struct Slot {
    core: Option<Box<Core>>,
    /// Threads in `block_on` waiting for the core; unparked when it returns.
    waiting: Vec<Thread>,
}

impl Home {
    pub(crate) fn new(core: Box<Core>) -> Self {
        Home {
            slot: Mutex::new(Slot {
                core: Some(core),
                waiting: Vec::new(),
            }),
        }
    }

    /// Takes the core if it is home; else notes that this thread waits for
    /// it, to be unparked when it comes back.
    pub(crate) fn take_or_wait(&self) -> Option<Box<Core>> {
        let mut slot = self.slot.lock();
        let me = thread::current();
        slot.waiting.retain(|t| t.id() != me.id());
        let core = slot.core.take();
        if core.is_none() {
            slot.waiting.push(me);
        }
        core
    }

    /// Forgets that this thread waits for the core.
    pub(crate) fn stop_waiting(&self) {
        let me = thread::current().id();
        self.slot.lock().waiting.retain(|t| t.id() != me);
    }

    /// Runs `f` on the core if it is home.
    pub(crate) fn with_core<R>(&self, f: impl FnOnce(&Core) -> R) -> Option<R> {
        self.slot.lock().core.as_deref().map(f)
    }

    /// Takes the core for good, when the runtime is dropped.
    pub(crate) fn take(&mut self) -> Option<Box<Core>> {
        self.slot.get_mut().core.take()
    }

    fn put_back(&self, core: Box<Core>) {
        let waiting = {
            let mut slot = self.slot.lock();
            slot.core = Some(core);
            std::mem::take(&mut slot.waiting)
        };
        for thread in waiting {
            thread.unpark();
        }
    }
}

/// A runtime's core installed as this thread's loop; it goes back home
/// when the guard drops, even if the loop unwinds.
pub(crate) struct Entered<'a> {
    home: &'a Home,
}

/// Makes `core` this thread's current loop until the guard drops.
///
/// Gives the core back if this thread's locals are already destroyed (the
/// thread is exiting): no loop can run on it any more.
pub(crate) fn enter(home: &Home, core: Box<Core>) -> Result<Entered<'_>, Box<Core>> {
    let mut core = Some(core);
    match CURRENT.try_with(|slot| *slot.borrow_mut() = core.take()) {
        Ok(()) => Ok(Entered { home }),
        Err(_) => Err(core.take().expect("not moved on failure")),
    }
}

impl Drop for Entered<'_> {
    fn drop(&mut self) {
        // Registrations polled on this thread from now on are not a task's.
        crate::task::budget::lift();
        let core = CURRENT
            .try_with(|slot| slot.borrow_mut().take())
            .ok()
            .flatten();
        if let Some(core) = core {
            self.home.put_back(core);
        }
    }
}
