//! Registering I/O sources with the reactor: what sockets are built on.
//! `Registration`, an I/O source registered with a runtime's reactor, and
//! its one I/O pattern.

use std::fmt;
use std::future::poll_fn;
use std::io;
use std::sync::Arc;
use std::task::{Context, Poll, ready};

use mio::event::Source;

use crate::base::budget;
use crate::event_loop::core::Shared;
pub use crate::event_loop::core::{take_back_wake_after_poll, wake_after_poll};
use crate::event_loop::reactor::{
    BITS, CLOSED, Direction, ERROR, IoEntry, PRIORITY, READ_CLOSED, READABLE, SHUTDOWN, WRITABLE,
    WRITE_CLOSED, shut_down_error, tick_of,
};
use crate::handle::Handle;
use crate::sync::{Ordering, lock};

/// An I/O source (a socket, a pipe, any `mio::event::Source`) registered
/// with a runtime's reactor: the lesson's `sel.register(sock, ...)`. For a
/// bare file descriptor, `ioloop::io::AsyncFd` needs no mio of your own.
///
/// The source is registered once, for reading and writing, edge-triggered.
/// A task asks whether a direction is ready with
/// [`poll_read_ready`](Self::poll_read_ready) /
/// [`poll_write_ready`](Self::poll_write_ready), tries the I/O call, and on
/// `WouldBlock` hands the event back to
/// [`clear_readiness`](Self::clear_readiness) and waits again. The helpers
/// [`poll_read_io`](Self::poll_read_io) and
/// [`poll_write_io`](Self::poll_write_io) are that pattern, written once.
///
/// Any number of tasks may wait on each direction; the next event in that
/// direction wakes them all. A waiting future ([`readable`](Self::readable),
/// a [`Waiter`]) holds a place among the waiters until it drops; a poll
/// function has none: per direction the latest 65 are kept, an older woken.
///
/// A fresh registration reports both directions ready before any event,
/// so the first I/O call is tried at once. Each readiness check spends one
/// unit of the task's cooperative budget.
///
/// Dropping the registration removes the source from the poller, frees its
/// entry, and then drops (closes) the source.
pub struct Registration<S: Source> {
    shared: Arc<Shared>,
    /// The source's entry (and its token), shared with the reactor's table: readiness
    /// checks go straight here, without the table's lock.
    entry: Arc<IoEntry>,
    source: S,
}

impl<S: Source> Registration<S> {
    /// Registers `source` with the runtime running on this thread.
    ///
    /// # Errors
    ///
    /// Fails if no ioloop runtime runs on this thread, if the runtime is
    /// shutting down, or if the poller refuses the source.
    ///
    /// ```
    /// use ioloop::io::Registration;
    ///
    /// ioloop::block_on(async {
    ///     let (a, _b) = mio::net::UnixStream::pair()?;
    ///     let a = Registration::new(a)?;
    ///     assert!(a.get_ref().peer_addr().is_ok());
    ///     Ok::<_, std::io::Error>(())
    /// })
    /// .unwrap();
    /// ```
    pub fn new(source: S) -> io::Result<Self> {
        let handle = Handle::try_current().ok_or_else(|| {
            io::Error::other(
                "a socket (or other source) was made outside an ioloop runtime: make it \
                 inside block_on, a task or a blocking job, or under Runtime::enter",
            )
        })?;
        Self::with_handle(source, &handle)
    }

    /// Registers `source` with the runtime behind `handle`, from any thread.
    ///
    /// # Errors
    ///
    /// Fails if the runtime is shutting down or the poller refuses the
    /// source.
    pub fn with_handle(mut source: S, handle: &Handle) -> io::Result<Self> {
        let shared = handle.shared().clone();
        let entry = shared.reactor.register(&mut source)?;
        Ok(Registration {
            shared,
            entry,
            source,
        })
    }

    /// The registered source.
    pub fn get_ref(&self) -> &S {
        &self.source
    }

    /// The registered source, mutably.
    pub fn get_mut(&mut self) -> &mut S {
        &mut self.source
    }

    /// Returns the source's read readiness, or registers `cx` to be woken
    /// when it becomes readable, read-closed, or reports an error.
    ///
    /// # Errors
    ///
    /// Fails once the runtime has shut down.
    ///
    /// ```
    /// use std::future::poll_fn;
    /// use std::io::Write;
    /// use ioloop::io::Registration;
    ///
    /// ioloop::block_on(async {
    ///     let (a, mut b) = mio::net::UnixStream::pair()?;
    ///     let a = Registration::new(a)?;
    ///     b.write_all(b"hello")?;
    ///     let event = poll_fn(|cx| a.poll_read_ready(cx)).await?;
    ///     assert!(event.is_readable());
    ///     Ok::<_, std::io::Error>(())
    /// })
    /// .unwrap();
    /// ```
    pub fn poll_read_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<ReadyEvent>> {
        ready!(budget::poll_budget(cx));
        self.entry.poll_ready(Direction::Read, cx, None)
    }

    /// Returns the source's write readiness, or registers `cx` to be woken
    /// when it becomes writable, write-closed, or reports an error.
    ///
    /// # Errors
    ///
    /// Fails once the runtime has shut down.
    pub fn poll_write_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<ReadyEvent>> {
        ready!(budget::poll_budget(cx));
        self.entry.poll_ready(Direction::Write, cx, None)
    }

    /// Waits until the source is readable (or read-closed, or in error).
    ///
    /// # Errors
    ///
    /// As [`poll_read_ready`](Self::poll_read_ready).
    ///
    /// Cancel-safe: dropping the future loses no readiness.
    ///
    /// ```
    /// use std::io::Write;
    /// use ioloop::io::Registration;
    ///
    /// ioloop::block_on(async {
    ///     let (a, mut b) = mio::net::UnixStream::pair()?;
    ///     let a = Registration::new(a)?;
    ///     b.write_all(b"x")?;
    ///     assert!(a.readable().await?.is_readable());
    ///     Ok::<_, std::io::Error>(())
    /// })
    /// .unwrap();
    /// ```
    pub async fn readable(&self) -> io::Result<ReadyEvent> {
        let mut waiter = self.read_waiter();
        poll_fn(|cx| waiter.poll_ready(cx)).await
    }

    /// Waits until the source is writable (or write-closed, or in error).
    ///
    /// # Errors
    ///
    /// As [`poll_write_ready`](Self::poll_write_ready).
    ///
    /// Cancel-safe: dropping the future loses no readiness.
    pub async fn writable(&self) -> io::Result<ReadyEvent> {
        let mut waiter = self.write_waiter();
        poll_fn(|cx| waiter.poll_ready(cx)).await
    }

    /// A place among the tasks waiting to read, for a future to wait in:
    /// see [`Waiter`].
    pub fn read_waiter(&self) -> Waiter<'_, S> {
        self.waiter(Direction::Read)
    }

    /// A place among the tasks waiting to write, for a future to wait in:
    /// see [`Waiter`].
    pub fn write_waiter(&self) -> Waiter<'_, S> {
        self.waiter(Direction::Write)
    }

    fn waiter(&self, direction: Direction) -> Waiter<'_, S> {
        Waiter {
            registration: self,
            direction,
            key: None,
        }
    }

    /// Runs the read-side I/O call `f` until it does not return
    /// `WouldBlock`, waiting for readiness in between: the future form of
    /// [`poll_read_io`](Self::poll_read_io), which waits in a place of its
    /// own (see [`Waiter`]).
    ///
    /// # Errors
    ///
    /// As [`poll_read_io`](Self::poll_read_io).
    ///
    /// Cancel-safe if `f` is: dropping the future loses no readiness, and
    /// takes its waker out of the waiters.
    pub async fn read_io<R>(&self, mut f: impl FnMut(&S) -> io::Result<R>) -> io::Result<R> {
        let mut waiter = self.read_waiter();
        poll_fn(|cx| waiter.poll_io(cx, &mut f)).await
    }

    /// The write side of [`read_io`](Self::read_io): the future form of
    /// [`poll_write_io`](Self::poll_write_io).
    ///
    /// # Errors
    ///
    /// As [`poll_write_io`](Self::poll_write_io).
    ///
    /// As [`read_io`](Self::read_io).
    pub async fn write_io<R>(&self, mut f: impl FnMut(&S) -> io::Result<R>) -> io::Result<R> {
        let mut waiter = self.write_waiter();
        poll_fn(|cx| waiter.poll_io(cx, &mut f)).await
    }

    /// Forgets the readiness in `event`, after an I/O call it allowed
    /// returned `WouldBlock`. Readiness reported by a later event is kept.
    ///
    /// ```
    /// use std::future::poll_fn;
    /// use std::io::{ErrorKind, Read};
    /// use std::task::Poll;
    /// use ioloop::io::Registration;
    ///
    /// ioloop::block_on(async {
    ///     let (a, _b) = mio::net::UnixStream::pair()?;
    ///     let a = Registration::new(a)?;
    ///     // Registrations start out ready; nothing is there to read, though.
    ///     let event = a.readable().await?;
    ///     let mut buf = [0u8; 8];
    ///     let err = (&mut &*a.get_ref()).read(&mut buf).unwrap_err();
    ///     assert_eq!(err.kind(), ErrorKind::WouldBlock);
    ///     a.clear_readiness(event);
    ///     // Now the reader waits for a real event.
    ///     let waiting = poll_fn(|cx| Poll::Ready(a.poll_read_ready(cx).is_pending())).await;
    ///     assert!(waiting);
    ///     Ok::<_, std::io::Error>(())
    /// })
    /// .unwrap();
    /// ```
    pub fn clear_readiness(&self, event: ReadyEvent) {
        self.entry.clear(event);
    }

    /// Runs the read-side I/O call `f` once if the source is readable, and
    /// returns `WouldBlock` at once if it is not: the `try_*` pattern,
    /// which never waits and never registers a waker.
    ///
    /// A `WouldBlock` from `f` clears the readiness it was tried under, as
    /// in [`poll_read_io`](Self::poll_read_io); `Interrupted` is retried.
    ///
    /// # Errors
    ///
    /// `WouldBlock` if the source is not readable (or `f` says so), what
    /// `f` returns, and an error once the runtime has shut down.
    pub fn try_read_io<R>(&self, f: impl FnMut(&S) -> io::Result<R>) -> io::Result<R> {
        self.try_io(Direction::Read, f, |_, _| false)
    }

    /// [`try_read_io`](Self::try_read_io) for the write side.
    ///
    /// # Errors
    ///
    /// As [`try_read_io`](Self::try_read_io), for writability.
    pub fn try_write_io<R>(&self, f: impl FnMut(&S) -> io::Result<R>) -> io::Result<R> {
        self.try_io(Direction::Write, f, |_, _| false)
    }

    /// [`try_write_io`](Self::try_write_io) for a byte-stream source, where
    /// `f` writes `len` bytes: a shorter write clears write readiness, as in
    /// [`poll_write_stream`](Self::poll_write_stream). For a caller that
    /// must not wait where it tries (it holds a lock: parking may wake
    /// another task's waker), and waits with
    /// [`poll_write_ready`](Self::poll_write_ready) once it let go.
    ///
    /// # Errors
    ///
    /// As [`try_write_io`](Self::try_write_io).
    pub fn try_write_stream(
        &self,
        len: usize,
        f: impl FnMut(&S) -> io::Result<usize>,
    ) -> io::Result<usize> {
        self.try_io(Direction::Write, f, |&n, _| n < len)
    }

    /// The `try_*` pattern; `drained` as in [`poll_io`](Self::poll_io).
    #[inline]
    fn try_io<R>(
        &self,
        direction: Direction,
        mut f: impl FnMut(&S) -> io::Result<R>,
        drained: impl Fn(&R, &ReadyEvent) -> bool,
    ) -> io::Result<R> {
        loop {
            let Some(event) = self.entry.ready_now(direction)? else {
                return Err(io::ErrorKind::WouldBlock.into());
            };
            match f(&self.source) {
                Err(err) if err.kind() == io::ErrorKind::WouldBlock => {
                    self.clear_readiness(event);
                    return Err(err);
                }
                Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                Ok(value) => {
                    if drained(&value, &event) {
                        self.clear_readiness(event);
                    }
                    return Ok(value);
                }
                Err(err) => return Err(err),
            }
        }
    }

    /// Runs the read-side I/O call `f` until it does not return
    /// `WouldBlock`, waiting for readiness in between: the one pattern every
    /// socket read uses.
    ///
    /// `Interrupted` (EINTR) is retried here, so callers never see it.
    ///
    /// # Errors
    ///
    /// Whatever `f` returns other than `WouldBlock` and `Interrupted`, and
    /// the errors of [`poll_read_ready`](Self::poll_read_ready).
    ///
    /// [`Waiter`] has an example of the same call, made by a future.
    pub fn poll_read_io<R>(
        &self,
        cx: &mut Context<'_>,
        f: impl FnMut(&S) -> io::Result<R>,
    ) -> Poll<io::Result<R>> {
        self.poll_io(cx, Direction::Read, None, f, |_, _| false)
    }

    /// Runs the write-side I/O call `f` until it does not return
    /// `WouldBlock`, waiting for readiness in between.
    ///
    /// # Errors
    ///
    /// Whatever `f` returns other than `WouldBlock` and `Interrupted`, and
    /// the errors of [`poll_write_ready`](Self::poll_write_ready).
    pub fn poll_write_io<R>(
        &self,
        cx: &mut Context<'_>,
        f: impl FnMut(&S) -> io::Result<R>,
    ) -> Poll<io::Result<R>> {
        self.poll_io(cx, Direction::Write, None, f, |_, _| false)
    }

    /// [`poll_read_io`](Self::poll_read_io) for a byte-stream source (TCP,
    /// a pipe), where `f` reads into a buffer of `len` bytes. Not for a
    /// Unix stream that may be sent descriptors or credentials: its reads
    /// stop short at such a message with bytes still queued.
    ///
    /// A read that returns fewer than `len` bytes (but more than 0) has
    /// emptied the kernel's receive buffer, so readiness is cleared then and
    /// there: the next read waits for the next edge instead of paying for a
    /// `recv` that can only say `EAGAIN`. Data that arrives meanwhile raises
    /// a new edge, and the tick stamp keeps the clear from erasing it. The
    /// one exception is TCP urgent data ([`ReadyEvent::is_priority`]): a
    /// read stops short at the urgent mark with bytes still queued, so then
    /// readiness is kept until a read says `WouldBlock`.
    ///
    /// # Errors
    ///
    /// As [`poll_read_io`](Self::poll_read_io).
    pub fn poll_read_stream(
        &self,
        cx: &mut Context<'_>,
        len: usize,
        f: impl FnMut(&S) -> io::Result<usize>,
    ) -> Poll<io::Result<usize>> {
        self.poll_io(cx, Direction::Read, None, f, |&n, event| {
            n > 0 && n < len && !event.is_priority()
        })
    }

    /// [`poll_write_io`](Self::poll_write_io) for a byte-stream source,
    /// where `f` writes `len` bytes: a shorter write means the kernel's send
    /// buffer is full, so write readiness is cleared at once. So `len` must
    /// count only what `f` hands the kernel: a vectored send takes at most
    /// `IOV_MAX` slices (1,024 on Linux), and a `len` counting more clears
    /// readiness with room in the buffer, for an edge that never comes.
    ///
    /// # Errors
    ///
    /// As [`poll_write_io`](Self::poll_write_io).
    pub fn poll_write_stream(
        &self,
        cx: &mut Context<'_>,
        len: usize,
        f: impl FnMut(&S) -> io::Result<usize>,
    ) -> Poll<io::Result<usize>> {
        self.poll_io(cx, Direction::Write, None, f, |&n, _| n < len)
    }

    /// The pattern: wait for readiness (parked at `key` for a waiting
    /// future, see [`IoEntry::poll_ready`]), try `f`; on `WouldBlock` clear
    /// the readiness that allowed it and wait again. `drained` says whether
    /// a successful result, under that readiness, shows the kernel buffer
    /// is exhausted as well.
    #[inline]
    fn poll_io<R>(
        &self,
        cx: &mut Context<'_>,
        direction: Direction,
        mut key: Option<&mut Option<usize>>,
        mut f: impl FnMut(&S) -> io::Result<R>,
        drained: impl Fn(&R, &ReadyEvent) -> bool,
    ) -> Poll<io::Result<R>> {
        ready!(budget::poll_budget(cx));
        loop {
            let event = ready!(self.entry.poll_ready(direction, cx, key.as_deref_mut()))?;
            match f(&self.source) {
                Err(err) if err.kind() == io::ErrorKind::WouldBlock => self.clear_readiness(event),
                Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                Ok(value) => {
                    if drained(&value, &event) {
                        self.clear_readiness(event);
                    }
                    return Poll::Ready(Ok(value));
                }
                Err(err) => return Poll::Ready(Err(err)),
            }
        }
    }
}

/// One future's place among the tasks waiting on one direction of a
/// [`Registration`]: what a hand-written future that waits for I/O holds,
/// so that dropping it takes its waker (and so its task) out of the
/// waiters at once.
///
/// The place is taken at the first poll that has to wait and given back
/// on drop, in O(1). Made by [`Registration::read_waiter`] and
/// [`Registration::write_waiter`]; one waiter serves one future.
///
/// ```
/// use std::future::poll_fn;
/// use std::io::{Read, Write};
/// use ioloop::io::Registration;
///
/// ioloop::block_on(async {
///     let (a, mut b) = mio::net::UnixStream::pair()?;
///     let a = Registration::new(a)?;
///     b.write_all(b"ping")?;
///     let mut waiter = a.read_waiter();
///     let mut buf = [0u8; 4];
///     let n = poll_fn(|cx| waiter.poll_io(cx, |mut s| s.read(&mut buf))).await?;
///     assert_eq!(&buf[..n], b"ping");
///     Ok::<_, std::io::Error>(())
/// })
/// .unwrap();
/// ```
pub struct Waiter<'a, S: Source> {
    registration: &'a Registration<S>,
    direction: Direction,
    /// The slot among the direction's waiters, once one was needed.
    key: Option<usize>,
}

impl<'a, S: Source> Waiter<'a, S> {
    /// The registration waited on.
    pub fn registration(&self) -> &'a Registration<S> {
        self.registration
    }

    /// Returns the direction's readiness, or parks `cx`'s waker in this
    /// waiter's place until an event: as
    /// [`Registration::poll_read_ready`], for a future.
    ///
    /// # Errors
    ///
    /// Fails once the runtime has shut down.
    pub fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<ReadyEvent>> {
        ready!(budget::poll_budget(cx));
        let entry = &self.registration.entry;
        entry.poll_ready(self.direction, cx, Some(&mut self.key))
    }

    /// Runs the I/O call `f` until it does not return `WouldBlock`, waiting
    /// in this waiter's place in between: as
    /// [`Registration::poll_read_io`], for a future.
    ///
    /// # Errors
    ///
    /// As [`Registration::poll_read_io`].
    pub fn poll_io<R>(
        &mut self,
        cx: &mut Context<'_>,
        f: impl FnMut(&S) -> io::Result<R>,
    ) -> Poll<io::Result<R>> {
        let registration = self.registration;
        registration.poll_io(cx, self.direction, Some(&mut self.key), f, |_, _| false)
    }
}

impl<S: Source> Drop for Waiter<'_, S> {
    fn drop(&mut self) {
        if let Some(key) = self.key {
            self.registration.entry.forget(self.direction, key);
        }
    }
}

impl<S: Source> fmt::Debug for Waiter<'_, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Waiter")
            .field("token", &self.registration.entry.token)
            .field("parked", &self.key.is_some())
            .finish()
    }
}

impl<S: Source> Drop for Registration<S> {
    fn drop(&mut self) {
        self.shared
            .reactor
            .deregister(self.entry.token, &mut self.source);
    }
}

impl<S: Source + fmt::Debug> fmt::Debug for Registration<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Registration")
            .field("source", &self.source)
            .field("token", &self.entry.token)
            .finish()
    }
}

/// The waiting half of an entry's protocol (see [`IoEntry`] for why no
/// wakeup is lost): a check is one atomic load of the state word; a task
/// that must wait takes the entry's lock, looks again, and parks its waker
/// only if its direction is still not ready.
impl IoEntry {
    /// Ready bits for `direction` now, if there are any; never waits.
    /// The ready case is one load and a test, inline: the outbox's every
    /// send comes here.
    #[inline]
    pub(crate) fn ready_now(&self, direction: Direction) -> io::Result<Option<ReadyEvent>> {
        let state = self.state.load(Ordering::Acquire);
        match ready_fast(state, direction) {
            Some(event) => Ok(Some(event)),
            None => ready_in(state, direction),
        }
    }

    /// Ready bits for `direction`, or parks `cx`'s waker until there are:
    /// among the shared waiters for a poll function's caller (`key` is
    /// `None`), at its own `key` for a waiting future, which gives it back
    /// with [`forget`](Self::forget) when it drops (see `Waiters`).
    ///
    /// The ready case is one atomic load; waiting takes the entry's lock
    /// and looks again under it (see [`IoEntry`]).
    #[inline]
    pub(crate) fn poll_ready(
        &self,
        direction: Direction,
        cx: &mut Context<'_>,
        key: Option<&mut Option<usize>>,
    ) -> Poll<io::Result<ReadyEvent>> {
        match ready_fast(self.state.load(Ordering::Acquire), direction) {
            Some(event) => Poll::Ready(Ok(event)),
            None => self.park(direction, cx, key),
        }
    }

    /// `poll_ready`'s slow path: under the lock, look again, and park the
    /// waker only if the direction is still not ready (nor shut down).
    #[inline(never)]
    fn park(
        &self,
        direction: Direction,
        cx: &mut Context<'_>,
        key: Option<&mut Option<usize>>,
    ) -> Poll<io::Result<ReadyEvent>> {
        // Parking may wake the oldest waiter (below): the caller must hold
        // no lock of ours, whether or not this one evicts.
        lock::assert_unlocked();
        let mut waiters = self.waiters.lock();
        if let Some(ready) = ready_in(self.state.load(Ordering::Acquire), direction).transpose() {
            return Poll::Ready(ready);
        }
        let waiters_here = waiters.get(direction);
        // Wakers are woken and dropped only after the lock is released: a
        // waker can run arbitrary code, even code that takes this lock.
        let evicted = match key {
            // A shared waiter may evict the oldest, which is woken. Nearly
            // always there is none.
            None => waiters_here.register(cx.waker()),
            // A keyed one replaces its own old waker, which is dropped.
            Some(key) => {
                let replaced = waiters_here.register_keyed(key, cx.waker());
                drop(waiters);
                drop(replaced);
                return Poll::Pending;
            }
        };
        drop(waiters);
        if let Some(waker) = evicted {
            waker.wake();
        }
        Poll::Pending
    }

    /// Gives back the place at `key` among the waiters of `direction`: its
    /// future stopped waiting.
    pub(crate) fn forget(&self, direction: Direction, key: usize) {
        let parked = self.waiters.lock().get(direction).remove_keyed(key);
        drop(parked);
    }

    /// Clears the bits of `event`, unless a newer event arrived since (the
    /// tick moved on). The closed bits never clear.
    #[inline]
    pub(crate) fn clear(&self, event: ReadyEvent) {
        let clear = u64::from(event.bits & !CLOSED);
        // `fetch_update` gives up, leaving the state as it is, once the
        // tick differs: the bits are then a newer event's.
        let _ = self
            .state
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |state| {
                (tick_of(state) == event.tick).then_some(state & !clear)
            });
    }
}

/// A state word's readiness bits for `direction`, as the event a check
/// hands out; `None` if there are none. Fails once the runtime has shut
/// down.
fn ready_in(state: u64, direction: Direction) -> io::Result<Option<ReadyEvent>> {
    if state & SHUTDOWN != 0 {
        return Err(shut_down_error());
    }
    Ok(ready_fast(state, direction))
}

/// The event a state word holds for `direction`, if it is ready and not
/// shut down: the fast path, which needs no error.
#[inline]
fn ready_fast(state: u64, direction: Direction) -> Option<ReadyEvent> {
    let bits = (state & BITS) as u8 & direction.mask();
    (bits != 0 && state & SHUTDOWN == 0).then(|| ReadyEvent {
        bits,
        tick: tick_of(state),
    })
}

/// Readiness seen by [`Registration::poll_read_ready`] or
/// [`poll_write_ready`], stamped with the reactor tick that reported it.
///
/// Hand it back to [`Registration::clear_readiness`] after the I/O call
/// returned `WouldBlock`: the stamp makes sure a newer event, which arrived
/// after this one was read, is not cleared with it.
///
/// [`poll_write_ready`]: Registration::poll_write_ready
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct ReadyEvent {
    pub(crate) bits: u8,
    pub(crate) tick: u32,
}

/// `ReadyEvent`'s accessors, one a readiness bit (`name("field") = BIT;`,
/// each with its docs), and its `Debug`, which shows each bit as `field`.
macro_rules! ready_event {
    ($($(#[$doc:meta])* $name:ident($field:literal) = $bit:ident;)*) => {
        impl ReadyEvent {
            $(
                $(#[$doc])*
                pub fn $name(&self) -> bool {
                    self.bits & $bit != 0
                }
            )*
        }

        impl fmt::Debug for ReadyEvent {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_struct("ReadyEvent")
                    $(.field($field, &self.$name()))*
                    .field("tick", &self.tick)
                    .finish()
            }
        }
    };
}

ready_event! {
    /// Data (or a pending connection) may be waiting.
    is_readable("readable") = READABLE;

    /// There may be room to write.
    is_writable("writable") = WRITABLE;

    /// The peer will send nothing more (it shut down its write side or
    /// hung up); reads return what is left, then end of file.
    is_read_closed("read_closed") = READ_CLOSED;

    /// Writing can no longer succeed (hang-up or a socket error).
    is_write_closed("write_closed") = WRITE_CLOSED;

    /// The source reported an error; the next I/O call returns it.
    is_error("error") = ERROR;

    /// TCP urgent data is pending (`EPOLLPRI`): a read stops short at
    /// the urgent mark, so a short read does not prove the socket
    /// drained.
    is_priority("priority") = PRIORITY;
}

#[cfg(all(test, loom))]
mod loom_model;
