//! loom models of the park protocol: threads handing work to the loop
//! through the injection queue while the loop goes to sleep in the poller,
//! wakes, and takes the work in.
//!
//! ```text
//! RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=3 \
//!     cargo test -p ioloop-runtime --release --lib loom --target-dir target/loom
//! ```
//!
//! The foreign side is the real `core::schedule`, from a thread that runs
//! no loop. The loop's side is the sequence `Core::run` goes through around
//! its poll, with the poller's
//! eventfd modelled by `PollWaker` (`crate::sync::mock`): a blocking wait
//! returns only after a write, so a lost wake is a deadlock, which loom
//! reports. Each model also checks that no park costs more than one
//! eventfd write.
//!
//! The last two models race the same path against the runtime's shutdown,
//! which closes the injection queue.

use std::future::{Future, poll_fn};
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use loom::thread;

use super::{Job, Shared};
use crate::event_loop::cell::TaskCell;
use crate::handle::Handle;
use crate::sync::harness::{self, Counted};
use crate::sync::{AtomicUsize, Mutex, Ordering};
use crate::task::join::JoinHandle;

/// What one tick of the loop does about the poller.
#[derive(Clone, Copy, PartialEq)]
enum Tick {
    /// Tasks stay ready and the OS was polled recently: no poll, only a
    /// look for injected work (`Shared::take_notified`).
    Busy,
    /// A poll with a timeout that expires before any write arrives (a
    /// timer is due): it parks, but does not wait for a wake.
    TimedOut,
    /// Nothing to do: park and wait for a wake.
    Idle,
}

/// The loop: runs the ticks of `script`, then idle ticks, until it has
/// taken in `jobs` injected jobs. Returns how many times it parked.
fn run_loop(shared: &Shared, jobs: usize, script: &[Tick]) -> usize {
    let mut ticks = script.iter().copied().chain(std::iter::repeat(Tick::Idle));
    let (mut taken, mut parks) = (0, 0);
    while taken < jobs {
        let tick = ticks.next().expect("an endless script");
        let notified = if tick == Tick::Busy {
            shared.take_notified()
        } else {
            // `Driver::wait`: a poll that may block announces itself, and
            // blocks only if no wake came in first.
            let parked = shared.try_park();
            parks += usize::from(parked);
            shared.waker.wait(parked && tick == Tick::Idle);
            shared.unpark_after_poll()
        };
        if notified {
            taken += harness::take_injected(shared).len();
        }
    }
    parks
}

/// `wakers` foreign threads each hand the loop one job while it runs
/// `script`: every job is taken in (no lost wake), and the eventfd is
/// written at most once per park.
fn foreign_wakes(wakers: usize, script: &'static [Tick]) {
    loom::model(move || {
        let shared = harness::shared();
        let threads: Vec<_> = (0..wakers)
            .map(|_| {
                let shared = shared.clone();
                thread::spawn(move || crate::event_loop::core::schedule((&*shared, Job::Main)))
            })
            .collect();
        let parks = run_loop(&shared, wakers, script);
        for thread in threads {
            thread.join().unwrap();
        }

        let writes = shared.waker.writes();
        assert!(writes <= parks, "{writes} eventfd writes for {parks} parks");
        assert!(harness::take_injected(&shared).is_empty());
    });
}

/// The plain case: the loop goes to sleep as a job comes in.
#[test]
fn loom_park_one_foreign_wake() {
    foreign_wakes(1, &[]);
}

/// Two threads wake the loop at once: the second must not rely on a
/// notification the loop has already consumed.
#[test]
fn loom_park_two_foreign_wakes() {
    foreign_wakes(2, &[]);
}

/// The job comes in during a tick that skips the poll, or during a wait
/// that times out: the notification carries over to a later tick, and a
/// park the loop left on its own still costs at most one write.
#[test]
fn loom_park_busy_and_timed_out_ticks() {
    foreign_wakes(1, &[Tick::Busy, Tick::TimedOut]);
}

/// Two threads, against a wait that times out first.
#[test]
fn loom_park_two_foreign_wakes_timed_out() {
    foreign_wakes(2, &[Tick::TimedOut]);
}

/// A future that never completes and counts its drops; it leaves its
/// waker in `slot` each time it is polled.
fn pending_forever(
    slot: Arc<Mutex<Option<Waker>>>,
) -> (impl Future<Output = ()> + Send, Arc<AtomicUsize>) {
    let (guard, drops) = Counted::new();
    let future = poll_fn(move |cx| {
        let _hold = &guard;
        *slot.lock() = Some(cx.waker().clone());
        Poll::Pending
    });
    (future, drops)
}

/// The task's handle must say cancelled, and its future must have been
/// dropped exactly once, with nothing left in the injection queue.
fn assert_cancelled_once(shared: &Shared, handle: JoinHandle<()>, drops: &AtomicUsize) {
    assert_eq!(drops.load(Ordering::Acquire), 1);
    let polled = pin!(handle).poll(&mut Context::from_waker(Waker::noop()));
    assert!(matches!(polled, Poll::Ready(Err(err)) if err.is_cancelled()));
    assert!(harness::take_injected(shared).is_empty());
}

/// A task the loop has polled is woken from another thread while the
/// runtime shuts down (`Runtime`'s drop: close the injection queue, then
/// `Core::shutdown`). Queued before the close or cancelled on the spot
/// after it, on whichever thread: its future is dropped exactly once.
#[test]
fn loom_wake_racing_shutdown() {
    loom::model(|| {
        let shared = harness::shared();
        let core = harness::core(&shared);
        let slot = Arc::new(Mutex::new(None));
        let (future, drops) = pending_forever(slot.clone());
        let task = TaskCell::allocate(future, shared.clone(), std::panic::Location::caller());
        let handle = JoinHandle::new(&task);
        core.push(Job::Task(task.task()));
        task.into_task().run();
        let waker = slot.lock().take().expect("polled once");

        let foreign = thread::spawn(move || waker.wake());
        core.shutdown(shared.close());
        foreign.join().unwrap();

        assert_cancelled_once(&shared, handle, &drops);
    });
}

/// A task spawned from another thread while the runtime shuts down: it is
/// either among the jobs the close hands to `Core::shutdown`, or cancelled
/// on the spot; never left in the queue, never dropped twice.
#[test]
fn loom_spawn_racing_shutdown() {
    loom::model(|| {
        let shared = harness::shared();
        let core = harness::core(&shared);
        let (future, drops) = pending_forever(Arc::new(Mutex::new(None)));

        let foreign = thread::spawn({
            let handle = Handle::new(shared.clone());
            move || handle.spawn(future)
        });
        core.shutdown(shared.close());
        let handle = foreign.join().unwrap();

        assert_cancelled_once(&shared, handle, &drops);
    });
}
