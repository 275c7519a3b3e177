//! The table of homes: every runtime with timers, by number, weakly.
//!
//! A timer's key names the runtime whose heap holds it (see
//! `timers.rs`). A thread that is not that runtime's loop, holding a
//! `Sleep` it moves earlier or drops, looks the runtime up here to hand
//! its loop the move or the removal. The table is touched when a runtime
//! is built or dropped, and by such a hand-over; never by the loop's own
//! timer work.

use std::sync::{Arc, Weak};

use parking_lot::Mutex;

use crate::event_loop::shared::Shared;

/// The runtimes that hold timers, by home number (index plus one), weakly:
/// how a thread that is not a loop's own reaches the loop of a timer it
/// holds the key of (a `Sleep` moved earlier from there). Touched when a
/// runtime is built or dropped, and by such a move; never by the loop.
static HOMES: Mutex<Vec<Option<Weak<Shared>>>> = Mutex::new(Vec::new());

/// A runtime's entry in [`HOMES`], for as long as its core lives.
#[derive(Debug)]
pub(crate) struct Home(u32);

impl Home {
    /// Enters `shared` in the table, in the first free entry.
    pub(crate) fn register(shared: &Arc<Shared>) -> Home {
        let mut homes = HOMES.lock();
        let weak = Some(Arc::downgrade(shared));
        let index = match homes.iter().position(Option::is_none) {
            Some(index) => {
                homes[index] = weak;
                index
            }
            None => {
                homes.push(weak);
                homes.len() - 1
            }
        };
        Home(u32::try_from(index + 1).expect("fewer than 4 billion runtimes"))
    }

    /// The number its timer keys carry.
    pub(crate) fn number(&self) -> u32 {
        self.0
    }
}

impl Drop for Home {
    fn drop(&mut self) {
        let mut homes = HOMES.lock();
        homes[self.0 as usize - 1] = None;
        // Give the table back once the last runtime is gone, so a process
        // that builds runtimes one at a time keeps none of it.
        while homes.last().is_some_and(Option::is_none) {
            homes.pop();
        }
        if homes.is_empty() {
            *homes = Vec::new();
        }
    }
}

/// The runtime numbered `home` (a timer key's), if it still runs.
pub(crate) fn home(home: u32) -> Option<Arc<Shared>> {
    let index = usize::try_from(home).ok()?.checked_sub(1)?;
    HOMES.lock().get(index)?.as_ref()?.upgrade()
}
