//! Which runtime, if any, is running on this thread.
//!
//! While `block_on` runs, the loop's [`Core`] sits in a thread-local slot.
//! That is how `ioloop::spawn`, `sleep` and a waker fired on the loop thread
//! find the loop without being handed it, and how `block_on` refuses to
//! start a second loop inside the first.
//!
//! The slot is only borrowed mutably to put the core in or take it out;
//! everything in between takes shared borrows, so a task's poll can reach
//! the core while the loop that polls it also holds it.

use std::cell::RefCell;

use parking_lot::Mutex;

use crate::core::{Core, Job};
use crate::shared::Shared;

thread_local! {
    static CURRENT: RefCell<Option<Box<Core>>> = const { RefCell::new(None) };
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

/// Puts a runtime's core into this thread's slot until dropped, then back
/// into the runtime.
pub(crate) struct Entered<'a> {
    home: &'a Mutex<Option<Box<Core>>>,
}

/// Takes the core out of `home` and makes it this thread's current loop.
///
/// # Panics
///
/// If a loop already runs on this thread (block_on inside a task would
/// stall every other task), or if `home` is empty (block_on already runs on
/// another thread).
pub(crate) fn enter(home: &Mutex<Option<Box<Core>>>) -> Entered<'_> {
    if is_inside() {
        panic!(
            "ioloop: block_on called from inside a running runtime; it would block the loop \
             that runs this task. Use `.await` on the future, or `ioloop::spawn` it."
        );
    }
    let core = home.lock().take().unwrap_or_else(|| {
        panic!(
            "ioloop: Runtime::block_on is already running on another thread; \
             a runtime runs one loop at a time. Use Handle::spawn to hand it work."
        )
    });
    CURRENT.with(|slot| *slot.borrow_mut() = Some(core));
    Entered { home }
}

impl Drop for Entered<'_> {
    fn drop(&mut self) {
        // Registrations polled on this thread from now on are not a task's.
        crate::task::budget::lift();
        let core = CURRENT.with(|slot| slot.borrow_mut().take());
        *self.home.lock() = core;
    }
}
