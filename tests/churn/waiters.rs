//! Waiters on one socket, made and dropped over and over: a future that
//! stopped waiting (dropped after one poll, its task finished) must leave
//! nothing in the socket's set of waiters, and above all not its task.

use std::future::{Future, poll_fn};
use std::io;
use std::pin::pin;
use std::rc::Rc;
use std::task::Poll;
use std::time::Duration;

use futures_util::AsyncReadExt;
use ioloop::net::{TcpListener, TcpStream, UdpSocket};
use ioloop::task::WaitReason;
use testkit::account::{self, Held};
use testkit::util::within;

/// What a churn may leave over its baseline: the runtime's own tables may
/// settle a little, but no task (each holds a 512-byte buffer) may stay.
const SLACK: isize = 1 << 20;

/// Tasks per churn.
const TASKS: usize = 64_000;

/// Polls `fut` once, then drops it.
async fn poll_once<F: Future>(fut: F) -> Poll<F::Output> {
    let mut fut = pin!(fut);
    poll_fn(|cx| Poll::Ready(fut.as_mut().poll(cx))).await
}

/// Runs `n` tasks made by `task`, a thousand at a time, each to its end.
async fn churn<F, T>(n: usize, task: F)
where
    F: Fn() -> T,
    T: Future<Output = ()> + 'static,
{
    let mut batch = Vec::with_capacity(1_000);
    for done in (0..n).step_by(1_000) {
        for _ in done..n.min(done + 1_000) {
            batch.push(ioloop::spawn_local(task()));
        }
        for handle in batch.drain(..) {
            handle.await.unwrap();
        }
    }
}

/// Warms up with 1,000 tasks made by `task`, then checks that `TASKS` more
/// leave the heap, descriptors and runtime threads where they were.
async fn churn_leaves_nothing<F, T>(what: &str, task: F)
where
    F: Fn() -> T,
    T: Future<Output = ()> + 'static,
{
    churn(1_000, &task).await;
    let before = Held::now();
    churn(TASKS, &task).await;
    before.assert_back(what, SLACK);
}

/// Runs `test` on a fresh runtime, on a thread of its own, within a minute,
/// holding the accounting lock.
fn run<F, T>(test: F) -> io::Result<()>
where
    F: FnOnce() -> T + Send + 'static,
    T: Future<Output = io::Result<()>> + 'static,
{
    let _serial = account::serial();
    within(Duration::from_secs(120), || {
        let rt = account::runtime()?;
        rt.block_on(test())
    })
}

/// A task that polls `recv_from` once on a socket nobody sends to, drops the
/// future and finishes; 64,000 of them. Before the fix each left its waker,
/// and with it its whole task, in the socket's waiters until a datagram
/// came: 64,000 finished tasks held tens of MiB.
#[test]
fn waiters_of_futures_that_stopped_waiting_are_not_kept() -> io::Result<()> {
    run(|| async {
        let socket = Rc::new(UdpSocket::bind("127.0.0.1:0").await?);
        let task = || {
            let socket = socket.clone();
            async move {
                let mut buf = [0u8; 512];
                assert!(poll_once(socket.recv_from(&mut buf)).await.is_pending());
            }
        };
        churn_leaves_nothing("64,000 recv_from futures polled once and dropped", task).await;
        Ok(())
    })
}

/// The same through the poll function, which has no future to hold a place
/// among the waiters: the waiters it leaves are bounded all the same.
#[test]
fn waiters_of_poll_recv_from_callers_that_moved_on_are_bounded() -> io::Result<()> {
    run(|| async {
        let socket = Rc::new(UdpSocket::bind("127.0.0.1:0").await?);
        let task = || {
            let socket = socket.clone();
            async move {
                let mut buf = [0u8; 512];
                let polled = poll_fn(|cx| Poll::Ready(socket.poll_recv_from(cx, &mut buf))).await;
                assert!(polled.is_pending());
            }
        };
        churn_leaves_nothing("64,000 poll_recv_from calls left pending", task).await;
        Ok(())
    })
}

/// A connected pair on 127.0.0.1, the accepted side's read readiness
/// cleared (a new registration starts out ready).
async fn quiet_pair() -> io::Result<(TcpListener, TcpStream, TcpStream)> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let client = TcpStream::connect(listener.local_addr()?).await?;
    let (server, _) = listener.accept().await?;
    let mut buf = [0u8; 1];
    let err = server.try_read(&mut buf).unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::WouldBlock);
    Ok((listener, client, server))
}

/// `TcpStream::readable()`, polled once and dropped by 64,000 tasks.
#[test]
fn tcp_readable_futures_that_stopped_waiting_are_not_kept() -> io::Result<()> {
    run(|| async {
        let (_listener, _client, server) = quiet_pair().await?;
        let server = Rc::new(server);
        let task = || {
            let server = server.clone();
            async move {
                let _ballast = [0u8; 512];
                assert!(poll_once(server.readable()).await.is_pending());
                std::hint::black_box(&_ballast);
            }
        };
        churn_leaves_nothing("64,000 readable() futures polled once and dropped", task).await;
        Ok(())
    })
}

/// A futures-io read of a `&TcpStream`, polled once and dropped by 64,000
/// tasks.
#[test]
fn tcp_read_futures_that_stopped_waiting_are_not_kept() -> io::Result<()> {
    run(|| async {
        let (_listener, _client, server) = quiet_pair().await?;
        let server = Rc::new(server);
        let task = || {
            let server = server.clone();
            async move {
                let mut buf = [0u8; 512];
                let mut reader = &*server;
                assert!(poll_once(reader.read(&mut buf)).await.is_pending());
            }
        };
        churn_leaves_nothing("64,000 reads polled once and dropped", task).await;
        Ok(())
    })
}

/// `TcpListener::accept`, polled once and dropped by 64,000 tasks.
#[test]
fn accept_futures_that_stopped_waiting_are_not_kept() -> io::Result<()> {
    run(|| async {
        let listener = Rc::new(TcpListener::bind("127.0.0.1:0").await?);
        let task = || {
            let listener = listener.clone();
            async move {
                let _ballast = [0u8; 512];
                assert!(poll_once(listener.accept()).await.is_pending());
                std::hint::black_box(&_ballast);
            }
        };
        churn_leaves_nothing("64,000 accept futures polled once and dropped", task).await;
        Ok(())
    })
}

/// How many tasks of the runtime wait to read, and the most polls any task
/// has had.
fn readers_and_most_polls() -> (usize, u64) {
    let dump = ioloop::Handle::current().dump();
    let readers = dump
        .tasks
        .iter()
        .filter(|task| {
            task.waits_on
                .iter()
                .any(|reason| matches!(reason, WaitReason::Read { .. }))
        })
        .count();
    let most = dump.tasks.iter().map(|task| task.polls).max().unwrap_or(0);
    (readers, most)
}

/// 20,000 tasks wait in `recv_from` on one socket at once. Each registers
/// once and is polled once: no flush of the whole set wakes them all again
/// to find out who is still there (before the fix, a set that reached its
/// limit, 64 then doubling, was woken whole, so every waiter was polled
/// again at each of a dozen limits, and each registration scanned the set:
/// quadratic). When half of them are cancelled, the set holds the other
/// half; one datagram wakes each of those once, and one of them gets it.
/// The second such crowd leaves nothing over the first.
#[test]
fn twenty_thousand_live_waiters_register_once_each() -> io::Result<()> {
    run(|| async {
        crowd().await?;
        let before = Held::now();
        crowd().await?;
        before.assert_back("20,000 waiters, all gone", SLACK);
        Ok(())
    })
}

/// The crowd of `twenty_thousand_live_waiters_register_once_each`.
async fn crowd() -> io::Result<()> {
    const WAITERS: usize = 20_000;
    let socket = Rc::new(UdpSocket::bind("127.0.0.1:0").await?);
    let got = Rc::new(std::cell::Cell::new(0));
    let mut handles = Vec::with_capacity(WAITERS);
    for _ in 0..WAITERS {
        let socket = socket.clone();
        let got = got.clone();
        handles.push(ioloop::spawn_local(async move {
            let mut buf = [0u8; 16];
            socket.recv_from(&mut buf).await.unwrap();
            got.set(got.get() + 1);
        }));
    }
    // Each task runs once; a few more rounds for any wake to be seen.
    for _ in 0..20 {
        ioloop::yield_now().await;
    }
    let (readers, most_polls) = readers_and_most_polls();
    assert_eq!(readers, WAITERS);
    assert_eq!(most_polls, 1, "a waiter was woken with nothing to read");

    // Cancel every other task: its waiter goes with its future.
    for handle in handles.iter().step_by(2) {
        handle.abort();
    }
    for _ in 0..20 {
        ioloop::yield_now().await;
    }
    let (readers, most_polls) = readers_and_most_polls();
    assert_eq!(readers, WAITERS / 2);
    assert_eq!(most_polls, 1);

    // One datagram: each live waiter is woken once, one receives it.
    let sender = UdpSocket::bind("127.0.0.1:0").await?;
    sender.send_to(b"one", socket.local_addr()?).await?;
    while got.get() == 0 {
        ioloop::yield_now().await;
    }
    for _ in 0..20 {
        ioloop::yield_now().await;
    }
    assert_eq!(got.get(), 1);
    let (readers, most_polls) = readers_and_most_polls();
    assert_eq!(readers, WAITERS / 2 - 1);
    assert_eq!(most_polls, 2);

    for handle in &handles {
        handle.abort();
    }
    for handle in handles {
        let _ = handle.await;
    }
    Ok(())
}
