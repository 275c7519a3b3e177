//! loom models of a registration's readiness and waiters: a task reading
//! through the one I/O pattern (`poll_io`: wait for readiness, try the
//! call, clear readiness on `WouldBlock`) while the loop dispatches new
//! events for the same source, or shuts the runtime down.
//!
//! ```text
//! RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=3 \
//!     cargo test -p ioloop-runtime --release --lib loom --target-dir target/loom
//! ```
//!
//! The reader checks readiness without any lock (one load of the entry's
//! state word) and clears it with a compare-and-swap; only to park its
//! waker does it take the entry's lock, and look again under it. The loop
//! updates the state word first and takes the entry's lock after, to move
//! the waiters out. Two hazards:
//!
//! - a clear that erases readiness from an event newer than the one the
//!   failed call was allowed by: the reader then parks its waker with
//!   nothing left to fire it, and hangs. The tick stamp in the state word
//!   is what prevents it;
//! - a waker parked just after the loop moved the waiters out, by a reader
//!   that had looked at the state just before the loop updated it. Looking
//!   again under the entry's lock is what prevents it.
//!
//! These models check that whatever the interleaving of the state word's
//! accesses and the two locks, the reader either gets its bytes (or the
//! shutdown error) or has its waker woken, and that no clear takes away
//! the bits of a newer event.

use std::io;
use std::iter;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use loom::thread;

use super::Registration;
use crate::event_loop::cell::wake_all;
use crate::event_loop::core::Shared;
use crate::event_loop::reactor::{Direction, READABLE};
use crate::handle::Handle;
use crate::sync::harness::{self, Flag};
use crate::sync::{AtomicUsize, Ordering};

type Source = mio::unix::pipe::Receiver;

/// The receiving side of a socket, as far as the reader can tell: how many
/// bytes the kernel holds for it.
#[derive(Default)]
struct Kernel(AtomicUsize);

impl Kernel {
    /// `recv` into a buffer of `len` bytes: takes what is queued, up to
    /// `len`, even with another reader taking bytes at the same time.
    fn recv(&self, len: usize) -> io::Result<usize> {
        let mut queued = self.0.load(Ordering::Acquire);
        loop {
            let n = queued.min(len);
            if n == 0 {
                return Err(io::ErrorKind::WouldBlock.into());
            }
            match self
                .0
                .compare_exchange(queued, queued - n, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => return Ok(n),
                Err(now) => queued = now,
            }
        }
    }
}

/// A pipe's receiving end registered with `shared`'s reactor, and the
/// sending end that keeps it open.
fn registered(shared: &Arc<Shared>) -> (mio::unix::pipe::Sender, Arc<Registration<Source>>) {
    let (peer, source) = mio::unix::pipe::new().expect("a pipe");
    let reg = Registration::with_handle(source, &Handle::new(shared.clone())).unwrap();
    (peer, Arc::new(reg))
}

/// The loop's dispatch of one readable event for `reg`: the poll reports
/// the edge, and the wakers it fires are woken once the table is unlocked.
/// Returns how many it woke.
fn dispatch_readable(shared: &Shared, reg: &Registration<Source>) -> usize {
    let mut wakers = Vec::new();
    shared
        .reactor
        .record(iter::once((reg.entry.token, READABLE)), &mut wakers);
    let woken = wakers.len();
    wake_all(&mut wakers);
    woken
}

/// A reader thread making its first try, `first`, with the waker of the
/// flag it is returned with.
fn reader<R: Send + 'static>(
    first: impl FnOnce(&Waker) -> R + Send + 'static,
) -> (thread::JoinHandle<R>, Arc<Flag>) {
    let flag = Flag::new();
    let handle = thread::spawn({
        let flag = flag.clone();
        move || first(&flag.waker())
    });
    (handle, flag)
}

/// The reader's buffer: a read of fewer bytes than this empties the
/// kernel's queue, so `poll_read_stream` clears readiness after it too.
const BUF: usize = 2;

/// The reader task: reads until it has `want` bytes, or until a read
/// returns `Pending` with its waker parked.
fn read(
    reg: &Registration<Source>,
    kernel: &Kernel,
    got: &mut usize,
    want: usize,
    waker: &Waker,
) -> Poll<()> {
    let mut cx = Context::from_waker(waker);
    while *got < want {
        match reg.poll_read_stream(&mut cx, BUF, |_| kernel.recv(BUF)) {
            Poll::Ready(n) => *got += n.expect("the model's recv only fails with WouldBlock"),
            Poll::Pending => return Poll::Pending,
        }
    }
    Poll::Ready(())
}

/// The peer sends `sent` bytes, one at a time, each reported by its own
/// poll of the OS (its own tick), while a reader task reads them all.
fn reader_racing_events(sent: usize) {
    loom::model(move || {
        let shared = harness::shared();
        let (_peer, reg) = registered(&shared);
        let kernel = Arc::new(Kernel::default());
        let flag = Flag::new();

        let reader = thread::spawn({
            let (reg, kernel, flag) = (reg.clone(), kernel.clone(), flag.clone());
            move || {
                let mut got = 0;
                let done = read(&reg, &kernel, &mut got, sent, &flag.waker()).is_ready();
                (done, got)
            }
        });
        // The loop: a byte lands in the socket, and a poll reports it.
        for _ in 0..sent {
            kernel.0.fetch_add(1, Ordering::AcqRel);
            dispatch_readable(&shared, &reg);
        }
        let (mut done, mut got) = reader.join().unwrap();

        // Every event has been dispatched: from here on, a reader that is
        // left `Pending` and was not woken waits forever.
        while !done {
            assert!(
                flag.take(),
                "the reader waits on readiness that was cleared ({got} of {sent} bytes read)"
            );
            done = read(&reg, &kernel, &mut got, sent, &flag.waker()).is_ready();
        }
        assert_eq!(got, sent);
    });
}

/// One byte: the reader's first try can fail (the source starts out
/// ready), and its clear races the byte's event.
#[test]
fn loom_clear_racing_an_event() {
    reader_racing_events(1);
}

/// Two bytes in two ticks: a clear after a short read, and a clear after
/// `WouldBlock`, each racing an event.
#[test]
fn loom_clear_racing_two_events() {
    reader_racing_events(2);
}

/// Two readers wait on one source, each for one byte, while the loop
/// dispatches one event for the two bytes the peer sent. Both must be
/// woken: with one waker slot per direction, the second waiter displaced
/// the first, which then waited forever.
#[test]
fn loom_two_waiters_racing_an_event() {
    loom::model(|| {
        let shared = harness::shared();
        let (_peer, reg) = registered(&shared);
        let kernel = Arc::new(Kernel::default());
        // A read of one byte, into a buffer of one byte: never short.
        let read_one = |reg: &Registration<Source>, kernel: &Kernel, waker: &Waker| {
            let mut cx = Context::from_waker(waker);
            reg.poll_read_stream(&mut cx, 1, |_| kernel.recv(1))
                .map(|n| n.expect("the model's recv only fails with WouldBlock"))
        };
        let readers: Vec<_> = (0..2)
            .map(|_| {
                let (reg, kernel) = (reg.clone(), kernel.clone());
                reader(move |waker| read_one(&reg, &kernel, waker).is_ready())
            })
            .collect();
        kernel.0.fetch_add(2, Ordering::AcqRel);
        dispatch_readable(&shared, &reg);

        for (handle, flag) in readers {
            let mut done = handle.join().unwrap();
            while !done {
                assert!(flag.take(), "a waiting reader was never woken");
                done = read_one(&reg, &kernel, &flag.waker()).is_ready();
            }
        }
        assert_eq!(kernel.0.load(Ordering::Acquire), 0);
    });
}

/// A clear racing an event, at the level of the state word: the clearer
/// hands back the readiness it saw, the loop records a new readable event.
/// If the clearer saw the readiness the source started out with (tick 0),
/// the event (tick 1) is newer, and its bit must survive the clear.
#[test]
fn loom_clear_never_erases_a_newer_event() {
    loom::model(|| {
        let shared = harness::shared();
        let (_peer, reg) = registered(&shared);
        let clearer = thread::spawn({
            let reg = reg.clone();
            move || {
                let event = reg
                    .entry
                    .ready_now(Direction::Read)
                    .unwrap()
                    .expect("a source starts out readable");
                reg.clear_readiness(event);
                event
            }
        });
        assert_eq!(
            dispatch_readable(&shared, &reg),
            0,
            "nobody waits in this model"
        );
        let seen = clearer.join().unwrap();
        let now = reg.entry.ready_now(Direction::Read).unwrap();
        match seen.tick {
            0 => assert!(now.is_some(), "a clear erased a newer event"),
            1 => assert!(now.is_none(), "the clear of the newest event did nothing"),
            tick => panic!("no event had tick {tick}"),
        }
    });
}

/// A reader parks on a source that is not ready while the runtime shuts
/// down: it gets the shutdown error, or it is woken and then gets it.
#[test]
fn loom_shutdown_racing_a_waiting_reader() {
    loom::model(|| {
        let shared = harness::shared();
        let (_peer, reg) = registered(&shared);
        // Nothing to read: the reader has to wait.
        let event = reg.entry.ready_now(Direction::Read).unwrap().unwrap();
        reg.clear_readiness(event);
        let flag = Flag::new();
        let poll = |reg: &Registration<Source>, waker: &Waker| {
            let mut cx = Context::from_waker(waker);
            match reg.poll_read_ready(&mut cx) {
                Poll::Ready(Ok(event)) => panic!("ready with no event: {event:?}"),
                Poll::Ready(Err(_)) => true,
                Poll::Pending => false,
            }
        };
        let reader = thread::spawn({
            let (reg, flag) = (reg.clone(), flag.clone());
            move || poll(&reg, &flag.waker())
        });
        let mut wakers = Vec::new();
        shared.reactor.shutdown(&mut wakers);
        wake_all(&mut wakers);
        if !reader.join().unwrap() {
            assert!(flag.take(), "a reader waits on a runtime that shut down");
            assert!(
                poll(&reg, &flag.waker()),
                "woken, but not told of the shutdown"
            );
        }
    });
}

/// Two futures wait on one source, each in a place of its own (a key among
/// the waiters, as a `Waiter` holds), while the loop dispatches one event
/// for the two bytes the peer sent and a third waiting future gives its
/// place back (it was dropped). Both readers must be woken, and once every
/// place is given back the set holds no waker.
#[test]
fn loom_keyed_waiters_racing_an_event_and_a_drop() {
    loom::model(|| {
        let shared = harness::shared();
        let (_peer, reg) = registered(&shared);
        let kernel = Arc::new(Kernel::default());
        let read_one = |reg: &Registration<Source>,
                        kernel: &Kernel,
                        key: &mut Option<usize>,
                        waker: &Waker| {
            let mut cx = Context::from_waker(waker);
            reg.poll_io(
                &mut cx,
                Direction::Read,
                Some(key),
                |_| kernel.recv(1),
                |_, _| false,
            )
            .map(|n| n.expect("the model's recv only fails with WouldBlock"))
        };
        let readers: Vec<_> = (0..2)
            .map(|_| {
                let (reg, kernel) = (reg.clone(), kernel.clone());
                reader(move |waker| {
                    let mut key = None;
                    let done = read_one(&reg, &kernel, &mut key, waker).is_ready();
                    (done, key)
                })
            })
            .collect();
        let dropped = thread::spawn({
            let reg = reg.clone();
            move || {
                let mut key = None;
                let mut cx = Context::from_waker(Waker::noop());
                let _ = reg
                    .entry
                    .poll_ready(Direction::Read, &mut cx, Some(&mut key));
                if let Some(key) = key {
                    reg.entry.forget(Direction::Read, key);
                }
            }
        });
        kernel.0.fetch_add(2, Ordering::AcqRel);
        dispatch_readable(&shared, &reg);

        for (handle, flag) in readers {
            let (mut done, mut key) = handle.join().unwrap();
            while !done {
                assert!(flag.take(), "a waiting reader was never woken");
                done = read_one(&reg, &kernel, &mut key, &flag.waker()).is_ready();
            }
            if let Some(key) = key {
                reg.entry.forget(Direction::Read, key);
            }
        }
        dropped.join().unwrap();
        assert_eq!(kernel.0.load(Ordering::Acquire), 0);
        let parked = reg.entry.readers_parked();
        assert_eq!(parked, 0, "a waker stayed after its place was given back");
    });
}
