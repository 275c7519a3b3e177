//! Tasks at their edges: a task that panics while holding a registered
//! socket and an armed timer releases both and disturbs no one; `block_on`
//! where it cannot work panics with a message, never deadlocks; a blocking
//! job that never returns does not hold up `shutdown_timeout`; and
//! `spawn_blocking` after shutdown resolves at once, cancelled, instead of
//! hanging.
//!
//! Every test runs under a watchdog (`within`): the failure mode of most
//! of these is a hang.

use std::future::{Future, poll_fn};
use std::io::{self, Read};
use std::net::TcpListener as StdTcpListener;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::task::Poll;
use std::time::Duration;

use ioloop::time::Instant;

use ioloop::net::TcpStream;
use ioloop::time::{sleep, timeout};
use ioloop::{Handle, JoinHandle, Metrics, Runtime, yield_now};
use testkit::util;
use util::within;

const SAFETY: Duration = Duration::from_secs(30);

/// The runtime's counters once the tasks queued before the call have run.
async fn fresh_metrics() -> Metrics {
    yield_now().await;
    yield_now().await;
    Handle::current().metrics()
}

#[test]
fn a_panicking_task_releases_its_socket_and_timer_and_others_go_on() -> io::Result<()> {
    within(SAFETY, || {
        let std_listener = StdTcpListener::bind("127.0.0.1:0")?;
        let addr = std_listener.local_addr()?;
        ioloop::block_on(async move {
            let before = fresh_metrics().await;
            // A bystander with a timer of its own, due only once the checks
            // below are done (a fixed delay could run out first on a loaded
            // machine): it is moved to 20 ms from then.
            let bystander_sleep = Arc::new(std::sync::Mutex::new(sleep(Duration::from_secs(3600))));
            let bystander = ioloop::spawn({
                let timer = bystander_sleep.clone();
                async move {
                    poll_fn(|cx| Pin::new(&mut *timer.lock().unwrap()).poll(cx)).await;
                    Instant::now()
                }
            });
            let gate = util::signal();
            let doomed = {
                let gate = gate.clone();
                ioloop::spawn(async move {
                    let stream = TcpStream::connect(addr).await?;
                    let mut timer = sleep(Duration::from_secs(3600));
                    // Armed: polled once, long before its deadline.
                    let armed = poll_fn(|cx| Poll::Ready(Pin::new(&mut timer).poll(cx))).await;
                    assert!(armed.is_pending());
                    gate.wait().await;
                    let _held = (&stream, &timer);
                    panic!("the task panics holding a socket and a timer");
                    #[allow(unreachable_code)]
                    io::Result::Ok(())
                })
            };
            // The doomed task connects on its first poll: wait for that
            // without blocking the loop it runs on.
            std_listener.set_nonblocking(true)?;
            let mut far_end = loop {
                match std_listener.accept() {
                    Ok((far_end, _)) => break far_end,
                    Err(err) if err.kind() == io::ErrorKind::WouldBlock => yield_now().await,
                    Err(err) => return Err(err),
                }
            };
            far_end.set_nonblocking(false)?;
            let m = fresh_metrics().await;
            assert_eq!(m.io_sources, before.io_sources + 1, "{m:?}");
            assert_eq!(m.live_timers, before.live_timers + 2, "{m:?}");

            gate.set();
            let err = timeout(SAFETY, doomed)
                .await?
                .expect_err("the task panicked");
            assert!(err.is_panic(), "{err}");
            let m = fresh_metrics().await;
            assert_eq!(
                m.io_sources, before.io_sources,
                "the socket stayed registered"
            );
            assert_eq!(
                m.live_timers,
                before.live_timers + 1,
                "the timer stayed armed"
            );
            // Closed, too: the far end reads end of file.
            far_end.set_read_timeout(Some(SAFETY))?;
            assert_eq!(far_end.read(&mut [0; 8])?, 0);

            // The bystander's timer fires as due; the loop takes new work.
            let due = Instant::now() + Duration::from_millis(20);
            bystander_sleep.lock().unwrap().reset(due);
            let fired = bystander.await.expect("the bystander panicked");
            assert!(fired >= due, "{:?} early", due - fired);
            assert_eq!(ioloop::spawn(async { 7 }).await.expect("a new task"), 7);
            assert_eq!(fresh_metrics().await.live_timers, before.live_timers);
            io::Result::Ok(())
        })
    })
}

/// The message of a task's panic.
async fn panic_message<T: Send + 'static>(task: JoinHandle<T>) -> String {
    let err = match task.await {
        Ok(_) => panic!("the task did not panic"),
        Err(err) => err,
    };
    assert!(err.is_panic(), "{err}");
    util::panic_text(&*err.into_panic())
}

#[test]
fn block_on_where_it_cannot_run_panics_clearly_and_never_deadlocks() {
    // tests/rt/block_on.rs covers ioloop::block_on in a task and
    // Runtime::block_on in a main future; these are the other ways in.
    within(SAFETY, || {
        let rt = Arc::new(Runtime::new().unwrap());
        let other = Arc::new(Runtime::new().unwrap());
        let (same, diff) = (rt.clone(), other.clone());
        rt.block_on(async move {
            // The runtime's own block_on, from one of its tasks.
            let msg = panic_message(ioloop::spawn(async move { same.block_on(async { 1 }) })).await;
            assert!(msg.contains("inside a running runtime"), "{msg}");
            // Another runtime's block_on, from a task of this one.
            let msg = panic_message(ioloop::spawn(async move { diff.block_on(async { 2 }) })).await;
            assert!(msg.contains("inside a running runtime"), "{msg}");
            // On a blocking-pool thread no loop runs: block_on works there.
            let n = ioloop::spawn_blocking(|| ioloop::block_on(async { 3 })).await;
            assert_eq!(n.expect("block_on on a pool thread"), 3);
            // And the loop goes on.
            sleep(Duration::from_millis(1)).await;
        });
        // Both runtimes are usable afterwards.
        assert_eq!(rt.block_on(async { 4 }), 4);
        assert_eq!(other.block_on(async { 5 }), 5);
    });
    // Outside any runtime, a destructor that calls block_on during
    // shutdown is refused too, and the shutdown completes.
    struct BlockOnDrop(Arc<AtomicBool>);
    impl Drop for BlockOnDrop {
        fn drop(&mut self) {
            let refused = catch_unwind(AssertUnwindSafe(|| ioloop::block_on(async {}))).is_err();
            self.0.store(refused, Ordering::SeqCst);
        }
    }
    let refused = Arc::new(AtomicBool::new(false));
    let r = refused.clone();
    within(SAFETY, move || {
        let rt = Runtime::new().unwrap();
        let guard = BlockOnDrop(r);
        drop(rt.spawn(async move {
            let _guard = guard;
            std::future::pending::<()>().await;
        }));
        rt.block_on(yield_now());
        drop(rt);
    });
    assert!(
        refused.load(Ordering::SeqCst),
        "block_on ran inside a shutting-down runtime"
    );
}

#[test]
fn a_blocking_job_that_never_returns_does_not_hold_up_shutdown_timeout() {
    const GRACE: Duration = Duration::from_millis(200);
    // "Never" is until the end of the test, so its thread exits.
    let (release, never) = mpsc::channel::<()>();
    let never = Arc::new(Mutex::new(never));
    let stuck = |never: Arc<Mutex<mpsc::Receiver<()>>>| {
        move || {
            let _ = never.lock().unwrap().recv();
        }
    };
    let (report, elapsed, waiter, idle_report) = within(SAFETY, {
        let never = never.clone();
        move || {
            // A task awaiting the stuck job: shutdown waits the grace out,
            // then cancels the task; the job cannot be cancelled.
            let rt = Runtime::new().unwrap();
            let job = rt.handle().spawn_blocking(stuck(never.clone()));
            let waiter = rt.spawn(job);
            rt.block_on(sleep(Duration::from_millis(10)));
            let start = Instant::now();
            let report = rt.shutdown_timeout(GRACE);
            let elapsed = start.elapsed();
            // No task waiting on it: shutdown does not wait at all.
            let rt = Runtime::new().unwrap();
            let job = rt.handle().spawn_blocking(stuck(never));
            rt.block_on(sleep(Duration::from_millis(10)));
            let idle_report = rt.shutdown_timeout(Duration::from_secs(3600));
            drop(job);
            (report, elapsed, waiter, idle_report)
        }
    });
    println!(
        "shutdown_timeout({GRACE:?}) with a stuck blocking job returned after {elapsed:?}: {report:?}"
    );
    assert!(elapsed >= GRACE, "{elapsed:?}");
    assert!(elapsed < GRACE + Duration::from_secs(5), "{elapsed:?}");
    assert!(!report.finished);
    assert_eq!(report.cancelled_tasks, 1);
    assert_eq!(report.blocking_still_running, 1);
    assert!(waiter.is_finished());
    let waited = within(SAFETY, move || ioloop::block_on(waiter));
    assert!(waited.expect_err("the waiter was cancelled").is_cancelled());
    assert!(idle_report.finished, "{idle_report:?}");
    assert_eq!(idle_report.blocking_still_running, 1);
    drop(release);
}

#[test]
fn spawn_blocking_after_shutdown_is_cancelled_at_once_not_a_hang() {
    // From a handle that outlived its runtime.
    let rt = Runtime::new().unwrap();
    let handle = rt.handle().clone();
    drop(rt);
    let ran = Arc::new(AtomicBool::new(false));
    let r = ran.clone();
    let job = handle.spawn_blocking(move || r.store(true, Ordering::SeqCst));
    assert!(
        job.is_finished(),
        "the job is pending on a runtime that is gone"
    );
    let err = within(SAFETY, move || ioloop::block_on(job)).expect_err("the job was refused");
    assert!(err.is_cancelled(), "{err}");

    // From a destructor that runs during shutdown.
    let late: Arc<Mutex<Option<JoinHandle<()>>>> = Arc::default();
    struct SpawnBlockingOnDrop(Arc<Mutex<Option<JoinHandle<()>>>>, Arc<AtomicBool>);
    impl Drop for SpawnBlockingOnDrop {
        fn drop(&mut self) {
            let ran = self.1.clone();
            *self.0.lock().unwrap() = Some(ioloop::spawn_blocking(move || {
                ran.store(true, Ordering::SeqCst);
            }));
        }
    }
    let rt = Runtime::new().unwrap();
    let guard = SpawnBlockingOnDrop(late.clone(), ran.clone());
    drop(rt.spawn(async move {
        let _guard = guard;
        std::future::pending::<()>().await;
    }));
    rt.block_on(yield_now());
    drop(rt);
    let job = late.lock().unwrap().take().expect("the destructor ran");
    assert!(job.is_finished());
    let err = within(SAFETY, move || ioloop::block_on(job)).expect_err("the job was refused");
    assert!(err.is_cancelled(), "{err}");
    assert!(
        !ran.load(Ordering::SeqCst),
        "a job refused at shutdown ran anyway"
    );
}

#[test]
fn the_metrics_of_a_sleeping_loop_are_current() {
    let rt = Arc::new(Runtime::new().unwrap());
    let handle = rt.handle().clone();
    let gate = util::signal();
    let done = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let loop_thread = {
        let (rt, gate, done) = (rt.clone(), gate.clone(), done.clone());
        std::thread::spawn(move || {
            rt.block_on(async move {
                for _ in 0..10 {
                    let done = done.clone();
                    drop(ioloop::spawn(async move {
                        done.fetch_add(1, Ordering::SeqCst);
                    }));
                }
                // The tasks finish in the next tick; then the loop sleeps.
                gate.wait().await;
            })
        })
    };
    within(SAFETY, move || {
        // Wait for the tasks to have run, then give the loop time to
        // finish the tick and fall asleep.
        while done.load(Ordering::SeqCst) < 10 {
            std::thread::yield_now();
        }
        std::thread::sleep(Duration::from_millis(100));
    });
    let m = handle.metrics();
    gate.set();
    loop_thread.join().unwrap();
    assert_eq!(m.live_tasks, 0, "ten finished tasks reported live: {m:?}");
}
