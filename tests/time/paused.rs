//! Virtual time: `pause`, `advance`, auto-advance, `start_paused`; and
//! `Instant`'s arithmetic, which its virtual readings go through.
//!
//! Every test here is bounded by real time with `util::within` (a paused
//! runtime's own `timeout` would be a virtual one, and fire at once), and
//! none depends on how fast the machine is: each checks an order, or a
//! virtual instant to the nanosecond.

use std::future::{pending, poll_fn};
use std::io;
use std::net::UdpSocket as StdUdpSocket;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Barrier, Mutex, mpsc};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use ioloop::net::UdpSocket;
use ioloop::time::{
    Instant, advance, interval, interval_at, pause, resume, sleep, sleep_until, timeout, timeout_at,
};
use ioloop::{Runtime, yield_now};
use testkit::{time_poll, util};
use time_poll::poll_once;

/// Real time a test may take at most: a safety net, never a measure.
const SAFETY: Duration = Duration::from_secs(30);

/// A runtime whose clock starts paused.
fn paused_runtime() -> Runtime {
    Runtime::builder().start_paused(true).build().unwrap()
}

/// Runs `future` on a paused runtime, on a thread of its own, within
/// `SAFETY` of real time.
fn run_paused<T: Send + 'static, F: std::future::Future<Output = T>>(
    future: impl FnOnce() -> F + Send + 'static,
) -> T {
    util::within(SAFETY, move || paused_runtime().block_on(future()))
}

const HOUR: Duration = Duration::from_secs(3600);

#[test]
fn an_hours_sleeps_take_no_wall_time_and_wake_in_deadline_order() {
    let wall = std::time::Instant::now();
    let woke = run_paused(|| async {
        let start = Instant::now();
        let woke: Arc<Mutex<Vec<(usize, Duration)>>> = Arc::default();
        let durations = [
            HOUR,
            Duration::from_secs(10),
            HOUR / 2,
            Duration::ZERO,
            HOUR / 60,
        ];
        let tasks: Vec<_> = durations
            .iter()
            .enumerate()
            .map(|(i, &duration)| {
                let woke = woke.clone();
                ioloop::spawn(async move {
                    sleep(duration).await;
                    woke.lock().unwrap().push((i, start.elapsed()));
                })
            })
            .collect();
        for task in tasks {
            task.await.unwrap();
        }
        assert_eq!(start.elapsed(), HOUR);
        woke.lock().unwrap().clone()
    });
    // In deadline order, each exactly at its deadline on the virtual clock.
    assert_eq!(
        woke,
        [
            (3, Duration::ZERO),
            (1, Duration::from_secs(10)),
            (4, HOUR / 60),
            (2, HOUR / 2),
            (0, HOUR)
        ]
    );
    assert!(
        wall.elapsed() < Duration::from_secs(5),
        "{:?}",
        wall.elapsed()
    );
}

#[test]
fn advance_steps_an_interval_tick_by_tick() {
    run_paused(|| async {
        let period = Duration::from_millis(10);
        let start = Instant::now();
        let mut every = interval(period);
        let mut cx = Context::from_waker(Waker::noop());
        // The first tick is at once.
        assert_eq!(every.poll_tick(&mut cx), Poll::Ready(start));
        for n in 1..=5u32 {
            let due = start + period * n;
            advance(period - Duration::from_nanos(1)).await;
            assert_eq!(every.poll_tick(&mut cx), Poll::Pending, "tick {n} early");
            advance(Duration::from_nanos(1)).await;
            assert_eq!(Instant::now(), due);
            assert_eq!(every.poll_tick(&mut cx), Poll::Ready(due), "tick {n}");
            assert_eq!(every.poll_tick(&mut cx), Poll::Pending, "tick {n} twice");
        }
        // A jump over several ticks: the default policy skips the missed ones.
        advance(period * 3).await;
        assert_eq!(every.poll_tick(&mut cx), Poll::Ready(start + period * 6));
        assert_eq!(
            poll_fn(|cx| every.poll_tick(cx)).await,
            start + period * 9,
            "auto-advance to the next tick on the grid"
        );
        assert_eq!(Instant::now(), start + period * 9);
    });
}

#[test]
fn instant_now_moves_by_exactly_what_advance_says_and_not_by_itself() {
    run_paused(|| async {
        let start = Instant::now();
        // Real time passes; the paused clock does not.
        std::thread::sleep(Duration::from_millis(5));
        yield_now().await;
        assert_eq!(Instant::now(), start);
        advance(Duration::from_millis(1500)).await;
        assert_eq!(Instant::now() - start, Duration::from_millis(1500));
        advance(Duration::ZERO).await;
        assert_eq!(Instant::now() - start, Duration::from_millis(1500));
        advance(Duration::from_nanos(7)).await;
        assert_eq!(start.elapsed(), Duration::from_nanos(1_500_000_007));
        // A blocking job of the runtime reads the same clock.
        let seen = ioloop::spawn_blocking(Instant::now).await.unwrap();
        assert_eq!(seen, Instant::now());
        // Shown as the std `Instant` it reads as, virtual or not.
        let shown = format!("{start:?}");
        assert_eq!(shown, format!("{:?}", start.into_std()));
        assert!(shown.starts_with("Instant {"), "{shown}");
    });
}

/// A paused loop that jumps its clock polls the OS with a zero timeout,
/// never sleeping in it, so it stays awake: another thread's spawns while
/// it jumps, 2,000 of them, are handed in without one write to its
/// eventfd (`poller_wakeups` stays 0). Parking for those polls would have
/// that thread wake a loop that was not asleep.
#[test]
fn a_paused_loop_jumping_its_clock_is_never_woken_from_another_thread() {
    run_paused(|| async {
        let handle = ioloop::Handle::current();
        let done = Arc::new(AtomicBool::new(false));
        let spawner = std::thread::spawn({
            let done = done.clone();
            move || {
                for _ in 0..2_000 {
                    drop(handle.spawn(async {}));
                    // Paced, so the loop goes idle (and jumps) in between.
                    std::thread::sleep(Duration::from_micros(20));
                }
                done.store(true, Ordering::Release);
            }
        });
        // A sleep always pending: every idle moment of the loop is a jump.
        while !done.load(Ordering::Acquire) {
            sleep(Duration::from_millis(1)).await;
        }
        spawner.join().unwrap();
        let metrics = ioloop::Handle::current().metrics();
        assert_eq!(metrics.poller_wakeups, 0, "{metrics:?}");
    });
}

/// `Instant`'s arithmetic is std's, checked and unchecked, each way: a
/// sum or difference that fits is exact, one that does not is `None` (or
/// saturates, where the name says so).
#[test]
fn instant_arithmetic_is_exact_and_checked_both_ways() {
    let std_now = std::time::Instant::now();
    let now = Instant::from_std(std_now);
    let second = Duration::from_secs(1);
    let later = now.checked_add(second).expect("a second later fits");
    let earlier = now.checked_sub(second).expect("a second earlier fits");
    assert_eq!(later.into_std(), std_now + second);
    assert_eq!(earlier.into_std(), std_now - second);
    assert_eq!((later, earlier), (now + second, now - second));
    assert_eq!(later - earlier, second * 2);
    assert_eq!(later.duration_since(earlier), second * 2);
    assert_eq!(earlier.checked_duration_since(later), None);
    assert_eq!(earlier.saturating_duration_since(later), Duration::ZERO);
    assert_eq!(now.checked_add(Duration::MAX), None);
    assert_eq!(now.checked_sub(Duration::MAX), None);
    let (mut up, mut down) = (now, now);
    up += second;
    down -= second;
    assert_eq!((up, down), (later, earlier));
}

#[test]
fn timeout_elapses_on_the_virtual_clock() {
    let wall = std::time::Instant::now();
    run_paused(|| async {
        let start = Instant::now();
        let out = timeout(HOUR, pending::<()>()).await;
        assert!(out.is_err());
        assert_eq!(start.elapsed(), HOUR);

        // The inner future wins if it is done first, on the same clock.
        let out = timeout(HOUR, async {
            sleep(HOUR / 2).await;
            7
        })
        .await;
        assert_eq!(out, Ok(7));
        assert_eq!(start.elapsed(), HOUR + HOUR / 2);

        let deadline = Instant::now() + Duration::from_secs(90);
        assert!(timeout_at(deadline, pending::<()>()).await.is_err());
        assert_eq!(Instant::now(), deadline);
    });
    assert!(
        wall.elapsed() < Duration::from_secs(5),
        "{:?}",
        wall.elapsed()
    );
}

/// A datagram already queued in the kernel when the loop runs out of
/// tasks: the zero-timeout poll before the jump finds it, and the task
/// reading it runs before the clock moves.
#[test]
fn an_io_event_already_there_holds_auto_advance_back() {
    run_paused(|| async {
        let server = UdpSocket::bind("127.0.0.1:0").await?;
        let addr = server.local_addr()?;
        let start = Instant::now();
        let reader = ioloop::spawn(async move {
            let mut buf = [0; 16];
            let (n, _) = server.recv_from(&mut buf).await?;
            io::Result::Ok((buf[..n].to_vec(), start.elapsed()))
        });
        // The reader finds nothing and waits for readiness.
        yield_now().await;
        yield_now().await;
        // Sent synchronously: on loopback the datagram is in the reader's
        // queue when `send_to` returns, before this task goes idle.
        let client = StdUdpSocket::bind("127.0.0.1:0")?;
        client.send_to(b"ping", addr)?;
        let sleeper = ioloop::spawn(async move {
            sleep(HOUR).await;
            start.elapsed()
        });
        let (data, read_at) = reader.await??;
        assert_eq!(data, b"ping");
        assert_eq!(read_at, Duration::ZERO, "the clock jumped before the read");
        assert_eq!(sleeper.await?, HOUR);
        io::Result::Ok(())
    })
    .unwrap();
}

/// The same with a stream: the bytes are there before the loop goes idle.
#[test]
fn bytes_waiting_on_a_socket_pair_hold_auto_advance_back() {
    run_paused(|| async {
        let (ours, theirs) = std::os::unix::net::UnixStream::pair()?;
        theirs.set_nonblocking(true)?;
        let theirs = ioloop::net::UnixStream::from_std(theirs)?;
        let start = Instant::now();
        let reader = ioloop::spawn(async move {
            let mut buf = [0; 4];
            let n = theirs.peek(&mut buf).await?;
            io::Result::Ok((n, start.elapsed()))
        });
        yield_now().await;
        yield_now().await;
        std::io::Write::write_all(&mut &ours, b"data")?;
        let sleeper = ioloop::spawn(async move {
            sleep(Duration::from_secs(5)).await;
            start.elapsed()
        });
        assert_eq!(reader.await??, (4, Duration::ZERO));
        assert_eq!(sleeper.await?, Duration::from_secs(5));
        io::Result::Ok(())
    })
    .unwrap();
}

/// A blocking job in flight may schedule work when it finishes: the clock
/// waits for it. Here the job waits on a channel that a plain thread
/// releases a while later, in real time; the timer must fire after the job
/// has finished, however long that takes. (If the clock did not wait, the
/// timer would fire at once, long before the release.)
#[test]
fn a_blocking_job_in_flight_holds_auto_advance_back() {
    let order = Arc::new(AtomicUsize::new(0));
    let (release, released) = mpsc::channel::<()>();
    let releaser = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(100));
        release.send(()).unwrap();
    });
    let order_in = order.clone();
    let (job_at, timer_at, timer_elapsed) = run_paused(move || async move {
        let order = order_in;
        let start = Instant::now();
        let job = {
            let order = order.clone();
            ioloop::spawn_blocking(move || {
                released.recv().unwrap();
                order.fetch_add(1, Ordering::SeqCst)
            })
        };
        let sleeper = {
            let order = order.clone();
            ioloop::spawn(async move {
                sleep(Duration::from_secs(1)).await;
                (order.fetch_add(1, Ordering::SeqCst), start.elapsed())
            })
        };
        let (timer_at, timer_elapsed) = sleeper.await.unwrap();
        (job.await.unwrap(), timer_at, timer_elapsed)
    });
    releaser.join().unwrap();
    assert_eq!(
        (job_at, timer_at),
        (0, 1),
        "the timer fired before the job finished"
    );
    assert_eq!(timer_elapsed, Duration::from_secs(1));
}

/// A job's result wakes a task; the task runs before the clock moves on.
#[test]
fn a_blocking_jobs_result_is_handled_before_the_clock_moves() {
    run_paused(|| async {
        let start = Instant::now();
        let (tx, rx) = mpsc::channel::<u32>();
        let feeder = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            tx.send(5).unwrap();
        });
        let sleeper = ioloop::spawn(async move {
            sleep(Duration::from_secs(30)).await;
            start.elapsed()
        });
        let got = ioloop::spawn_blocking(move || rx.recv().unwrap())
            .await
            .unwrap();
        assert_eq!((got, start.elapsed()), (5, Duration::ZERO));
        assert_eq!(sleeper.await.unwrap(), Duration::from_secs(30));
        feeder.join().unwrap();
    });
}

/// With nothing to do and no timer, a paused loop blocks in the OS as an
/// unpaused one does (no spin), until another thread wakes a task.
#[test]
fn a_paused_loop_with_no_timer_blocks_until_woken() {
    run_paused(|| async {
        let start = Instant::now();
        let before = ioloop::Handle::current().metrics().ticks;
        let flag: Arc<(AtomicBool, Mutex<Option<Waker>>)> = Arc::default();
        let other = {
            let flag = flag.clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(50));
                flag.0.store(true, Ordering::SeqCst);
                if let Some(waker) = flag.1.lock().unwrap().take() {
                    waker.wake();
                }
            })
        };
        poll_fn(|cx| {
            *flag.1.lock().unwrap() = Some(cx.waker().clone());
            if flag.0.load(Ordering::SeqCst) {
                Poll::Ready(())
            } else {
                Poll::Pending
            }
        })
        .await;
        other.join().unwrap();
        let ticks = ioloop::Handle::current().metrics().ticks - before;
        assert!(ticks < 20, "{ticks} ticks: the paused loop spun");
        assert_eq!(Instant::now(), start);
    });
}

/// Pausing is per runtime: another runtime, on another thread, keeps the
/// real clock while this one's is paused an hour ahead.
#[test]
fn pausing_one_runtime_leaves_another_on_the_real_clock() {
    let both = Arc::new(Barrier::new(2));
    let done = Arc::new(Barrier::new(2));
    let (b1, d1) = (both.clone(), done.clone());
    let paused = std::thread::spawn(move || {
        paused_runtime().block_on(async move {
            let start = Instant::now();
            advance(HOUR).await;
            // Hold the loop here while the other runtime checks its clock.
            b1.wait();
            d1.wait();
            assert_eq!(start.elapsed(), HOUR);
            sleep(HOUR).await;
            start.elapsed()
        })
    });
    let real = std::thread::spawn(move || {
        Runtime::new().unwrap().block_on(async move {
            both.wait();
            let before = std::time::Instant::now();
            let now = Instant::now().into_std();
            let after = std::time::Instant::now();
            assert!(before <= now && now <= after, "not the real clock");
            let start = Instant::now();
            sleep(Duration::from_millis(20)).await;
            assert!(before.elapsed() >= Duration::from_millis(20));
            assert!(start.elapsed() >= Duration::from_millis(20));
            assert!(start.elapsed() < HOUR);
            done.wait();
        })
    });
    real.join().unwrap();
    assert_eq!(paused.join().unwrap(), 2 * HOUR);
    // And outside any runtime, the real clock.
    let before = std::time::Instant::now();
    let now = Instant::now().into_std();
    assert!(before <= now && now <= std::time::Instant::now());
}

#[test]
fn a_sleep_made_before_pause_keeps_its_deadline_on_the_paused_clock() {
    util::within(SAFETY, || {
        Runtime::new().unwrap().block_on(async {
            let mut early = sleep(Duration::from_secs(10));
            let deadline = early.deadline();
            assert!(poll_once(&mut early).is_pending());
            pause();
            // The virtual clock starts at the real time of the call.
            assert!(Instant::now() < deadline);
            early.await;
            assert_eq!(Instant::now(), deadline);
        })
    });
}

#[test]
fn sleep_reset_and_is_elapsed_follow_the_paused_clock() {
    run_paused(|| async {
        let start = Instant::now();
        let mut nap = sleep(HOUR);
        assert!(poll_once(&mut nap).is_pending());
        nap.reset(start + Duration::from_secs(2));
        advance(Duration::from_secs(1)).await;
        assert!(!nap.is_elapsed());
        assert!(poll_once(&mut nap).is_pending());
        advance(Duration::from_secs(1)).await;
        assert!(nap.is_elapsed());
        assert!(poll_once(&mut nap).is_ready());

        // Reset later: auto-advance takes the clock there.
        nap.reset(start + Duration::from_secs(50));
        assert!(!nap.is_elapsed());
        (&mut nap).await;
        assert_eq!(Instant::now(), start + Duration::from_secs(50));

        let mut every = interval_at(start + HOUR, Duration::from_secs(1));
        assert_eq!(every.tick().await, start + HOUR);
        every.reset();
        assert_eq!(every.tick().await, start + HOUR + Duration::from_secs(1));
        sleep_until(start).await; // in the past: at once
        assert_eq!(Instant::now(), start + HOUR + Duration::from_secs(1));
    });
}

#[test]
fn resume_runs_the_clock_again_from_where_it_stood() {
    run_paused(|| async {
        let start = Instant::now();
        advance(HOUR).await;
        resume();
        // Never steps back to the real time.
        assert!(start.elapsed() >= HOUR);
        let before = Instant::now();
        sleep(Duration::from_millis(10)).await;
        assert!(before.elapsed() >= Duration::from_millis(10));
        assert!(start.elapsed() < HOUR + SAFETY);
        // And pauses again.
        pause();
        let at = Instant::now();
        sleep(HOUR).await;
        assert_eq!(Instant::now() - at, HOUR);
    });
}

#[test]
fn auto_advance_waits_for_ready_tasks() {
    run_paused(|| async {
        let start = Instant::now();
        let spins = Arc::new(AtomicUsize::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let busy = {
            let (spins, stop) = (spins.clone(), stop.clone());
            ioloop::spawn(async move {
                while !stop.load(Ordering::SeqCst) {
                    assert_eq!(
                        start.elapsed(),
                        Duration::ZERO,
                        "jumped while a task was ready"
                    );
                    spins.fetch_add(1, Ordering::SeqCst);
                    yield_now().await;
                }
            })
        };
        let sleeper = ioloop::spawn(async move {
            sleep(Duration::from_secs(1)).await;
            start.elapsed()
        });
        while spins.load(Ordering::SeqCst) < 1000 {
            yield_now().await;
        }
        stop.store(true, Ordering::SeqCst);
        busy.await.unwrap();
        assert_eq!(sleeper.await.unwrap(), Duration::from_secs(1));
    });
}

/// `#[ioloop::test(start_paused = true)]`: the body runs on a paused
/// runtime.
#[ioloop::test(start_paused = true)]
async fn the_test_attribute_starts_the_runtime_paused() {
    let wall = std::time::Instant::now();
    let start = Instant::now();
    sleep(24 * HOUR).await;
    assert_eq!(start.elapsed(), 24 * HOUR);
    assert!(wall.elapsed() < Duration::from_secs(5));
}

/// The panics: off a loop thread, twice, or on an unpaused clock.
#[test]
fn misuse_panics_with_a_clear_message() {
    let message = |f: Box<dyn FnOnce() + std::panic::UnwindSafe>| {
        util::panic_text(&*std::panic::catch_unwind(f).unwrap_err())
    };
    assert!(message(Box::new(pause)).contains("off a runtime's loop thread"));
    assert!(message(Box::new(resume)).contains("off a runtime's loop thread"));
    let advance_unpaused = message(Box::new(|| {
        Runtime::new()
            .unwrap()
            .block_on(advance(Duration::from_secs(1)))
    }));
    assert!(
        advance_unpaused.contains("the clock is not paused"),
        "{advance_unpaused}"
    );
    let twice = message(Box::new(|| paused_runtime().block_on(async { pause() })));
    assert!(twice.contains("already paused"), "{twice}");
    let resume_unpaused = message(Box::new(|| {
        Runtime::new().unwrap().block_on(async { resume() })
    }));
    assert!(resume_unpaused.contains("not paused"), "{resume_unpaused}");
    let in_a_job = message(Box::new(|| {
        paused_runtime().block_on(async { ioloop::spawn_blocking(resume).await.unwrap() })
    }));
    assert!(
        in_a_job.contains("off a runtime's loop thread"),
        "{in_a_job}"
    );
}

/// `shutdown_timeout`'s grace is wall time, even on a paused clock (issue
/// 28, bug 4: it was virtual time, which a busy task held still forever).
/// The clock still auto-advances during the grace: a sleeper on it
/// finishes at once, and only the stuck task is cancelled when the grace
/// has really passed.
#[test]
fn shutdown_timeout_counts_its_grace_in_wall_time_on_a_paused_clock() {
    const GRACE: Duration = Duration::from_millis(100);
    let wall = std::time::Instant::now();
    let report = util::within(SAFETY, || {
        let rt = paused_runtime();
        let stuck = rt.spawn(pending::<()>());
        let quick = rt.spawn(sleep(HOUR));
        drop((stuck, quick));
        rt.shutdown_timeout(GRACE)
    });
    assert!(!report.finished);
    assert_eq!(
        report.cancelled_tasks, 1,
        "the sleeper finished, the stuck one did not"
    );
    assert!(wall.elapsed() >= GRACE, "{:?}", wall.elapsed());
}

/// The paused clock shared by two tasks: one sleeps 10 s while the other
/// reads the clock, moves it 3 s (the sleeper sleeps on), resumes it and
/// pauses it again, then moves it the rest of the way: the sleeper wakes
/// then, not before: 10 s, and the real time the clock ran between
/// `resume` and `pause`, after it began.
#[test]
fn a_sleep_waited_on_while_another_task_moves_resumes_and_pauses_the_clock() {
    run_paused(|| async {
        let start = Instant::now();
        let sleeper = ioloop::spawn(async move {
            sleep(Duration::from_secs(10)).await;
            start.elapsed()
        });
        yield_now().await;
        advance(Duration::from_secs(3)).await;
        assert_eq!(Instant::now() - start, Duration::from_secs(3));
        yield_now().await;
        assert!(!sleeper.is_finished());
        resume();
        pause();
        assert!(Instant::now() - start >= Duration::from_secs(3));
        assert!(!sleeper.is_finished());
        advance(Duration::from_secs(7)).await;
        let slept = sleeper.await.unwrap();
        assert!(slept >= Duration::from_secs(10), "{slept:?}");
    });
}
