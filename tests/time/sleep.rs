//! `sleep`, `sleep_until` and `Sleep`: every sleep fires, none early, the
//! loop does not spin on a sub-millisecond timer, and cancelled timers do
//! not pile up in the heap.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Wake, Waker};
use std::time::Duration;

use ioloop::time::Instant;

use ioloop::time::{advance, sleep, sleep_until, timeout};
use ioloop::{Handle, Metrics, Runtime, yield_now};
use testkit::time_poll;
use time_poll::poll_once;

/// Safety net for waits that should end long before it; never a measure.
/// Virtual on a paused runtime: a sleep that never fires fails at once.
const SAFETY: Duration = Duration::from_secs(60);

/// A runtime whose clock starts paused, for the tests whose waits are not
/// what they check: they take no wall time, and check instants exactly.
/// Those about the real clock (none early, no spin) stay on it.
fn paused() -> Runtime {
    Runtime::builder().start_paused(true).build().unwrap()
}

/// The runtime's counters as of the last completed tick: yields first,
/// because the loop publishes them once per tick.
async fn fresh_metrics() -> Metrics {
    yield_now().await;
    Handle::current().metrics()
}

#[test]
fn a_hundred_thousand_concurrent_sleeps_all_fire_and_none_early() -> io::Result<()> {
    const TASKS: u64 = 100_000;
    ioloop::block_on(async {
        let fired = Arc::new(AtomicU64::new(0));
        let early = Arc::new(AtomicU64::new(0));
        let mut tasks = Vec::with_capacity(TASKS as usize);
        for i in 0..TASKS {
            let fired = fired.clone();
            let early = early.clone();
            // 0..=50 ms, spread so many deadlines share a tick and many don't.
            let duration = Duration::from_micros((i * 7919) % 50_001);
            tasks.push(ioloop::spawn(async move {
                let s = sleep(duration);
                let deadline = s.deadline();
                s.await;
                if Instant::now() < deadline {
                    early.fetch_add(1, Ordering::Relaxed);
                }
                fired.fetch_add(1, Ordering::Relaxed);
            }));
        }
        timeout(SAFETY, async {
            for task in tasks {
                task.await.expect("a sleeping task failed");
            }
        })
        .await?;

        assert_eq!(fired.load(Ordering::Relaxed), TASKS);
        assert_eq!(early.load(Ordering::Relaxed), 0, "some sleeps fired early");
        let m = fresh_metrics().await;
        assert_eq!(m.live_timers, 0);
        assert_eq!(m.live_tasks, 0);
        Ok(())
    })
}

/// A 300 µs timer must not turn into a stream of zero-timeout polls until
/// it is due (epoll counts whole milliseconds; rounding down would spin).
///
/// The honest bound, from `Core::run`: one sleep costs two ticks. In the
/// first the main future arms the timer and the loop polls the OS with the
/// timeout rounded *up* to 1 ms; in the second the timer is due and fires,
/// which queues the main future for the third tick, which is the next
/// sleep's first. A signal (EINTR) can add a tick now and then, hence the
/// margin. A spin costs one tick per `epoll_wait(0)`, i.e. dozens to
/// hundreds per 300 µs.
#[test]
fn a_pending_300us_timer_does_not_spin() -> io::Result<()> {
    const SLEEPS: u64 = 200;
    ioloop::block_on(async {
        let before = fresh_metrics().await;
        for _ in 0..SLEEPS {
            let deadline = Instant::now() + Duration::from_micros(300);
            timeout(SAFETY, sleep_until(deadline)).await?;
            assert!(Instant::now() >= deadline);
        }
        let after = fresh_metrics().await;
        let ticks = after.ticks - before.ticks;
        assert!(
            ticks <= 3 * SLEEPS + 10,
            "{ticks} ticks for {SLEEPS} sleeps of 300 µs: the loop spins"
        );
        Ok(())
    })
}

/// The first poll of a sleep made in the same task poll trusts the clock
/// reading taken when it was made (it saves a second read): if the task
/// ran past the deadline in between, the sleep completes on the loop's
/// next tick rather than at once, and never early. A sleep made in an
/// earlier poll, or shorter than a millisecond, asks the clock and
/// completes at once.
#[test]
fn a_sleep_first_polled_in_the_poll_that_made_it_is_at_most_a_tick_late() {
    ioloop::block_on(async {
        let d = Duration::from_millis(2);
        let start = Instant::now();

        let mut earlier = sleep(d);
        yield_now().await;
        std::thread::sleep(2 * d);
        assert!(
            poll_once(&mut earlier).is_ready(),
            "made in an earlier poll"
        );

        let mut short = sleep(Duration::from_micros(100));
        std::thread::sleep(Duration::from_millis(1));
        assert!(
            poll_once(&mut short).is_ready(),
            "shorter than a millisecond"
        );

        let made = Instant::now();
        let mut now = sleep(d);
        std::thread::sleep(2 * d);
        assert!(poll_once(&mut now).is_pending(), "armed without asking");
        // The loop's next tick reads the clock and fires it.
        yield_now().await;
        assert!(poll_once(&mut now).is_ready(), "a tick late");
        assert!(made.elapsed() >= d && start.elapsed() >= 2 * d);
    });
}

/// A clock reading a sleep's poll takes becomes the loop's clock, so the
/// sleeps polled after it that were due by then complete without reading
/// again. It is only ever a past reading: a sleep made after it is not
/// ended early by it, and still fires.
#[test]
fn a_reading_taken_for_one_sleep_serves_those_polled_after_it_and_ends_none_early() {
    ioloop::block_on(async {
        let d = Duration::from_millis(2);
        // Fewer than a task's budget of polls (128), or the last would be
        // told to wait for the next tick.
        let mut due: Vec<_> = (0..100).map(|_| sleep(d)).collect();
        // A later task poll, so each first poll asks the clock (or the
        // reading the first one took).
        yield_now().await;
        std::thread::sleep(2 * d);
        for s in &mut due {
            assert!(poll_once(s).is_ready());
        }
        yield_now().await;
        let made = Instant::now();
        let mut later = sleep(Duration::from_millis(50));
        assert!(
            poll_once(&mut later).is_pending(),
            "not ended by the old reading"
        );
        later.await;
        assert!(made.elapsed() >= Duration::from_millis(50));
    });
}

#[test]
fn a_million_cancelled_sleeps_leave_the_heap_bounded() -> io::Result<()> {
    const SLEEPS: usize = 1_000_000;
    const KEPT: u64 = 100;
    ioloop::block_on(async {
        let far = Duration::from_secs(3600);
        // Armed for the whole test, so "live" is not trivially zero.
        let mut kept: Vec<_> = (0..KEPT).map(|_| sleep(far)).collect();
        for s in &mut kept {
            assert!(poll_once(s).is_pending());
        }
        for i in 0..SLEEPS {
            let mut s = sleep(far);
            // Polled once, so it is armed: a heap entry and a slot.
            assert!(poll_once(&mut s).is_pending());
            drop(s);
            if i % 50_000 == 0 {
                let m = fresh_metrics().await;
                assert_eq!(m.live_timers, KEPT);
                assert!(
                    m.timer_heap_len <= (2 * m.live_timers).max(1024) + 1,
                    "heap of {} entries for {} armed timers",
                    m.timer_heap_len,
                    m.live_timers
                );
            }
        }
        let m = fresh_metrics().await;
        assert_eq!(m.live_timers, KEPT);
        assert!(m.timer_heap_len <= (2 * KEPT).max(1024) + 1);

        drop(kept);
        let m = fresh_metrics().await;
        assert_eq!(m.live_timers, 0);
        assert!(m.timer_heap_len <= 1025, "heap: {}", m.timer_heap_len);
        Ok(())
    })
}

#[test]
fn reset_moves_an_armed_sleep_earlier_and_disarms_the_old_timer() -> io::Result<()> {
    paused().block_on(async {
        let mut s = sleep(Duration::from_secs(3600));
        assert!(poll_once(&mut s).is_pending());
        assert_eq!(fresh_metrics().await.live_timers, 1);

        let deadline = Instant::now() + Duration::from_millis(20);
        s.reset(deadline);
        assert_eq!(s.deadline(), deadline);
        // The timer moved: still one, not a second beside the hour-long one.
        assert_eq!(fresh_metrics().await.live_timers, 1);

        timeout(SAFETY, &mut s).await?;
        assert_eq!(Instant::now(), deadline);
        assert!(s.is_elapsed());
        assert_eq!(fresh_metrics().await.live_timers, 0);
        Ok(())
    })
}

#[test]
fn reset_moves_an_elapsed_sleep_into_the_future() -> io::Result<()> {
    paused().block_on(async {
        let mut s = sleep(Duration::ZERO);
        timeout(SAFETY, &mut s).await?;
        assert!(s.is_elapsed());

        let deadline = Instant::now() + Duration::from_millis(10);
        s.reset(deadline);
        assert_eq!(s.deadline(), deadline);
        assert!(!s.is_elapsed());
        timeout(SAFETY, &mut s).await?;
        assert_eq!(Instant::now(), deadline);
        assert!(s.is_elapsed());
        Ok(())
    })
}

#[test]
fn reset_after_moves_the_deadline_that_long_after_now_earlier_or_later() -> io::Result<()> {
    paused().block_on(async {
        let mut s = sleep(Duration::from_secs(3600));
        assert!(poll_once(&mut s).is_pending());
        advance(Duration::from_secs(1)).await;
        let now = Instant::now();
        s.reset_after(Duration::from_millis(20));
        assert_eq!(s.deadline(), now + Duration::from_millis(20));
        s.reset_after(Duration::from_secs(30));
        assert_eq!(s.deadline(), now + Duration::from_secs(30));
        timeout(SAFETY, &mut s).await?;
        assert_eq!(Instant::now(), now + Duration::from_secs(30));
        assert_eq!(fresh_metrics().await.live_timers, 0);
        Ok(())
    })
}

/// The lesson's `last_seen`: an idle timer moved on before every poll, as
/// a connection does for each line, keeps one timer and one heap entry,
/// and completes at the last deadline it was given, never an earlier one.
#[test]
fn an_idle_timer_moved_on_before_each_poll_stays_one_timer_and_one_heap_entry() -> io::Result<()> {
    const IDLE: Duration = Duration::from_secs(30);
    paused().block_on(async {
        let mut idle = sleep(IDLE);
        assert!(poll_once(&mut idle).is_pending());
        let first = idle.deadline();
        for _ in 0..1_000 {
            advance(Duration::from_millis(7)).await;
            idle.reset_after(IDLE);
            assert!(poll_once(&mut idle).is_pending());
            let m = fresh_metrics().await;
            assert_eq!((m.live_timers, m.timer_heap_len), (1, 1));
        }
        let last = idle.deadline();
        assert_eq!(last, first + Duration::from_millis(7_000));
        // The heap entry is still the first deadline's; reaching it moves
        // the entry on, and the sleep ends at the last deadline only.
        timeout(SAFETY, &mut idle).await?;
        assert_eq!(Instant::now(), last);
        assert_eq!(fresh_metrics().await.live_timers, 0);
        Ok(())
    })
}

#[test]
fn sleep_until_a_past_deadline_is_ready_on_the_first_poll() -> io::Result<()> {
    ioloop::block_on(async {
        let past = Instant::now();
        let mut s = sleep_until(past);
        assert!(s.is_elapsed());
        assert!(poll_once(&mut s).is_ready());
        // Ready without arming anything.
        assert_eq!(fresh_metrics().await.live_timers, 0);

        let mut zero = sleep(Duration::ZERO);
        assert!(poll_once(&mut zero).is_ready());
        Ok(())
    })
}

#[test]
fn is_elapsed_turns_true_at_the_deadline_and_not_before() -> io::Result<()> {
    paused().block_on(async {
        let mut s = sleep(Duration::from_millis(20));
        let deadline = s.deadline();
        advance(Duration::from_millis(20) - Duration::from_nanos(1)).await;
        assert!(!s.is_elapsed());
        timeout(SAFETY, &mut s).await?;
        assert!(s.is_elapsed());
        assert_eq!(Instant::now(), deadline);

        let far = sleep(Duration::from_secs(3600));
        assert!(!far.is_elapsed());
        Ok(())
    })
}

#[test]
fn aborting_a_sleeping_task_disarms_its_timer() -> io::Result<()> {
    ioloop::block_on(async {
        let task = ioloop::spawn(sleep(Duration::from_secs(3600)));
        yield_now().await;
        assert_eq!(fresh_metrics().await.live_timers, 1);
        task.abort();
        let err = timeout(SAFETY, task).await?.unwrap_err();
        assert!(err.is_cancelled());
        assert_eq!(fresh_metrics().await.live_timers, 0);
        Ok(())
    })
}

#[test]
fn a_duration_too_large_for_the_clock_saturates() -> io::Result<()> {
    ioloop::block_on(async {
        let mut s = sleep(Duration::MAX);
        assert!(s.deadline() > Instant::now() + Duration::from_secs(86_400 * 365));
        assert!(!s.is_elapsed());
        assert!(poll_once(&mut s).is_pending());
        assert_eq!(fresh_metrics().await.live_timers, 1);
        drop(s);
        assert_eq!(fresh_metrics().await.live_timers, 0);
        assert_eq!(timeout(Duration::MAX, async { 3 }).await, Ok(3));
        Ok(())
    })
}

/// A waker that counts its wakes.
#[derive(Default)]
struct CountingWaker(AtomicU64);

impl Wake for CountingWaker {
    fn wake(self: Arc<Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// BUG (runtime/src/core.rs:211-212): `Core::shutdown` is documented to
/// wake "everyone still waiting on a timer or an I/O source" (core.rs:183,
/// and `Runtime`'s docs, runtime.rs:36: "wakes anything still waiting on its
/// timers or sources"), and does so for I/O sources, but for timers it
/// takes the wakers out of the heap and drops them unwoken:
/// `let timer_wakers = self.timers.borrow_mut().clear(); drop(timer_wakers);`.
/// A waiter that is not one of the runtime's own tasks (tasks are dropped
/// anyway) is left parked forever. Here the waiter is a plain counting
/// waker, the way the reactor test checks the same promise for sources.
#[test]
fn dropping_the_runtime_wakes_a_timer_waiter() -> io::Result<()> {
    let rt = Runtime::new()?;
    let wakes = Arc::new(CountingWaker::default());
    let waker = Waker::from(wakes.clone());
    // Made outside, so it outlives `block_on` still armed.
    let mut s = sleep(Duration::from_secs(3600));
    rt.block_on(async {
        let mut cx = Context::from_waker(&waker);
        assert!(Pin::new(&mut s).poll(&mut cx).is_pending());
        assert_eq!(fresh_metrics().await.live_timers, 1);
    });
    drop(rt);
    assert_eq!(
        wakes.0.load(Ordering::SeqCst),
        1,
        "the timer's waiter was not woken"
    );
    drop(s);
    Ok(())
}

/// A sleep shared between the task that waits on it and one that resets it.
type SharedSleep = Arc<std::sync::Mutex<ioloop::time::Sleep>>;

/// Waits on `sleep` from a task of its own; returns when it completed.
fn wait_in_a_task(sleep: &SharedSleep) -> ioloop::JoinHandle<Instant> {
    let sleep = sleep.clone();
    ioloop::spawn(async move {
        std::future::poll_fn(|cx| Pin::new(&mut *sleep.lock().unwrap()).poll(cx)).await;
        Instant::now()
    })
}

/// Item 6 of the correctness issue: a task waiting on a 10 s sleep, reset
/// to 10 ms while it is parked, used to wake at 10 s.
#[test]
fn reset_while_the_task_is_parked_wakes_it_at_the_earlier_deadline() -> io::Result<()> {
    paused().block_on(async {
        let shared: SharedSleep = Arc::new(std::sync::Mutex::new(sleep(Duration::from_secs(3600))));
        let waiter = wait_in_a_task(&shared);
        yield_now().await; // the waiter arms the hour-long timer and parks
        let deadline = Instant::now() + Duration::from_millis(10);
        shared.lock().unwrap().reset(deadline);
        // SAFETY (the constant) is far below an hour: only the reset wakes it.
        let woke = timeout(SAFETY, waiter).await?.unwrap();
        assert_eq!(woke, deadline);
        Ok(())
    })
}

#[test]
fn reset_while_the_task_is_parked_wakes_it_at_the_later_deadline_not_before() -> io::Result<()> {
    paused().block_on(async {
        let shared: SharedSleep = Arc::new(std::sync::Mutex::new(sleep(Duration::from_millis(5))));
        let waiter = wait_in_a_task(&shared);
        yield_now().await;
        let deadline = Instant::now() + Duration::from_millis(40);
        shared.lock().unwrap().reset(deadline);
        let woke = timeout(SAFETY, waiter).await?.unwrap();
        assert_eq!(woke, deadline);
        assert_eq!(fresh_metrics().await.live_timers, 0);
        Ok(())
    })
}

/// The guide's table of differences: a sleep moved later by another task
/// keeps its timer until its own next poll, so the task parked on it is
/// polled once at the old deadline, finds it pending, and waits on (tokio's
/// waiter is woken at the new deadline only: two polls, not three).
#[test]
fn a_sleep_moved_later_by_another_task_polls_its_waiter_once_at_the_old_deadline() -> io::Result<()>
{
    paused().block_on(async {
        let shared: SharedSleep = Arc::new(std::sync::Mutex::new(sleep(Duration::from_millis(5))));
        let polls = Arc::new(AtomicU64::new(0));
        let waiter = {
            let (shared, polls) = (shared.clone(), polls.clone());
            ioloop::spawn(async move {
                std::future::poll_fn(|cx| {
                    polls.fetch_add(1, Ordering::Relaxed);
                    Pin::new(&mut *shared.lock().unwrap()).poll(cx)
                })
                .await;
                Instant::now()
            })
        };
        yield_now().await; // the waiter arms the 5 ms timer and parks
        let start = Instant::now();
        shared
            .lock()
            .unwrap()
            .reset_after(Duration::from_millis(40));
        let woke = timeout(SAFETY, waiter).await?.unwrap();
        assert_eq!(woke, start + Duration::from_millis(40));
        // Armed, woken at 5 ms for nothing, completed at 40 ms.
        assert_eq!(polls.load(Ordering::Relaxed), 3);
        assert_eq!(fresh_metrics().await.live_timers, 0);
        Ok(())
    })
}

/// Item 12 of the correctness issue: `sleep` needs no runtime to be
/// created, only to be polled (tokio panics at creation).
#[test]
fn sleep_made_outside_a_runtime_runs_inside_one_and_panics_polled_outside() {
    let made_outside = sleep(Duration::from_millis(1));
    let rt = Runtime::new().unwrap();
    rt.block_on(made_outside);
    let mut stray = sleep(Duration::from_secs(1));
    let panic = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| poll_once(&mut stray)))
        .unwrap_err();
    let message = panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_default();
    assert!(message.contains("outside an ioloop runtime"), "{message}");
}

/// Item 12: `is_elapsed` says whether the deadline has passed, not whether
/// the sleep has fired (tokio's meaning): a sleep never polled is elapsed
/// once its deadline is past.
#[test]
fn is_elapsed_means_the_deadline_passed_not_that_the_timer_fired() {
    let never_polled = sleep_until(Instant::now());
    assert!(never_polled.is_elapsed());
    let later = sleep(Duration::from_secs(3600));
    assert!(!later.is_elapsed());
}

/// Issue 28, item 8: a sleep a task is parked on, moved earlier from a
/// thread that is not the loop's, used to leave the task parked until the
/// old deadline (the timer in the loop's heap could not be reached from
/// there): 60 s here, where tokio wakes it at the new one.
#[test]
fn sleep_reset_earlier_from_another_thread_wakes_the_waiter() -> io::Result<()> {
    testkit::util::within(Duration::from_secs(30), || {
        let rt = Runtime::new()?;
        rt.block_on(async {
            let shared: SharedSleep =
                Arc::new(std::sync::Mutex::new(sleep(Duration::from_secs(60))));
            let waiter = wait_in_a_task(&shared);
            yield_now().await; // the waiter arms the minute-long timer and parks
            assert_eq!(fresh_metrics().await.live_timers, 1);
            let start = Instant::now();
            let resetter = {
                let shared = shared.clone();
                std::thread::spawn(move || {
                    let deadline = Instant::now() + Duration::from_millis(50);
                    shared.lock().unwrap().reset(deadline);
                })
            };
            // Only a safety net: far below the old deadline, far above the new.
            let woke = timeout(Duration::from_secs(10), waiter).await?.unwrap();
            resetter.join().unwrap();
            assert!(
                woke - start >= Duration::from_millis(50),
                "{:?}",
                woke - start
            );
            assert_eq!(fresh_metrics().await.live_timers, 0);
            Ok(())
        })
    })
}

/// Item 8 on a paused clock: the reset comes from a blocking job, which
/// holds auto-advance until it is done, so the clock must stop at the new
/// deadline, not jump to the old one.
#[test]
fn sleep_reset_earlier_from_another_thread_wakes_the_waiter_on_a_paused_clock() -> io::Result<()> {
    testkit::util::within(Duration::from_secs(30), || {
        paused().block_on(async {
            let shared: SharedSleep =
                Arc::new(std::sync::Mutex::new(sleep(Duration::from_secs(3600))));
            let waiter = wait_in_a_task(&shared);
            yield_now().await;
            let deadline = Instant::now() + Duration::from_millis(50);
            let moved = shared.clone();
            ioloop::spawn_blocking(move || moved.lock().unwrap().reset(deadline))
                .await
                .unwrap();
            let woke = timeout(SAFETY, waiter).await?.unwrap();
            assert_eq!(woke, deadline);
            Ok(())
        })
    })
}

/// Item 8, the other variants: `reset_after` from another thread, and a
/// reset from the loop thread of another runtime, whose own heap must not
/// be taken for the sleep's.
#[test]
fn sleep_reset_after_from_another_runtimes_loop_wakes_the_waiter() -> io::Result<()> {
    testkit::util::within(Duration::from_secs(30), || {
        let rt = Runtime::new()?;
        rt.block_on(async {
            let shared: SharedSleep =
                Arc::new(std::sync::Mutex::new(sleep(Duration::from_secs(60))));
            let waiter = wait_in_a_task(&shared);
            yield_now().await;
            let start = Instant::now();
            let resetter = {
                let shared = shared.clone();
                std::thread::spawn(move || {
                    Runtime::new().unwrap().block_on(async {
                        shared
                            .lock()
                            .unwrap()
                            .reset_after(Duration::from_millis(20));
                    });
                })
            };
            let woke = timeout(Duration::from_secs(10), waiter).await?.unwrap();
            resetter.join().unwrap();
            assert!(
                woke - start >= Duration::from_millis(20),
                "{:?}",
                woke - start
            );
            Ok(())
        })
    })
}

/// Wakes counted, and whether the waker is still held (its `Arc`'s count).
#[derive(Default)]
struct Counted(AtomicU64);

impl Wake for Counted {
    fn wake(self: Arc<Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// Polls `shared` once on a blocking-pool thread, off its runtime's loop,
/// with `counted`'s waker.
async fn poll_off_the_loop(shared: &SharedSleep, counted: &Arc<Counted>) -> std::task::Poll<()> {
    let (off_loop, counted) = (shared.clone(), counted.clone());
    ioloop::spawn_blocking(move || {
        let waker = Waker::from(counted);
        Pin::new(&mut *off_loop.lock().unwrap()).poll(&mut Context::from_waker(&waker))
    })
    .await
    .unwrap()
}

/// A sleep polled first off its runtime's loop (a blocking job: a remote
/// timer holds that poll's waker), then on the loop: the remote timer is
/// cancelled as the loop's own is armed, so the first waker is let go at
/// once and never woken, even when the deadline passes.
#[test]
fn a_sleep_polled_off_the_loop_then_on_it_lets_the_first_waker_go() -> io::Result<()> {
    testkit::util::within(Duration::from_secs(30), || {
        paused().block_on(async {
            let shared: SharedSleep =
                Arc::new(std::sync::Mutex::new(sleep(Duration::from_millis(50))));
            let counted = Arc::new(Counted::default());
            assert!(poll_off_the_loop(&shared, &counted).await.is_pending());
            assert_eq!(Arc::strong_count(&counted), 2, "the remote timer holds it");
            let woke = timeout(SAFETY, wait_in_a_task(&shared)).await?.unwrap();
            assert!(woke >= Instant::now() - Duration::from_millis(1));
            assert_eq!(
                counted.0.load(Ordering::SeqCst),
                0,
                "the first waker was never woken"
            );
            assert_eq!(Arc::strong_count(&counted), 1, "and it was let go");
            Ok(())
        })
    })
}

/// A sleep polled twice off its runtime's loop, by two wakers in turn,
/// keeps one remote timer and points it at the second waker: the first is
/// let go at once, and when the deadline passes the second alone is woken,
/// once, and the loop's heap held one timer, not two.
#[test]
fn a_sleep_polled_off_the_loop_twice_keeps_one_timer_for_the_latest_waker() -> io::Result<()> {
    testkit::util::within(Duration::from_secs(30), || {
        paused().block_on(async {
            let shared: SharedSleep =
                Arc::new(std::sync::Mutex::new(sleep(Duration::from_millis(50))));
            let (first, second) = (Arc::new(Counted::default()), Arc::new(Counted::default()));
            for counted in [&first, &second] {
                assert!(poll_off_the_loop(&shared, counted).await.is_pending());
            }
            assert_eq!(Arc::strong_count(&first), 1, "the first waker was let go");
            assert_eq!(fresh_metrics().await.live_timers, 1, "one remote timer");
            sleep(Duration::from_millis(100)).await;
            assert_eq!(first.0.load(Ordering::SeqCst), 0);
            assert_eq!(second.0.load(Ordering::SeqCst), 1, "the latest waker, once");
            Ok(())
        })
    })
}

/// A sleep polled on one runtime's loop, then on another's: its timer in
/// the first runtime's heap is taken out (by a job that runtime's loop
/// runs), not left there until its deadline an hour away.
#[test]
fn a_sleep_moved_to_another_runtimes_loop_leaves_no_timer_behind() -> io::Result<()> {
    let (first, second) = (Runtime::new()?, Runtime::new()?);
    let mut moving = Box::pin(sleep(Duration::from_secs(3600)));
    first.block_on(async {
        assert!(poll_once(&mut moving).is_pending());
        assert_eq!(fresh_metrics().await.live_timers, 1);
    });
    second.block_on(async {
        assert!(poll_once(&mut moving).is_pending());
        assert_eq!(fresh_metrics().await.live_timers, 1);
    });
    first.block_on(async {
        // One tick runs the removal the second loop sent; one more
        // publishes the count.
        yield_now().await;
        assert_eq!(
            fresh_metrics().await.live_timers,
            0,
            "the first runtime's timer is gone"
        );
    });
    Ok(())
}

/// Issue 30: `ioloop::time` had no `Duration`, so every program using it
/// imported std's as well; it is std's own type, re-exported.
#[test]
fn ioloop_time_names_the_duration_its_functions_take() {
    use ioloop::time::{Duration, Instant};
    let waited = ioloop::block_on(async {
        let start = Instant::now();
        ioloop::time::sleep(Duration::from_millis(1)).await;
        start.elapsed()
    });
    let same: std::time::Duration = waited;
    assert!(same >= Duration::from_millis(1));
}
