//! What every layer shares, below the event loop: what the loop writes and
//! the layers above read. Each part imports nothing of the crate (but the
//! lock, `sync::lock`, whose wake check `poll_budget` makes): the
//! cooperative budget (`budget`), the counters behind `Metrics`, the watch
//! of the poll running (for the stall detector and a dump), and
//! `JoinError`, as the task cell stores it (what a user asks of it is in
//! `task/join.rs`).

use std::any::Any;
use std::io;
use std::panic::Location;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering, fence};
use std::task::Waker;

use crate::sync::lock::Mutex;

pub(crate) mod budget {
    //! The cooperative budget: each poll may complete 128 I/O operations
    //! (readiness checks, taking a finished task's output); then the check
    //! returns `Pending` after waking the task, which goes behind the next
    //! poll of the OS (see the guide's chapter on the tick). Its state is per
    //! thread: what is left of the running task's budget, whether it asked to
    //! yield, and which task poll this is. The tick resets it before each poll
    //! and reads the yield flag after running its jobs.

    use std::cell::Cell;
    use std::future::Future;
    use std::pin::Pin;
    use std::task::{Context, Poll};

    /// Operations a task may complete per poll.
    pub(crate) const PER_POLL: u32 = 128;

    /// No limit: outside a runtime's tasks (a registration polled by another
    /// executor, or on a thread whose loop has returned).
    pub(crate) const UNLIMITED: u32 = u32::MAX;

    thread_local! {
        // A thread-local of its own rather than a field of the loop's core: it
        // is touched on every readiness check, and a `Cell` here costs a load
        // and a store, where reaching the core costs a `RefCell` borrow too.
        pub(crate) static LEFT: Cell<u32> = const { Cell::new(UNLIMITED) };
        /// A task asked to go behind the next poll of the OS (it yielded, or
        /// ran out of budget) since the loop last polled it.
        pub(crate) static YIELDED: Cell<bool> = const { Cell::new(false) };
        /// The number of the job running on this thread (0 before the first):
        /// which task poll this is, so that a `Sleep` can tell whether it is
        /// polled in the poll that made it (see `Sleep::poll_local`). Wraps.
        pub(crate) static JOB: Cell<u32> = const { Cell::new(0) };
    }

    /// Asks the loop on this thread to poll the OS before it runs the task
    /// again: the task yielded.
    pub(crate) fn yield_to_poll() {
        YIELDED.set(true);
    }

    /// Whether a task asked for a poll of the OS since the last call.
    pub(crate) fn take_yielded() -> bool {
        YIELDED.replace(false)
    }

    /// Gives the job about to run on this thread a fresh budget, and the next
    /// job number. Inline: the loop calls it before every job.
    #[inline]
    pub(crate) fn reset() {
        LEFT.set(PER_POLL);
        JOB.set(JOB.get().wrapping_add(1));
    }

    /// The number of the job running on this thread: it changes with every
    /// task poll the loop makes (and wraps after four billion).
    #[inline]
    pub(crate) fn job() -> u32 {
        JOB.get()
    }

    /// Lifts the limit: the loop on this thread has stopped running jobs.
    pub(crate) fn lift() {
        LEFT.set(UNLIMITED);
    }

    /// Whether the running task may still spend budget.
    #[inline]
    pub(crate) fn has_remaining() -> bool {
        LEFT.get() != 0
    }

    /// Runs `f` with no limit, then restores the budget as it was.
    pub(crate) fn without_limit<R>(f: impl FnOnce() -> R) -> R {
        let before = LEFT.replace(UNLIMITED);
        let output = f();
        // A panic in `f` skips this; the next job's reset repairs it.
        LEFT.set(before);
        output
    }

    /// Spends one unit of the current task's cooperative budget, or, if it is
    /// used up, wakes the task (to run after the next poll of the OS) and
    /// returns `Pending`. Every readiness check and `Sleep` poll does this;
    /// call it from a source whose progress never depends on the reactor (an
    /// in-memory reader), so a task looping over it still lets others run.
    /// Outside an ioloop task it always proceeds.
    ///
    /// ```
    /// use std::future::poll_fn;
    /// use std::task::Poll;
    ///
    /// ioloop::block_on(async {
    ///     // A source that is always ready: without the budget this loop would
    ///     // never give the loop a turn, and the other task would never run.
    ///     let other = ioloop::spawn(async { "ran" });
    ///     while !other.is_finished() {
    ///         poll_fn(|cx| ioloop::task::poll_budget(cx).map(|()| Poll::Ready(()))).await;
    ///     }
    ///     assert_eq!(other.await.unwrap(), "ran");
    /// });
    /// ```
    ///
    /// Inline: it runs several times per echoed message, and is a load, a
    /// compare and a store but for the rare yield.
    #[inline]
    pub fn poll_budget(cx: &mut Context<'_>) -> Poll<()> {
        // It may wake the task (below): no lock of ours may be held.
        crate::sync::lock::assert_unlocked();
        let left = LEFT.get();
        if left == 0 {
            return out_of_budget(cx);
        }
        if left != UNLIMITED {
            LEFT.set(left - 1);
        }
        Poll::Ready(())
    }

    /// Gives back the unit a [`poll_budget`] just spent, for an operation
    /// that then found nothing ready: only progress spends budget.
    #[inline]
    pub(crate) fn refund() {
        let left = LEFT.get();
        if left != UNLIMITED {
            LEFT.set(left + 1);
        }
    }

    /// The budget is spent: yield behind the next poll of the OS.
    #[cold]
    fn out_of_budget(cx: &mut Context<'_>) -> Poll<()> {
        yield_to_poll();
        cx.waker().wake_by_ref();
        Poll::Pending
    }

    /// Spends one unit of the current task's budget, yielding to the loop if
    /// it is used up: the `async` form of [`poll_budget`].
    ///
    /// ```
    /// ioloop::block_on(async {
    ///     let other = ioloop::spawn(async { 1 });
    ///     let mut spins = 0;
    ///     while !other.is_finished() {
    ///         ioloop::task::consume_budget().await;
    ///         spins += 1;
    ///     }
    ///     assert!(spins >= 128); // a whole budget, then a yield
    /// });
    /// ```
    pub async fn consume_budget() {
        std::future::poll_fn(poll_budget).await
    }

    pin_project_lite::pin_project! {
        /// The future returned by [`unconstrained`].
        #[derive(Debug)]
        #[must_use = "futures do nothing unless you `.await` or poll them"]
        pub struct Unconstrained<F> {
            #[pin]
            inner: F,
        }
    }

    /// Runs `future` without the cooperative budget, for a bounded burst of
    /// work in one poll (arming a million timers); a future that loops forever
    /// on ready sources inside it can starve the loop.
    ///
    /// ```
    /// use std::future::poll_fn;
    /// use std::task::Poll;
    ///
    /// ioloop::block_on(ioloop::task::unconstrained(async {
    ///     // Far more than one budget, in one poll: never told to yield.
    ///     for _ in 0..1000 {
    ///         assert!(poll_fn(|cx| Poll::Ready(ioloop::task::poll_budget(cx).is_ready())).await);
    ///     }
    /// }));
    /// ```
    pub fn unconstrained<F: Future>(future: F) -> Unconstrained<F> {
        Unconstrained { inner: future }
    }

    impl<F: Future> Future for Unconstrained<F> {
        type Output = F::Output;

        fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
            let inner = self.project().inner;
            without_limit(|| inner.poll(cx))
        }
    }
}

// The counters behind `Metrics` (`metrics.rs`), bumped in place by the
// loop and read as they are by other threads.

/// A counter, readable from any thread.
#[derive(Default)]
pub(crate) struct Counter(AtomicU64);

impl Counter {
    /// Overwrites the value: a size the loop publishes.
    pub(crate) fn set(&self, value: u64) {
        self.0.store(value, Ordering::Relaxed);
    }

    /// Adds to a counter only the loop thread writes: a load and a store,
    /// cheaper than the read-modify-write `add` needs for many writers.
    pub(crate) fn bump(&self, n: u64) {
        self.0
            .store(self.0.load(Ordering::Relaxed) + n, Ordering::Relaxed);
    }

    /// Adds to the value, from any thread.
    pub(crate) fn add(&self, n: u64) {
        self.0.fetch_add(n, Ordering::Relaxed);
    }

    pub(crate) fn get(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

/// The counters behind `Metrics`, stored once: the loop bumps them in
/// place, and other threads read them as they are.
#[derive(Default)]
pub(crate) struct Counters {
    pub(crate) ticks: Counter,
    pub(crate) jobs_run: Counter,
    pub(crate) io_events: Counter,
    pub(crate) stale_io_events: Counter,
    pub(crate) poller_wakeups: Counter,
    pub(crate) live_tasks: Counter,
    pub(crate) live_timers: Counter,
    pub(crate) timer_heap_len: Counter,
    pub(crate) slow_polls: Counter,
}

// What the loop is polling, published for other threads: the stall
// detector's watchdog (`stall.rs`) and a dump read it; the loop writes it
// with plain stores around each poll.

/// The task-list slot published while the `block_on` future is polled.
pub(crate) const MAIN: usize = usize::MAX;

/// What the loop is polling, for other threads: the stall detector and a
/// dump.
#[derive(Default)]
pub(crate) struct Watch {
    /// Odd while a poll runs, even between polls; one more at each change.
    seq: AtomicU64,
    /// The task-list slot of the task being polled, or [`MAIN`].
    key: AtomicUsize,
    /// Where the running `block_on` was called, for reports about its
    /// future.
    pub(crate) main: Mutex<Option<&'static Location<'static>>>,
}

impl Watch {
    /// Announces a poll of the task in slot `key` (or [`MAIN`]). Only the
    /// loop writes the watch, so publishing costs a load and two stores (a
    /// load and one for [`end`](Watch::end)), no read-modify-write.
    #[inline]
    pub(crate) fn start(&self, key: usize) {
        let seq = self.seq.load(Ordering::Relaxed) + 1;
        self.key.store(key, Ordering::Relaxed);
        self.seq.store(seq, Ordering::Release);
    }

    /// Announces that the poll returned.
    #[inline]
    pub(crate) fn end(&self) {
        let seq = self.seq.load(Ordering::Relaxed) + 1;
        self.seq.store(seq, Ordering::Release);
    }

    /// The poll running now, if one is: its sequence number and slot. The
    /// slot is right if the sequence number is still the same afterwards
    /// (see [`Watch::still`]).
    pub(crate) fn running(&self) -> Option<(u64, usize)> {
        let seq = self.seq.load(Ordering::Acquire);
        (seq & 1 == 1).then(|| (seq, self.key.load(Ordering::Relaxed)))
    }

    /// Whether the poll numbered `seq` is still the one running.
    pub(crate) fn still(&self, seq: u64) -> bool {
        fence(Ordering::Acquire);
        self.seq.load(Ordering::Relaxed) == seq
    }
}

/// Why a task did not produce its output: it panicked, it was cancelled, or
/// (for [`spawn_blocking`](crate::spawn_blocking)) no thread could be
/// started to run it; the last is neither a panic nor a cancellation, and
/// its [`source`](std::error::Error::source) is the OS error.
///
/// # Examples
///
/// ```
/// ioloop::block_on(async {
///     let task = ioloop::spawn(async { panic!("boom") });
///     let err = task.await.unwrap_err();
///     assert!(err.is_panic());
///     let payload = err.into_panic();
///     assert_eq!(payload.downcast_ref::<&str>(), Some(&"boom"));
/// });
/// ```
pub struct JoinError {
    // Boxed: a task's output slot holds `Result<T, JoinError>`, and a thin
    // error keeps every task smaller; errors are rare, their box is cheap.
    pub(crate) repr: Box<Repr>,
}

pub(crate) enum Repr {
    Cancelled,
    // The mutex makes the error `Sync` (so it fits in `io::Error` and
    // error-reporting crates) without `unsafe`; it is only ever locked by
    // `into_panic` and `Display`, never contended.
    Panic(Mutex<Box<dyn Any + Send + 'static>>),
    /// The blocking pool could not start a thread for the job.
    NoThread(io::Error),
}

impl JoinError {
    pub(crate) fn cancelled() -> Self {
        JoinError {
            repr: Box::new(Repr::Cancelled),
        }
    }

    pub(crate) fn panic(payload: Box<dyn Any + Send + 'static>) -> Self {
        JoinError {
            repr: Box::new(Repr::Panic(Mutex::new(payload))),
        }
    }

    pub(crate) fn no_thread(err: io::Error) -> Self {
        JoinError {
            repr: Box::new(Repr::NoThread(err)),
        }
    }
}

/// Points `slot` at `waker`, unless it already wakes the same task. Returns
/// the waker it held, for the caller to drop once its lock is released: a
/// waker's drop may run arbitrary code.
#[inline]
pub(crate) fn set_waker(slot: &mut Option<Waker>, waker: &Waker) -> Option<Waker> {
    match slot {
        Some(old) if old.will_wake(waker) => None,
        _ => slot.replace(waker.clone()),
    }
}

/// A panic payload's message, when it is a string (as `panic!` makes it).
pub(crate) fn panic_message(payload: &(dyn Any + Send)) -> Option<&str> {
    payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
}

/// A panic payload's message, or a placeholder, for logging.
pub(crate) fn describe(payload: &(dyn Any + Send)) -> &str {
    panic_message(payload).unwrap_or("a non-string payload")
}
