//! The tasks waiting for one direction of a source to become ready.

use std::task::Waker;

/// A set this large is woken whole the first time (see [`Waiters`]).
const FIRST_LIMIT: usize = 64;

/// The tasks waiting for one direction of a source to become ready.
///
/// Most sources have one waiter per direction, kept inline: no allocation.
/// A second, distinct waiter (two tasks reading one socket, several
/// acceptors on one listener) moves the rest to the heap, where the vector
/// stays, emptied, for the next time. The next readiness event in the
/// direction wakes them all; one that then finds nothing to do (another
/// took the datagram, the connection) registers again and waits for the
/// next event. Nobody wakes anybody else, so no two waiters can wake each
/// other in a loop.
///
/// A waiter whose future was dropped stays until that event, and its wake
/// is then spurious and harmless. So that a source that never becomes ready
/// cannot collect them without end, a set that reaches its limit is woken
/// whole (the live waiters register again) and its limit doubles: at most
/// a logarithmic number of such rounds, however many tasks wait.
#[derive(Default)]
pub(crate) struct Waiters {
    first: Option<Waker>,
    more: Option<Box<More>>,
}

struct More {
    wakers: Vec<Waker>,
    limit: usize,
}

impl Waiters {
    /// Adds `waker`, unless it wakes a task already waiting. Returns the
    /// wakers to wake now, after the caller's lock is released: none,
    /// unless the set just reached its limit.
    #[inline]
    pub(crate) fn register(&mut self, waker: &Waker) -> Vec<Waker> {
        match &self.first {
            None => self.first = Some(waker.clone()),
            Some(first) if first.will_wake(waker) => {}
            Some(_) => return self.register_more(waker),
        }
        Vec::new()
    }

    /// `register` for a second waiter and beyond.
    #[cold]
    fn register_more(&mut self, waker: &Waker) -> Vec<Waker> {
        let more = self.more.get_or_insert_with(|| {
            Box::new(More {
                wakers: Vec::new(),
                limit: FIRST_LIMIT,
            })
        });
        if more.wakers.iter().any(|w| w.will_wake(waker)) {
            return Vec::new();
        }
        more.wakers.push(waker.clone());
        if more.wakers.len() + 1 < more.limit {
            return Vec::new();
        }
        more.limit *= 2;
        let mut all = std::mem::take(&mut more.wakers);
        all.extend(self.first.take());
        all
    }

    /// Moves every waiter into `out`, to be woken.
    #[inline]
    pub(crate) fn take_into(&mut self, out: &mut Vec<Waker>) {
        if let Some(waker) = self.first.take() {
            out.push(waker);
        }
        if let Some(more) = &mut self.more {
            // `append` leaves the vector empty with its capacity kept.
            out.append(&mut more.wakers);
        }
    }

    /// The data pointer of every waiter's waker, for a dump.
    pub(crate) fn for_each_data(&self, mut f: impl FnMut(*const ())) {
        self.first.iter().for_each(|waker| f(waker.data()));
        if let Some(more) = &self.more {
            more.wakers.iter().for_each(|waker| f(waker.data()));
        }
    }
}
