//! The runtimes behind one trait, so each workload is written once
//! and has the same shape on all of them.

use std::convert::Infallible;
use std::fmt::Debug;
use std::future::{Future, poll_fn};
use std::pin::Pin;
use std::sync::OnceLock;
use std::task::{Context, Poll};
use std::time::Duration;

/// A runtime a workload runs on.
pub trait Rt: 'static {
    /// Builds the runtime, runs `body` as a spawned task on it (not as the
    /// `block_on` future, which tokio's multi-thread runtime polls off its
    /// workers), and returns the task's output. Building the runtime is not
    /// part of any measurement: `body` times itself.
    fn run<F>(body: F) -> F::Output
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static;

    /// Spawns `future`; the returned future is its output (a panic in the
    /// task fails the benchmark).
    fn spawn<F>(
        future: F,
    ) -> Joined<impl Future<Output = Result<F::Output, impl Debug>> + Unpin + Send>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static;

    /// The runtime's `sleep`.
    fn sleep(duration: Duration) -> impl Future<Output = ()> + Send + 'static;

    /// The runtime's `yield_now`.
    fn yield_now() -> impl Future<Output = ()> + Send + 'static;

    /// Runs `future` outside the runtime's cooperative budget. tokio's
    /// `Sleep` spends budget on every poll and, past 128 in one task poll,
    /// returns `Pending` without arming; ioloop's spends it when it reports
    /// an elapsed deadline. A workload that arms or completes many timers
    /// in one poll must opt out on both.
    fn unbudgeted<F: Future + Send>(future: F) -> impl Future<Output = F::Output> + Send;
}

/// A join handle whose output is unwrapped: the same size as the handle,
/// so a `Vec` of them holds what a user's `Vec` of handles would.
pub struct Joined<H>(H);

impl<T, E: Debug, H: Future<Output = Result<T, E>> + Unpin> Future for Joined<H> {
    type Output = T;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<T> {
        Pin::new(&mut self.0)
            .poll(cx)
            .map(|r| r.expect("a benchmark task panicked"))
    }
}

/// ioloop, with its default settings but for the stall detector's
/// threshold, which `--slow-poll-ms` sets (see [`set_slow_poll_ms`]).
pub struct Ioloop;

/// The stall detector's threshold for [`Ioloop`], in milliseconds; 0 is off.
static SLOW_POLL_MS: OnceLock<u64> = OnceLock::new();

/// Sets [`Ioloop`]'s stall detector threshold once, before any run.
pub fn set_slow_poll_ms(ms: u64) {
    SLOW_POLL_MS
        .set(ms)
        .expect("the stall detector's threshold is set once");
}

impl Rt for Ioloop {
    fn run<F>(body: F) -> F::Output
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        let mut builder = ioloop::Runtime::builder();
        // Unset (benches/micro): the runtime's own default.
        if let Some(&ms) = SLOW_POLL_MS.get() {
            builder.slow_poll_threshold((ms > 0).then(|| Duration::from_millis(ms)));
        }
        let rt = builder.build().expect("cannot create an ioloop runtime");
        let task = rt.spawn(body);
        rt.block_on(Joined(task))
    }

    fn spawn<F>(
        future: F,
    ) -> Joined<impl Future<Output = Result<F::Output, impl Debug>> + Unpin + Send>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        Joined(ioloop::spawn(future))
    }

    fn sleep(duration: Duration) -> impl Future<Output = ()> + Send + 'static {
        ioloop::time::sleep(duration)
    }

    fn yield_now() -> impl Future<Output = ()> + Send + 'static {
        ioloop::yield_now()
    }

    fn unbudgeted<F: Future + Send>(future: F) -> impl Future<Output = F::Output> + Send {
        ioloop::task::unconstrained(future)
    }
}

/// tokio's current_thread runtime: one thread, like ioloop.
pub struct TokioCt;

/// tokio's multi_thread runtime, one worker per core (its default).
pub struct TokioMt;

macro_rules! tokio_rt {
    ($rt:ty, $builder:expr) => {
        impl Rt for $rt {
            fn run<F>(body: F) -> F::Output
            where
                F: Future + Send + 'static,
                F::Output: Send + 'static,
            {
                let rt = $builder
                    .enable_all()
                    .build()
                    .expect("cannot create a tokio runtime");
                let task = rt.spawn(body);
                rt.block_on(Joined(task))
            }

            fn spawn<F>(
                future: F,
            ) -> Joined<impl Future<Output = Result<F::Output, impl Debug>> + Unpin + Send>
            where
                F: Future + Send + 'static,
                F::Output: Send + 'static,
            {
                Joined(tokio::spawn(future))
            }

            fn sleep(duration: Duration) -> impl Future<Output = ()> + Send + 'static {
                tokio::time::sleep(duration)
            }

            fn yield_now() -> impl Future<Output = ()> + Send + 'static {
                tokio::task::yield_now()
            }

            fn unbudgeted<F: Future + Send>(future: F) -> impl Future<Output = F::Output> + Send {
                tokio::task::unconstrained(future)
            }
        }
    };
}

tokio_rt!(TokioCt, tokio::runtime::Builder::new_current_thread());
tokio_rt!(TokioMt, tokio::runtime::Builder::new_multi_thread());

/// smol 2.x, run as a smol user runs one thread: a [`smol::Executor`]
/// driven by `smol::block_on(executor.run(..))` on the calling thread,
/// which also drives async-io's reactor and timers while the executor is
/// idle (and async-io's own `async-io` thread drives them while it is
/// busy). An `Executor`, not a `LocalExecutor`, because the workloads
/// spawn `Send` futures from inside their body through a static function;
/// smol has no cooperative budget.
pub struct Smol;

/// The executor [`Smol`] spawns on: one per process, as `spawn` has no
/// receiver to find another through.
static SMOL: smol::Executor<'static> = smol::Executor::new();

impl Rt for Smol {
    fn run<F>(body: F) -> F::Output
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        let task = SMOL.spawn(body);
        smol::block_on(SMOL.run(task))
    }

    fn spawn<F>(
        future: F,
    ) -> Joined<impl Future<Output = Result<F::Output, impl Debug>> + Unpin + Send>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        // Awaiting a `Task` re-raises a panic of its task, so it cannot
        // fail; `poll_fn` keeps the handle the size of the `Task`.
        let mut task = SMOL.spawn(future);
        Joined(poll_fn(move |cx| {
            Pin::new(&mut task).poll(cx).map(Ok::<_, Infallible>)
        }))
    }

    fn sleep(duration: Duration) -> impl Future<Output = ()> + Send + 'static {
        let mut timer = smol::Timer::after(duration);
        poll_fn(move |cx| Pin::new(&mut timer).poll(cx).map(drop))
    }

    fn yield_now() -> impl Future<Output = ()> + Send + 'static {
        smol::future::yield_now()
    }

    fn unbudgeted<F: Future + Send>(future: F) -> impl Future<Output = F::Output> + Send {
        future
    }
}
