//! spawn_blocking: results, panics, cancellation, a thread that cannot be
//! started, and a loop that stays responsive while blocking work runs.

use std::io::{Read, Write};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Barrier, mpsc};
use std::time::Duration;

use ioloop::time::Instant;

use futures_util::io::{AsyncReadExt, AsyncWriteExt};
use testkit::util;
use util::within;

#[test]
fn a_thousand_blocking_calls_all_return_their_results() {
    let sum = ioloop::block_on(async {
        let jobs: Vec<_> = (0..1000u64)
            .map(|i| ioloop::spawn_blocking(move || i * 2))
            .collect();
        let mut sum = 0;
        for job in jobs {
            sum += job.await.unwrap();
        }
        sum
    });
    assert_eq!(sum, 999 * 1000);
}

#[test]
fn a_panicking_closure_yields_is_panic() {
    ioloop::block_on(async {
        let err = ioloop::spawn_blocking(|| -> u8 { panic!("blocking job fails") })
            .await
            .unwrap_err();
        assert!(err.is_panic());
        assert_eq!(util::panic_text(&*err.into_panic()), "blocking job fails");
        // The pool and the loop carry on.
        assert_eq!(ioloop::spawn_blocking(|| 5).await.unwrap(), 5);
    });
}

#[test]
fn idle_pool_threads_exit_after_the_keep_alive() {
    let rt = ioloop::Runtime::builder()
        .thread_keep_alive(Duration::from_millis(50))
        .build()
        .unwrap();
    rt.block_on(async {
        // Four jobs that wait for each other need four threads at once.
        let barrier = Arc::new(Barrier::new(4));
        let jobs: Vec<_> = (0..4)
            .map(|_| {
                let b = barrier.clone();
                ioloop::spawn_blocking(move || {
                    b.wait();
                })
            })
            .collect();
        for job in jobs {
            job.await.unwrap();
        }
        assert_eq!(ioloop::Handle::current().metrics().blocking_threads, 4);
        let handle = ioloop::Handle::current();
        ioloop::time::timeout(Duration::from_secs(20), async {
            while handle.metrics().blocking_threads > 0 {
                ioloop::time::sleep(Duration::from_millis(10)).await;
            }
        })
        .await
        .expect("idle threads never exited");
    });
}

#[test]
fn the_pool_never_grows_past_its_maximum() {
    let rt = ioloop::Runtime::builder()
        .max_blocking_threads(2)
        .build()
        .unwrap();
    let peak = Arc::new(AtomicUsize::new(0));
    let running = Arc::new(AtomicUsize::new(0));
    rt.block_on(async {
        let jobs: Vec<_> = (0..20)
            .map(|_| {
                let (peak, running) = (peak.clone(), running.clone());
                ioloop::spawn_blocking(move || {
                    let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                    peak.fetch_max(now, Ordering::SeqCst);
                    std::thread::sleep(Duration::from_millis(2));
                    running.fetch_sub(1, Ordering::SeqCst);
                })
            })
            .collect();
        for job in jobs {
            job.await.unwrap();
        }
        assert!(ioloop::Handle::current().metrics().blocking_threads <= 2);
    });
    assert!(peak.load(Ordering::SeqCst) <= 2);
}

#[test]
fn a_thread_that_cannot_start_is_an_error_for_the_caller_not_a_panic() {
    // A stack no machine can map: the OS refuses the thread.
    let rt = ioloop::Runtime::builder()
        .thread_stack_size(1 << 46)
        .build()
        .unwrap();
    rt.block_on(async {
        let err = ioloop::spawn_blocking(|| 1).await.unwrap_err();
        assert!(!err.is_panic() && !err.is_cancelled());
        let source = std::error::Error::source(&err).expect("the OS error");
        assert!(
            err.to_string().contains("no thread could be started"),
            "{err}"
        );
        assert!(!source.to_string().is_empty());
    });
}

#[test]
fn abort_before_start_means_never_run_and_after_start_drops_the_result() {
    let rt = ioloop::Runtime::builder()
        .max_blocking_threads(1)
        .build()
        .unwrap();
    let ran = Arc::new(AtomicUsize::new(0));
    let (release, gate) = mpsc::channel::<()>();
    let (started_tx, started) = mpsc::channel::<()>();
    rt.block_on(async {
        // Occupies the only thread until released.
        let first = ioloop::spawn_blocking(move || {
            started_tx.send(()).unwrap();
            gate.recv().unwrap();
            "first"
        });
        let r = ran.clone();
        let second = ioloop::spawn_blocking(move || {
            r.fetch_add(1, Ordering::SeqCst);
        });
        second.abort(); // still queued: it will never run
        started.recv().unwrap();
        first.abort(); // running: it finishes, its result is dropped
        release.send(()).unwrap();
        assert!(first.await.unwrap_err().is_cancelled());
        assert!(second.await.unwrap_err().is_cancelled());
        // The thread is free again and runs new work.
        assert_eq!(ioloop::spawn_blocking(|| 3).await.unwrap(), 3);
    });
    assert_eq!(ran.load(Ordering::SeqCst), 0);
}

#[test]
fn the_loop_sleeps_in_the_poller_while_blocking_work_runs() {
    let rt = ioloop::Runtime::new().unwrap();
    rt.block_on(async {
        let before = ioloop::Handle::current().metrics().ticks;
        ioloop::spawn_blocking(|| std::thread::sleep(Duration::from_millis(300)))
            .await
            .unwrap();
        let ticks = ioloop::Handle::current().metrics().ticks - before;
        // Polling a flag would tick thousands of times in 300 ms.
        assert!(ticks < 10, "{ticks} ticks while waiting");
    });
}

/// Busy for about `d`: CPU work, not a sleep, like the cookbook's fib.
fn spin_for(d: Duration) -> u64 {
    let start = Instant::now();
    let mut x = 0u64;
    while start.elapsed() < d {
        for i in 0..10_000u64 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(i);
        }
    }
    x
}

#[test]
fn a_tcp_echo_answers_promptly_during_a_two_second_blocking_computation() -> std::io::Result<()> {
    let (addr_tx, addr_rx) = mpsc::channel();
    let (done_tx, done_rx) = mpsc::channel();
    let server = std::thread::spawn(move || {
        ioloop::block_on(async move {
            let listener = ioloop::net::TcpListener::bind("127.0.0.1:0").await?;
            addr_tx.send(listener.local_addr()?).unwrap();
            let (mut stream, _) = listener.accept().await?;
            let computation = ioloop::spawn_blocking(|| spin_for(Duration::from_secs(2)));
            let mut buf = [0u8; 64];
            loop {
                let n = stream.read(&mut buf).await?;
                if n == 0 {
                    break;
                }
                stream.write_all(&buf[..n]).await?;
            }
            // The computation was still running, or just done, when the
            // pings stopped; either way it completes.
            computation.await.unwrap();
            done_tx.send(()).unwrap();
            Ok::<_, std::io::Error>(())
        })
    });
    let mut client = std::net::TcpStream::connect(addr_rx.recv().unwrap())?;
    client.set_read_timeout(Some(Duration::from_secs(20)))?;
    client.set_nodelay(true)?;
    let start = Instant::now();
    let mut worst = Duration::ZERO;
    let mut pings = 0;
    while start.elapsed() < Duration::from_millis(1800) {
        let sent = Instant::now();
        client.write_all(b"ping")?;
        let mut buf = [0u8; 4];
        client.read_exact(&mut buf)?;
        worst = worst.max(sent.elapsed());
        pings += 1;
        std::thread::sleep(Duration::from_millis(20));
    }
    drop(client);
    within(Duration::from_secs(20), move || done_rx.recv().unwrap());
    server.join().unwrap()?;
    // A loop blocked by the computation would answer after ~2 s; the bound
    // is the 50 ms with a tenfold margin for a noisy machine.
    assert!(pings > 10);
    assert!(
        worst < Duration::from_millis(500),
        "worst round trip {worst:?}"
    );
    eprintln!("{pings} pings during the computation, worst round trip {worst:?}");
    Ok(())
}

/// Polls `future` to completion on this thread, parking between wakes: a
/// foreign executor, as a blocking job might use.
fn park_on<F: std::future::Future>(future: F) -> F::Output {
    struct Unpark(std::thread::Thread);
    impl std::task::Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = std::task::Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut cx = std::task::Context::from_waker(&waker);
    let mut future = std::pin::pin!(future);
    loop {
        if let std::task::Poll::Ready(out) = future.as_mut().poll(&mut cx) {
            return out;
        }
        std::thread::park();
    }
}

/// Item 8 of the correctness issue: inside `spawn_blocking`, `spawn`
/// panicked and `Handle::current()` found no runtime.
#[test]
fn spawn_and_handle_current_inside_spawn_blocking_reach_the_runtime() {
    within(Duration::from_secs(10), || {
        ioloop::block_on(async {
            let (on_loop, by_handle, nested) = ioloop::spawn_blocking(|| {
                let handle = ioloop::Handle::current();
                (
                    ioloop::spawn(async { std::thread::current().id() }),
                    handle.spawn(async { 2 }),
                    ioloop::spawn_blocking(|| 3),
                )
            })
            .await
            .unwrap();
            // The spawned task ran on the loop, not on the pool thread.
            assert_eq!(on_loop.await.unwrap(), std::thread::current().id());
            assert_eq!(by_handle.await.unwrap(), 2);
            assert_eq!(nested.await.unwrap(), 3);
        })
    });
}

/// ... and a sleep polled there panicked, and a socket could not be made.
/// Both now go through the runtime whose loop runs on another thread.
#[test]
fn a_sleep_and_a_socket_inside_spawn_blocking_use_the_runtime() -> std::io::Result<()> {
    within(Duration::from_secs(10), || {
        ioloop::block_on(async {
            let timers_before = ioloop::Handle::current().metrics().live_timers;
            let (listener, slept) = ioloop::spawn_blocking(|| {
                let std_listener = std::net::TcpListener::bind("127.0.0.1:0")?;
                let listener = ioloop::net::TcpListener::from_std(std_listener)?;
                let start = Instant::now();
                let deadline = start + Duration::from_millis(20);
                park_on(ioloop::time::sleep_until(deadline));
                assert!(Instant::now() >= deadline);
                Ok::<_, std::io::Error>((listener, start.elapsed()))
            })
            .await
            .unwrap()?;
            assert!(slept >= Duration::from_millis(20));
            // The sleep's timer fired in the loop's heap and left nothing.
            ioloop::yield_now().await;
            assert_eq!(
                ioloop::Handle::current().metrics().live_timers,
                timers_before
            );
            // The socket made on the pool thread serves on the loop.
            let addr = listener.local_addr()?;
            let client = std::thread::spawn(move || std::net::TcpStream::connect(addr));
            let (mut conn, _) = listener.accept().await?;
            let mut peer = client.join().unwrap()?;
            peer.write_all(b"hi")?;
            let mut got = [0u8; 2];
            conn.read_exact(&mut got).await?;
            assert_eq!(&got, b"hi");
            Ok(())
        })
    })
}

/// `ioloop::block_on` inside a blocking job keeps starting a runtime of its
/// own, as before.
#[test]
fn block_on_inside_spawn_blocking_still_runs_a_runtime_of_its_own() {
    let got = within(Duration::from_secs(10), || {
        ioloop::block_on(async {
            ioloop::spawn_blocking(|| {
                ioloop::block_on(async {
                    ioloop::time::sleep(Duration::from_millis(1)).await;
                    ioloop::spawn(async { std::thread::current().id() })
                        .await
                        .unwrap()
                })
            })
            .await
            .unwrap()
        })
    });
    assert_ne!(got, std::thread::current().id());
}

/// A pool of one thread whose first job blocks until `release` is sent,
/// so a second job is surely queued behind it; the second job reports
/// through `ran` when it runs.
struct QueuedBehindABlocker {
    rt: ioloop::Runtime,
    release: mpsc::Sender<()>,
    ran: mpsc::Receiver<&'static str>,
    first: ioloop::JoinHandle<&'static str>,
    second: ioloop::JoinHandle<&'static str>,
}

fn queued_behind_a_blocker() -> std::io::Result<QueuedBehindABlocker> {
    let rt = ioloop::Runtime::builder().max_blocking_threads(1).build()?;
    let (started_tx, started) = mpsc::channel::<()>();
    let (release, gate) = mpsc::channel::<()>();
    let (ran_tx, ran) = mpsc::channel::<&'static str>();
    let first = rt.handle().spawn_blocking(move || {
        started_tx.send(()).unwrap();
        let _ = gate.recv();
        "first"
    });
    let second = rt.handle().spawn_blocking(move || {
        ran_tx.send("second").unwrap();
        "second"
    });
    // The first job holds the only thread: the second waits in the queue.
    started
        .recv_timeout(Duration::from_secs(20))
        .expect("the first job started");
    Ok(QueuedBehindABlocker {
        rt,
        release,
        ran,
        first,
        second,
    })
}

impl QueuedBehindABlocker {
    /// Releases the first job; the second must then run, and both handles
    /// give their outputs.
    fn release_and_check(self) {
        let QueuedBehindABlocker {
            release,
            ran,
            first,
            second,
            ..
        } = self;
        release.send(()).unwrap();
        assert_eq!(
            ran.recv_timeout(Duration::from_secs(20)),
            Ok("second"),
            "the queued job never ran"
        );
        let (first, second) = within(Duration::from_secs(20), move || {
            ioloop::block_on(async { (first.await, second.await) })
        });
        assert_eq!(first.unwrap(), "first");
        assert_eq!(second.unwrap(), "second");
    }
}

/// Bug 3 of issue 28: a job still queued when `shutdown_timeout` started
/// was cancelled and never ran, yet `blocking_still_running` counted it
/// (or not: it counted running threads). It runs to completion, and the
/// report counts it with the running one.
#[test]
fn a_spawn_blocking_job_queued_when_shutdown_timeout_starts_runs_and_is_counted()
-> std::io::Result<()> {
    let mut jobs = queued_behind_a_blocker()?;
    let rt = std::mem::replace(&mut jobs.rt, ioloop::Runtime::new()?);
    let report = within(Duration::from_secs(20), move || {
        rt.shutdown_timeout(Duration::from_millis(10))
    });
    assert!(report.finished, "{report:?}");
    assert_eq!(report.cancelled_tasks, 0);
    assert_eq!(report.blocking_still_running, 2, "{report:?}");
    jobs.release_and_check();
    Ok(())
}

/// Bug 3 of issue 28, the plain drop: a queued job was cancelled with the
/// runtime. It runs to completion on the pool's thread, which then exits.
#[test]
fn a_spawn_blocking_job_queued_when_the_runtime_is_dropped_runs() -> std::io::Result<()> {
    let mut jobs = queued_behind_a_blocker()?;
    drop(std::mem::replace(&mut jobs.rt, ioloop::Runtime::new()?));
    jobs.release_and_check();
    Ok(())
}
