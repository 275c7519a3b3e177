//! Runtimes shut down with work still in them, over and over: a blocking
//! job running and one queued behind it, a task pending forever, waiters
//! parked on a listener and a sleep. Every shutdown reports exactly, the
//! queued job still runs, and nothing is left behind.

use std::io;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use testkit::account::{self, Held};

/// How one runtime ends.
#[derive(Clone, Copy, Debug)]
enum End {
    /// `shutdown_timeout(Duration::ZERO)`: no grace at all.
    Zero,
    /// `shutdown_timeout` with a grace that is waited out (the stuck tasks
    /// never finish): the thread timing the grace comes and goes.
    Grace,
    /// A plain drop.
    Drop,
}

/// One runtime, set up with work in every state and shut down by `end`.
fn one(end: End) -> io::Result<()> {
    let rt = ioloop::Runtime::builder().max_blocking_threads(1).build()?;
    let (started_tx, started) = mpsc::channel::<()>();
    let (release, gate) = mpsc::channel::<()>();
    let (ran_tx, ran) = mpsc::channel::<()>();
    // The one pool thread runs the first job until released; the second
    // waits in the queue behind it.
    drop(rt.handle().spawn_blocking(move || {
        started_tx.send(()).unwrap();
        let _ = gate.recv();
    }));
    drop(rt.handle().spawn_blocking(move || ran_tx.send(()).unwrap()));
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    let tasks = rt.block_on(async move {
        let listener = ioloop::net::TcpListener::from_std(listener)?;
        let pending = ioloop::spawn(std::future::pending::<()>());
        let waiters = [
            ioloop::spawn(async move {
                let _ = listener.accept().await;
            }),
            ioloop::spawn(ioloop::time::sleep(Duration::from_secs(3600))),
            ioloop::spawn(async move {
                let _ = pending.await;
            }),
        ];
        // Every one parked where it waits.
        ioloop::yield_now().await;
        Ok::<_, io::Error>(waiters)
    })?;
    drop(tasks);
    started
        .recv_timeout(Duration::from_secs(20))
        .expect("the first job started");
    let report = match end {
        End::Zero => Some(rt.shutdown_timeout(Duration::ZERO)),
        End::Grace => Some(rt.shutdown_timeout(Duration::from_millis(1))),
        End::Drop => {
            drop(rt);
            None
        }
    };
    if let Some(report) = report {
        assert!(!report.finished, "{end:?}: {report:?}");
        assert_eq!(report.cancelled_tasks, 4, "{end:?}: {report:?}");
        assert_eq!(report.blocking_still_running, 2, "{end:?}: {report:?}");
    }
    // Let the first job go: the queued one runs, then the thread exits.
    release.send(()).unwrap();
    ran.recv_timeout(Duration::from_secs(20))
        .unwrap_or_else(|_| panic!("{end:?}: the queued blocking job never ran"));
    Ok(())
}

/// 3,000 runtimes, a thousand ended each way, each with a blocking job
/// running and one queued, a task pending forever, and waiters parked on a
/// listener, a sleep and a `JoinHandle`: heap, descriptors and threads all
/// come back.
#[test]
fn runtimes_shut_down_with_work_in_them_leave_nothing() -> io::Result<()> {
    let _serial = account::serial();
    let ends = [End::Zero, End::Grace, End::Drop];
    // Warm: what lives for the process (the logger, this thread's locals).
    for end in ends {
        one(end)?;
    }
    let before = Held::now();
    for i in 0..3_000 {
        one(ends[i % 3])?;
    }
    // Each pool thread exits on its own once its last job is done; give
    // the last ones a moment (a safety net, not what is measured).
    let deadline = Instant::now() + Duration::from_secs(10);
    while account::runtime_threads() > before.threads && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    before.assert_back("3,000 runtimes shut down with work in them", 16 * 1024);
    Ok(())
}
