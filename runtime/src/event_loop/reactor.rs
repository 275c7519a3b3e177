//! The reactor: which sources are registered, what they are ready for, and
//! who waits on them.
//!
//! [`Reactor`] is the table of registrations: one entry per source, with
//! its readiness and the tasks waiting to read and to write. This is the lesson's
//! `key.data`: where `selectors` hands back the object stored at
//! `register`, mio hands back a token, and the token leads here.
//!
//! # The table and the entries
//!
//! Each registered source has an [`IoEntry`], shared (an `Arc`) by the
//! table and by the source's `Registration`. The table, a slab behind one
//! mutex, is only what maps a token to its entry: the loop takes that lock
//! once per batch of events (`dispatch`), and registering and freeing a
//! source take it once each. It is a mutex rather than a `RefCell` so a
//! registration can be dropped, and its slot freed, from any thread.
//!
//! The readiness checks of the I/O hot path (`poll_ready`, `ready_now`,
//! `clear`) never touch the table: the registration goes straight to its
//! entry. An entry's readiness bits, the tick of the event that last set
//! them, and the shutdown flag are one atomic word, so a check that finds
//! its direction ready costs one atomic load, and a clear is one
//! compare-and-swap. Only a task that must wait takes the entry's own lock,
//! around its two sets of waiters (readers, writers). See [`IoEntry`] for
//! why no wakeup can be lost between the two.
//!
//! Lock order: the table, then an entry. Nothing holding an entry's lock
//! takes the table's, and no waker is woken under either.
//!
//! # Readiness
//!
//! Bit layout of an entry's readiness (the low byte of its state word):
//!
//! | bit | name | set by | cleared by |
//! |---|---|---|---|
//! | 0 | `READABLE` | a readable event | `clear_readiness` after `WouldBlock` |
//! | 1 | `WRITABLE` | a writable event | `clear_readiness` after `WouldBlock` |
//! | 2 | `READ_CLOSED` | peer shut down its write side, or hang-up | never: a closed direction stays closed |
//! | 3 | `WRITE_CLOSED` | hang-up, or an error on a writable socket | never |
//! | 4 | `ERROR` | `EPOLLERR` | `clear_readiness` (the caller has read the error by then) |
//! | 5 | `PRIORITY` | `EPOLLPRI`: TCP urgent data is pending | `clear_readiness`, with `READABLE` |
//!
//! A reader waits for any of `READABLE | READ_CLOSED | ERROR | PRIORITY`, a
//! writer for any of `WRITABLE | WRITE_CLOSED | ERROR`; a hang-up sets both
//! closed bits and so wakes both.
//!
//! Above the readiness byte, the state word holds the `SHUTDOWN` bit (bit
//! 8) and, in its high 32 bits, the tick of the last event that set bits.
//!
//! This file holds, in order: the token (a slab key and a generation),
//! the waiters of one direction of a source, the entry and the table.
//! `io.rs`, above the core, is the waiting half of an entry
//! (`Registration`: `poll_ready`, `ready_now`, `clear`).

use std::collections::VecDeque;
use std::io;
use std::sync::Arc;
use std::task::Waker;

use mio::event::Source;
use mio::{Interest, Registry, Token};
use slab::Slab;

use crate::base::set_waker;
use crate::rare::{RarePoint, rare};
use crate::sync::{AtomicBool, AtomicU64, Mutex, Ordering};

// The token: a slab key and a generation packed into a `mio::Token`. An
// event can arrive for a freed key's earlier owner (epoll keeps a
// registration while a duplicate of its fd lives), and the generation lets
// the reactor drop it.

/// Bits of the token that hold the slab key.
const KEY_BITS: u32 = usize::BITS / 2;
const KEY_MASK: usize = (1 << KEY_BITS) - 1;
/// Mask applied to generations so they fit above the key.
pub(crate) const GENERATION_MASK: usize = usize::MAX >> KEY_BITS;

/// The token of mio's waker. No registration can get it: its key bits are
/// all ones, one more than the largest key `pack` accepts.
pub(crate) const WAKER_TOKEN: Token = Token(usize::MAX);

/// Largest slab key a registration may have.
pub(crate) const MAX_KEY: usize = KEY_MASK - 1;

/// Builds the token for `key` in its `generation`.
pub(crate) fn pack(key: usize, generation: usize) -> Token {
    debug_assert!(key <= MAX_KEY);
    Token(((generation & GENERATION_MASK) << KEY_BITS) | key)
}

/// Splits a token into its key and generation.
pub(crate) fn unpack(token: Token) -> (usize, usize) {
    (token.0 & KEY_MASK, token.0 >> KEY_BITS)
}

/// Poll-function callers kept besides the inline one (see [`Waiters`]).
const SHARED_LIMIT: usize = 64;

/// A slab of waiting futures with room for more than this many is freed
/// once it is empty, so its memory follows the live waiters.
const KEEP_CAPACITY: usize = 64;

/// The tasks waiting for one direction of a source to become ready.
///
/// Two kinds of waiter:
///
/// - A *waiting future* (`readable()`, `recv_from`, `accept`: any future
///   made by a [`Waiter`](crate::io::Waiter)) holds a key, a slot of its
///   own in a slab: taken at its first `Pending`, updated in place on later
///   polls, given back by its `Drop`. Registering is O(1) however many
///   wait, and a future that stops waiting (dropped, cancelled) takes its
///   waker, and with it its task, out at once: the set holds the live
///   waiters, no others. The slab's memory is freed once it is empty.
/// - A *poll-function caller* (`poll_read_ready`, `poll_recv_from`,
///   `AsyncRead::poll_read`: no future object to hold a key) has no way to
///   say it stopped waiting. The first is kept inline (no allocation: the
///   hot path, one reader and one writer per connection), and up to
///   [`SHARED_LIMIT`] more, oldest first, distinct by `will_wake` (a scan
///   bounded by the limit). One more wakes the oldest, who registers again
///   if it still waits: so poll-function callers that moved on hold at most
///   that many tasks, and many more than that, all live, take turns being
///   woken, which is correct but busy. A crowd should wait through futures.
///
/// The next readiness event in the direction wakes them all; one that then
/// finds nothing to do (another took the datagram, the connection)
/// registers again and waits for the next event. A waiting future keeps
/// its slot, emptied, in between.
#[derive(Default)]
pub(crate) struct Waiters {
    first: Option<Waker>,
    more: Option<Box<More>>,
}

#[derive(Default)]
struct More {
    /// Poll-function callers besides `first`, oldest first.
    shared: VecDeque<Waker>,
    /// Waiting futures, each at its key; `None` once woken, until it
    /// registers again or drops.
    keyed: Slab<Option<Waker>>,
}

impl Waiters {
    /// Adds the waker of a poll-function caller, unless it wakes a task
    /// already waiting. Returns a waker to wake once the caller's lock is
    /// released: none, unless the oldest caller had to make room.
    #[inline]
    pub(crate) fn register(&mut self, waker: &Waker) -> Option<Waker> {
        match &self.first {
            None => {
                self.first = Some(waker.clone());
                None
            }
            Some(first) if first.will_wake(waker) => None,
            Some(_) => self.register_shared(waker),
        }
    }

    /// `register` for a second poll-function caller and beyond.
    #[cold]
    fn register_shared(&mut self, waker: &Waker) -> Option<Waker> {
        let shared = &mut self.more.get_or_insert_with(Box::default).shared;
        if shared.iter().any(|w| w.will_wake(waker)) {
            return None;
        }
        shared.push_back(waker.clone());
        if shared.len() > SHARED_LIMIT || rare(RarePoint::Evict) {
            shared.pop_front()
        } else {
            None
        }
    }

    /// Parks the waker of a waiting future at `key`, taking a slot for it
    /// if it has none yet. O(1). Returns a waker it replaced (the future
    /// moved to another task), to be dropped once the lock is released.
    pub(crate) fn register_keyed(
        &mut self,
        key: &mut Option<usize>,
        waker: &Waker,
    ) -> Option<Waker> {
        let keyed = &mut self.more.get_or_insert_with(Box::default).keyed;
        if let Some(slot) = key.and_then(|key| keyed.get_mut(key)) {
            return set_waker(slot, waker);
        }
        *key = Some(keyed.insert(Some(waker.clone())));
        None
    }

    /// Gives back the slot at `key`: its future stopped waiting. Returns
    /// the waker still parked there, to be dropped once the lock is
    /// released.
    pub(crate) fn remove_keyed(&mut self, key: usize) -> Option<Waker> {
        let more = self.more.as_mut()?;
        let parked = more.keyed.try_remove(key).flatten();
        if more.keyed.is_empty() && more.keyed.capacity() > KEEP_CAPACITY {
            more.keyed = Slab::new();
        }
        parked
    }

    /// Moves every waiter into `out`, to be woken. The waiting futures keep
    /// their slots.
    #[inline]
    pub(crate) fn take_into(&mut self, out: &mut Vec<Waker>) {
        if let Some(waker) = self.first.take() {
            out.push(waker);
        }
        if let Some(more) = &mut self.more {
            more.take_into(out);
        }
    }

    /// The data pointer of every waiter's waker, for a dump.
    pub(crate) fn for_each_data(&self, mut f: impl FnMut(*const ())) {
        self.first.iter().for_each(|waker| f(waker.data()));
        if let Some(more) = &self.more {
            more.shared.iter().for_each(|waker| f(waker.data()));
            more.keyed
                .iter()
                .filter_map(|(_, waker)| waker.as_ref())
                .for_each(|waker| f(waker.data()));
        }
    }
}

impl More {
    /// `Waiters::take_into` beyond the inline waiter.
    #[cold]
    fn take_into(&mut self, out: &mut Vec<Waker>) {
        // `drain` leaves the deque empty with its capacity kept.
        out.extend(self.shared.drain(..));
        out.extend(self.keyed.iter_mut().filter_map(|(_, waker)| waker.take()));
    }
}

/// One registered source: its readiness and its waiters, shared by the
/// table (which the loop reaches it through) and the source's
/// `Registration` (which checks it without the table).
///
/// # Why no wakeup is lost
///
/// The loop, recording an event, first updates `state` (new bits, new
/// tick), and only then takes `waiters` and moves out the waiters of the
/// directions it woke. A task that finds its direction not ready takes
/// `waiters`, loads `state` again under it, and parks its waker only if the
/// bits are still not there. The two critical sections are ordered one way
/// or the other:
///
/// - the task's comes first: its waker is in the set when the loop takes
///   the lock, and the loop moves it out and wakes it;
/// - the loop's comes first: the state update happened before the loop's
///   unlock, which happened before the task's lock, so the task's second
///   load sees the new bits (or a later state) and it returns them instead
///   of waiting.
///
/// A clear in between cannot take the new bits away: it only clears while
/// the tick is still the one of the event it was handed, and the loop's
/// update replaced the tick in the same atomic write that set the bits.
/// Shutdown is the same protocol with the `SHUTDOWN` bit for the event.
///
/// The argument rests on the lock's ordering and on the state word being
/// one atomic; the loom models in `io/loom_model.rs` check it.
pub(crate) struct IoEntry {
    /// Readiness bits (low byte), `SHUTDOWN`, and the tick of the last
    /// event that set bits (high 32 bits).
    pub(crate) state: AtomicU64,
    /// The tasks waiting on each direction.
    pub(crate) waiters: Mutex<EntryWaiters>,
    /// Its source's token: its table slot, and which registration of that
    /// slot it belongs to (see the top of this file). Never changes. Kept
    /// here, not beside the entry in each `Registration`: a connection's
    /// socket is 8 bytes smaller, and crosses an allocator size class.
    pub(crate) token: Token,
}

/// The two sets of waiters of one source.
#[derive(Default)]
pub(crate) struct EntryWaiters {
    readers: Waiters,
    writers: Waiters,
}

impl EntryWaiters {
    /// The waiters of `direction`.
    pub(crate) fn get(&mut self, direction: Direction) -> &mut Waiters {
        match direction {
            Direction::Read => &mut self.readers,
            Direction::Write => &mut self.writers,
        }
    }

    /// Moves the waiters that `bits` satisfy into `wakers`.
    #[inline(always)]
    fn take_into(&mut self, bits: u8, wakers: &mut Vec<Waker>) {
        if bits & READ_MASK != 0 {
            self.readers.take_into(wakers);
        }
        if bits & WRITE_MASK != 0 {
            self.writers.take_into(wakers);
        }
    }
}

/// Set in an entry's state once the runtime has shut down: every readiness
/// check fails from then on. Above the readiness byte.
pub(crate) const SHUTDOWN: u64 = 1 << 8;
/// The readiness byte of a state word.
pub(crate) const BITS: u64 = 0xff;
/// The tick's place in a state word.
const TICK_SHIFT: u32 = 32;

/// The tick of a state word.
pub(crate) fn tick_of(state: u64) -> u32 {
    (state >> TICK_SHIFT) as u32
}

impl IoEntry {
    /// Readers with a waker parked here, for the loom model.
    #[cfg(all(test, loom))]
    pub(crate) fn readers_parked(&self) -> usize {
        let mut parked = 0;
        self.waiters.lock().readers.for_each_data(|_| parked += 1);
        parked
    }

    /// Records an event of `bits` at `tick` and moves the waiters it
    /// satisfies into `wakers`: state first, then the waiters' lock (see
    /// [`IoEntry`]). Always inline: `Reactor::record` is instantiated for
    /// the OS's events and a simulation's, and with two callers this was
    /// left out of line, 25 instructions an echoed message.
    #[inline(always)]
    fn record(&self, bits: u8, tick: u32, wakers: &mut Vec<Waker>) {
        let stamp = u64::from(tick) << TICK_SHIFT;
        let _ = self
            .state
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |state| {
                Some((state & (BITS | SHUTDOWN)) | u64::from(bits) | stamp)
            });
        self.waiters.lock().take_into(bits, wakers);
    }
}

#[derive(Default)]
struct Entries {
    slab: Slab<Arc<IoEntry>>,
    /// Generation handed to the next registration.
    next_generation: usize,
    /// Incremented for every batch of events dispatched.
    tick: u32,
    /// Set when the runtime shuts down: no new registrations (the entries
    /// already there carry their own `SHUTDOWN` bit).
    shutdown: bool,
    /// Entries freed since the table was last checked for shrinking.
    freed: usize,
}

/// Below this many entries the table is never shrunk: not worth the pass.
const SHRINK_MIN: usize = 1024;

/// Which side of a source a task waits on.
#[derive(Clone, Copy)]
pub(crate) enum Direction {
    Read,
    Write,
}

impl Direction {
    pub(crate) fn mask(self) -> u8 {
        match self {
            Direction::Read => READ_MASK,
            Direction::Write => WRITE_MASK,
        }
    }
}

/// The reactor's shared half: mio's registry and the entry table.
pub(crate) struct Reactor {
    registry: Registry,
    entries: Mutex<Entries>,
    /// An entry was freed since `shrink_if_sparse` last looked: a hint,
    /// read without the lock, so that a loop going idle with nothing freed
    /// (a server at low load, after nearly every message) skips the lock.
    /// Set under the lock by a free; cleared before the look takes the
    /// lock, so a free racing the look is either seen under the lock or
    /// sets the hint again for the next one.
    freed_hint: AtomicBool,
}

/// What one dispatch did, for the counters.
#[derive(Default)]
pub(crate) struct Dispatched {
    pub(crate) events: u64,
    pub(crate) stale: u64,
}

pub(crate) fn shut_down_error() -> io::Error {
    io::Error::other("the ioloop runtime this I/O source was registered with has shut down")
}

impl Reactor {
    pub(crate) fn new(registry: Registry) -> Self {
        Reactor {
            registry,
            entries: Mutex::new(Entries::default()),
            freed_hint: AtomicBool::new(false),
        }
    }

    /// Registers `source` for both directions, edge-triggered, once, and
    /// returns its entry (which holds its token).
    ///
    /// Both interests from the start: with edge-triggered notification a
    /// writable socket reports one edge, not one per poll, so there is no
    /// need for the lesson's `sel.modify` dance around WRITE interest.
    ///
    /// The entry starts out readable and writable, so the first I/O call is
    /// tried at once; if it would block, the caller clears the bits and
    /// waits for a real edge.
    pub(crate) fn register(&self, source: &mut impl Source) -> io::Result<Arc<IoEntry>> {
        let (token, entry) = {
            let mut entries = self.entries.lock();
            if entries.shutdown {
                return Err(shut_down_error());
            }
            let generation = entries.next_generation;
            entries.next_generation = (generation + 1) & GENERATION_MASK;
            // Readable and writable, at the current tick.
            let state = u64::from(READABLE | WRITABLE) | (u64::from(entries.tick) << TICK_SHIFT);
            let slot = entries.slab.vacant_entry();
            if slot.key() > MAX_KEY {
                return Err(io::Error::other("too many I/O sources registered"));
            }
            let token = pack(slot.key(), generation);
            let entry = Arc::new(IoEntry {
                state: AtomicU64::new(state),
                waiters: Mutex::new(EntryWaiters::default()),
                token,
            });
            slot.insert(entry.clone());
            (token, entry)
        };
        // PRIORITY too, where epoll has it: TCP urgent data stops a read
        // short, and the reader must know a short read did not drain it.
        #[cfg(any(target_os = "linux", target_os = "android"))]
        let interest = Interest::READABLE | Interest::WRITABLE | Interest::PRIORITY;
        #[cfg(not(any(target_os = "linux", target_os = "android")))]
        let interest = Interest::READABLE | Interest::WRITABLE;
        if let Err(err) = self.registry.register(source, token, interest) {
            self.release(token);
            return Err(err);
        }
        Ok(entry)
    }

    /// Removes `source` from the poller and frees its entry.
    pub(crate) fn deregister(&self, token: Token, source: &mut impl Source) {
        if let Err(err) = self.registry.deregister(source) {
            // The fd may already be gone from the epoll set (closed through
            // another handle). The entry is freed either way, and the
            // generation check drops any late event for it.
            log::debug!("deregistering an I/O source failed: {err}");
        }
        self.release(token);
    }

    /// Frees the table slot of `token`, dropping the table's share of the
    /// entry (and, if it was the last, its wakers) outside the lock.
    fn release(&self, token: Token) {
        let mut entries = self.entries.lock();
        entries.freed += 1;
        self.freed_hint.store(true, Ordering::Relaxed);
        let entry = entries.slab.try_remove(unpack(token).0);
        drop(entries);
        drop(entry);
    }

    /// Gives back the memory a burst of sources left behind, once three
    /// quarters of the table is free. A key is in its source's token, so
    /// live entries cannot move: `shrink_to_fit` drops the free entries at
    /// the end and relinks the free list lowest first, so new sources fill
    /// the front and the next pass drops more. Done at most once per
    /// quarter-table of entries freed: amortized O(1).
    pub(crate) fn shrink_if_sparse(&self) {
        if !self.freed_hint.load(Ordering::Relaxed) {
            return;
        }
        self.freed_hint.store(false, Ordering::Relaxed);
        let mut entries = self.entries.lock();
        let capacity = entries.slab.capacity();
        if capacity > SHRINK_MIN
            && entries.slab.len() <= capacity / 4
            && entries.freed >= capacity / 4
        {
            entries.freed = 0;
            entries.slab.shrink_to_fit();
        }
    }

    /// Records a batch of events and collects the wakers they fire.
    pub(crate) fn dispatch(&self, events: &mio::Events, wakers: &mut Vec<Waker>) -> Dispatched {
        let events = events
            .iter()
            .filter(|event| event.token() != WAKER_TOKEN)
            .map(|event| (event.token(), from_event(event)));
        self.record(events, wakers)
    }

    /// Records readiness bits for each token in `events`, all stamped with
    /// one new tick, and collects the wakers they fire. Apart from
    /// `dispatch` so the loom model can feed it events without an OS.
    pub(crate) fn record(
        &self,
        events: impl Iterator<Item = (Token, u8)>,
        wakers: &mut Vec<Waker>,
    ) -> Dispatched {
        let mut done = Dispatched::default();
        let mut entries = self.entries.lock();
        entries.tick = entries.tick.wrapping_add(1);
        let tick = entries.tick;
        for (token, bits) in events {
            done.events += 1;
            match entries.slab.get(unpack(token).0) {
                Some(entry) if entry.token == token => {
                    entry.record(bits, tick, wakers);
                }
                _ => {
                    log::trace!("dropped an event for a closed registration");
                    done.stale += 1;
                }
            }
        }
        done
    }

    /// Marks the reactor and every entry shut down and collects every
    /// parked waker, so no one waits forever on a source that can no
    /// longer become ready.
    pub(crate) fn shutdown(&self, wakers: &mut Vec<Waker>) {
        let mut entries = self.entries.lock();
        entries.shutdown = true;
        for (_, entry) in entries.slab.iter() {
            entry.state.fetch_or(SHUTDOWN, Ordering::AcqRel);
            entry
                .waiters
                .lock()
                .take_into(READ_MASK | WRITE_MASK, wakers);
        }
    }

    /// Calls `f` with the key, direction and waker data pointer of every
    /// task waiting on a source, for a dump.
    pub(crate) fn for_each_waiter(&self, mut f: impl FnMut(usize, Direction, *const ())) {
        let entries = self.entries.lock();
        for (key, entry) in entries.slab.iter() {
            let mut waiters = entry.waiters.lock();
            for direction in [Direction::Read, Direction::Write] {
                waiters
                    .get(direction)
                    .for_each_data(|data| f(key, direction, data));
            }
        }
    }

    /// Number of registered sources.
    pub(crate) fn len(&self) -> usize {
        self.entries.lock().slab.len()
    }

    /// Entries allocated, registered or free.
    #[cfg(test)]
    pub(crate) fn capacity(&self) -> usize {
        self.entries.lock().slab.capacity()
    }
}

pub(crate) const READABLE: u8 = 1 << 0;
pub(crate) const WRITABLE: u8 = 1 << 1;
pub(crate) const READ_CLOSED: u8 = 1 << 2;
pub(crate) const WRITE_CLOSED: u8 = 1 << 3;
pub(crate) const ERROR: u8 = 1 << 4;
pub(crate) const PRIORITY: u8 = 1 << 5;

/// The bits that satisfy a reader.
pub(crate) const READ_MASK: u8 = READABLE | READ_CLOSED | ERROR | PRIORITY;
/// The bits that satisfy a writer.
pub(crate) const WRITE_MASK: u8 = WRITABLE | WRITE_CLOSED | ERROR;
/// The bits that never clear.
pub(crate) const CLOSED: u8 = READ_CLOSED | WRITE_CLOSED;

/// The readiness bits mio reports in `event`.
pub(crate) fn from_event(event: &mio::event::Event) -> u8 {
    let bit = |set: bool, bit: u8| if set { bit } else { 0 };
    bit(event.is_readable(), READABLE)
        | bit(event.is_writable(), WRITABLE)
        | bit(event.is_read_closed(), READ_CLOSED)
        | bit(event.is_write_closed(), WRITE_CLOSED)
        | bit(event.is_error(), ERROR)
        | bit(event.is_priority(), PRIORITY)
}

#[cfg(all(test, not(loom)))]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::task::Wake;

    use super::*;

    /// An entry is one allocation per registered source, besides the
    /// table's slot: keep it small. The state word, the lock (one byte,
    /// padded) around two sets of waiters (an inline waker and a pointer
    /// each), and the generation.
    #[test]
    fn an_entry_stays_small() {
        assert_eq!(std::mem::size_of::<Waiters>(), 24);
        assert!(
            std::mem::size_of::<IoEntry>() <= 72,
            "{} bytes",
            std::mem::size_of::<IoEntry>()
        );
    }

    struct Count(AtomicUsize);

    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn waker() -> (Arc<Count>, Waker) {
        let count = Arc::new(Count(AtomicUsize::new(0)));
        (count.clone(), Waker::from(count))
    }

    #[test]
    fn keyed_waiters_hold_their_slot_and_give_it_back() {
        let mut waiters = Waiters::default();
        let (_, a) = waker();
        let (_, b) = waker();
        let (mut ka, mut kb) = (None, None);
        assert!(waiters.register_keyed(&mut ka, &a).is_none());
        assert!(waiters.register_keyed(&mut kb, &b).is_none());
        // Again with the same waker: in place, nothing added.
        assert!(waiters.register_keyed(&mut ka, &a).is_none());
        let mut out = Vec::new();
        waiters.for_each_data(|_| out.push(()));
        assert_eq!(out.len(), 2);
        // Woken: the slots stay, emptied, and take the waker back in place.
        let mut woken = Vec::new();
        waiters.take_into(&mut woken);
        assert_eq!(woken.len(), 2);
        assert!(waiters.register_keyed(&mut ka, &a).is_none());
        // Dropped: the waker goes with the slot.
        assert!(waiters.remove_keyed(ka.unwrap()).is_some());
        assert!(waiters.remove_keyed(kb.unwrap()).is_none());
        let mut left = 0;
        waiters.for_each_data(|_| left += 1);
        assert_eq!(left, 0);
    }

    /// Parks `waiting` keyed waiters, then gives every slot back: the
    /// slab's room when full, and once empty.
    fn fill_and_empty(waiting: usize) -> (usize, usize) {
        let mut waiters = Waiters::default();
        let (_, a) = waker();
        let keys: Vec<_> = (0..waiting)
            .map(|_| {
                let mut key = None;
                waiters.register_keyed(&mut key, &a);
                key.unwrap()
            })
            .collect();
        let room = waiters.more.as_ref().unwrap().keyed.capacity();
        for key in keys {
            waiters.remove_keyed(key);
        }
        (room, waiters.more.as_ref().unwrap().keyed.capacity())
    }

    #[test]
    fn an_empty_slab_of_many_waiters_is_freed() {
        assert_eq!(fill_and_empty(1_000).1, 0);
    }

    /// The limit at its edges: emptied, a slab whose room is
    /// `KEEP_CAPACITY` (63 or 64 waiters made it so) is kept, and one
    /// with more (65 waiters: the room doubled) is freed.
    #[test]
    fn an_empty_slab_is_kept_up_to_the_kept_capacity_and_freed_past_it() {
        for (waiting, room, kept) in [
            (KEEP_CAPACITY - 1, KEEP_CAPACITY, true),
            (KEEP_CAPACITY, KEEP_CAPACITY, true),
            (KEEP_CAPACITY + 1, 2 * KEEP_CAPACITY, false),
        ] {
            let (full, left) = fill_and_empty(waiting);
            assert_eq!(full, room);
            assert_eq!(left, if kept { room } else { 0 }, "{waiting} waiters");
        }
    }

    #[test]
    fn poll_function_callers_beyond_the_limit_wake_the_oldest() {
        let mut waiters = Waiters::default();
        let callers: Vec<_> = (0..SHARED_LIMIT + 2).map(|_| waker()).collect();
        for (_, waker) in &callers[..SHARED_LIMIT + 1] {
            assert!(waiters.register(waker).is_none());
            // Again: already there.
            assert!(waiters.register(waker).is_none());
        }
        // The inline one and the limit are full: the oldest shared one
        // (the second caller) makes room.
        let evicted = waiters.register(&callers[SHARED_LIMIT + 1].1).unwrap();
        assert!(evicted.will_wake(&callers[1].1));
        let mut woken = Vec::new();
        waiters.take_into(&mut woken);
        assert_eq!(woken.len(), SHARED_LIMIT + 1);
    }

    #[test]
    fn round_trips_and_never_collides_with_the_waker() {
        for (key, generation) in [
            (0, 0),
            (5, 1),
            (MAX_KEY, GENERATION_MASK),
            (7, GENERATION_MASK + 3),
        ] {
            let token = pack(key, generation);
            assert_ne!(token, WAKER_TOKEN);
            assert_eq!(unpack(token), (key, generation & GENERATION_MASK));
        }
    }
}
