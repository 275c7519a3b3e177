//! Dropping a runtime: every unfinished future is dropped, every source it
//! held is closed, and nothing waits forever.

use std::future::poll_fn;
use std::io::Read;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use ioloop::io::Registration;
use testkit::util;
use util::{DropCounter, within};

#[test]
fn dropping_the_runtime_drops_every_unfinished_future() {
    let drops = Arc::new(AtomicUsize::new(0));
    let rt = ioloop::Runtime::new().unwrap();
    let mut handles = Vec::new();
    for _ in 0..3 {
        let guard = DropCounter(drops.clone());
        handles.push(rt.spawn(async move {
            let _guard = guard;
            std::future::pending::<()>().await;
        }));
    }
    // One that finishes.
    let guard = DropCounter(drops.clone());
    handles.push(rt.spawn(async move {
        let _guard = guard;
    }));
    rt.block_on(async {
        for _ in 0..2 {
            ioloop::yield_now().await;
        }
    });
    // One that never even starts: its future is dropped unpolled.
    let guard = DropCounter(drops.clone());
    let unstarted = rt.spawn(async move {
        let _guard = guard;
        std::future::pending::<()>().await;
    });
    assert_eq!(drops.load(Ordering::SeqCst), 1);
    drop(rt);
    assert_eq!(drops.load(Ordering::SeqCst), 5);
    for handle in handles.into_iter().take(3).chain([unstarted]) {
        assert!(handle.is_finished());
        let err = within(Duration::from_secs(10), move || ioloop::block_on(handle)).unwrap_err();
        assert!(err.is_cancelled());
    }
}

#[test]
fn dropping_the_runtime_closes_the_sockets_its_tasks_held() -> std::io::Result<()> {
    let rt = ioloop::Runtime::new()?;
    let (a, b) = std::os::unix::net::UnixStream::pair()?;
    a.set_nonblocking(true)?;
    let handle = rt.handle().clone();
    let reader = rt.spawn(async move {
        let a = Registration::new(mio::net::UnixStream::from_std(a))?;
        let mut buf = [0u8; 8];
        poll_fn(|cx| a.poll_read_io(cx, |mut s| s.read(&mut buf))).await
    });
    rt.block_on(async {
        while handle.metrics().io_sources == 0 {
            ioloop::yield_now().await;
        }
    });
    drop(rt);
    assert_eq!(handle.metrics().io_sources, 0);
    // Our end of the pair was closed with the task: the peer reads EOF.
    let mut b = b;
    b.set_read_timeout(Some(Duration::from_secs(10)))?;
    let mut buf = [0u8; 1];
    assert_eq!(b.read(&mut buf)?, 0);
    assert!(reader.is_finished());
    Ok(())
}

#[test]
fn a_source_held_outside_the_runtime_fails_instead_of_hanging() -> std::io::Result<()> {
    let rt = ioloop::Runtime::new()?;
    let (a, _b) = mio::net::UnixStream::pair()?;
    let reg = Registration::with_handle(a, rt.handle())?;
    drop(rt);
    let err = within(Duration::from_secs(10), move || {
        ioloop::block_on(async move { poll_fn(|cx| reg.poll_read_ready(cx)).await })
    })
    .unwrap_err();
    assert!(err.to_string().contains("shut down"), "{err}");
    Ok(())
}

#[test]
fn a_panicking_destructor_during_shutdown_does_not_escape() {
    struct Bomb;
    impl Drop for Bomb {
        fn drop(&mut self) {
            panic!("destructor fails during shutdown");
        }
    }
    let drops = Arc::new(AtomicUsize::new(0));
    let rt = ioloop::Runtime::new().unwrap();
    let bomb = Bomb;
    let _a = rt.spawn(async move {
        let _bomb = bomb;
        std::future::pending::<()>().await;
    });
    let guard = DropCounter(drops.clone());
    let _b = rt.spawn(async move {
        let _guard = guard;
        std::future::pending::<()>().await;
    });
    rt.block_on(ioloop::yield_now());
    assert!(catch_unwind(AssertUnwindSafe(|| drop(rt))).is_ok());
    // The other task was still dropped.
    assert_eq!(drops.load(Ordering::SeqCst), 1);
}

#[test]
fn spawning_during_or_after_shutdown_is_cancelled_not_lost() {
    let rt = ioloop::Runtime::new().unwrap();
    let handle = rt.handle().clone();
    let late: Arc<std::sync::Mutex<Option<ioloop::JoinHandle<()>>>> = Default::default();
    struct SpawnOnDrop(Arc<std::sync::Mutex<Option<ioloop::JoinHandle<()>>>>);
    impl Drop for SpawnOnDrop {
        fn drop(&mut self) {
            *self.0.lock().unwrap() = Some(ioloop::spawn(async {}));
        }
    }
    let spawner = SpawnOnDrop(late.clone());
    let _t = rt.spawn(async move {
        let _s = spawner;
        std::future::pending::<()>().await;
    });
    rt.block_on(ioloop::yield_now());
    drop(rt);
    let from_destructor = late.lock().unwrap().take().expect("the destructor ran");
    assert!(from_destructor.is_finished());
    let after = handle.spawn(async { 1 });
    assert!(after.is_finished());
    let (a, b) = within(Duration::from_secs(10), move || {
        ioloop::block_on(async { (from_destructor.await, after.await) })
    });
    assert!(a.unwrap_err().is_cancelled());
    assert!(b.unwrap_err().is_cancelled());
}

#[test]
fn shutdown_timeout_drops_a_task_that_never_finishes_and_reports_it() {
    let drops = Arc::new(AtomicUsize::new(0));
    let rt = ioloop::Runtime::new().unwrap();
    let guard = DropCounter(drops.clone());
    let stuck = rt.spawn(async move {
        let _guard = guard;
        std::future::pending::<()>().await;
    });
    let quick = rt.spawn(ioloop::time::sleep(Duration::from_millis(5)));
    let report = within(Duration::from_secs(20), move || {
        rt.shutdown_timeout(Duration::from_millis(100))
    });
    assert!(!report.finished);
    assert_eq!(report.cancelled_tasks, 1);
    assert_eq!(drops.load(Ordering::SeqCst), 1);
    assert!(stuck.is_finished() && quick.is_finished());
    let (stuck, quick) = within(Duration::from_secs(10), move || {
        ioloop::block_on(async { (stuck.await, quick.await) })
    });
    assert!(stuck.unwrap_err().is_cancelled());
    assert!(quick.is_ok());
}

#[test]
fn shutdown_timeout_returns_as_soon_as_every_task_has_finished() {
    let rt = ioloop::Runtime::new().unwrap();
    for i in 0..10 {
        drop(rt.spawn(ioloop::time::sleep(Duration::from_millis(i))));
    }
    // A generous timeout that must not be waited out: `finished` is set
    // only if the tasks, not the deadline, ended the wait.
    let report = rt.shutdown_timeout(Duration::from_secs(3600));
    assert!(report.finished);
    assert_eq!(report.cancelled_tasks, 0);
}

/// Item 2 of the correctness issue: a runtime kept in a `thread_local!`
/// aborted the process when its thread exited ("cannot access a Thread
/// Local Storage value during or after destruction"), because dropping it
/// entered the thread's context after that context was destroyed.
#[test]
fn a_runtime_in_a_thread_local_is_dropped_cleanly_when_its_thread_exits() {
    thread_local! {
        static RT: ioloop::Runtime = ioloop::Runtime::new().unwrap();
    }
    let drops = Arc::new(AtomicUsize::new(0));
    let counter = drops.clone();
    std::thread::spawn(move || {
        RT.with(|rt| {
            let guard = DropCounter(counter);
            // Still waiting on a timer and holding a socket when the thread
            // exits: its future is dropped with the runtime.
            drop(rt.spawn(async move {
                let _guard = guard;
                let _socket = ioloop::net::UdpSocket::bind("127.0.0.1:0").await;
                ioloop::time::sleep(Duration::from_secs(3600)).await;
            }));
            rt.block_on(ioloop::yield_now());
        });
    })
    .join()
    .expect("the thread exits without a panic");
    assert_eq!(drops.load(Ordering::SeqCst), 1);
}

/// Item 5 of the correctness issue: a wake of an already registered task,
/// waiting in the injection queue, counted as a second task.
#[test]
fn cancelled_tasks_counts_a_task_once_while_a_wake_for_it_is_queued() {
    let rt = ioloop::Runtime::new().unwrap();
    let parked = Arc::new(std::sync::Mutex::new(None::<std::task::Waker>));
    let slot = parked.clone();
    let _stuck = rt.spawn(poll_fn(move |cx| {
        *slot.lock().unwrap() = Some(cx.waker().clone());
        std::task::Poll::<()>::Pending
    }));
    rt.block_on(async {
        // Until the task has run once and parked.
        while parked.lock().unwrap().is_none() {
            ioloop::yield_now().await;
        }
    });
    // Woken from this thread, which runs no loop: the wake waits in the
    // injection queue, and a zero timeout never takes it in.
    parked.lock().unwrap().take().expect("parked").wake();
    let report = rt.shutdown_timeout(Duration::ZERO);
    assert!(!report.finished);
    assert_eq!(report.cancelled_tasks, 1);
}

/// The same over-count could make `shutdown_timeout` wait out its whole
/// timeout: a task's last poll races with a wake from another thread, whose
/// queue entry (stale once the task completes) kept "tasks left" above 0.
/// Many rounds of that race must all end as soon as the task does.
#[test]
fn shutdown_timeout_is_not_held_up_by_a_stale_wake_from_another_thread() {
    within(Duration::from_secs(60), || {
        for _ in 0..300 {
            let rt = ioloop::Runtime::new().unwrap();
            let (tx, rx) = std::sync::mpsc::channel::<std::task::Waker>();
            let waker_thread = std::thread::spawn(move || {
                for waker in rx {
                    waker.wake();
                }
            });
            let mut polls = 0;
            drop(rt.spawn(poll_fn(move |cx| {
                polls += 1;
                // Hand the waker over and finish, racing the wake.
                tx.send(cx.waker().clone()).unwrap();
                if polls < 3 {
                    std::task::Poll::Pending
                } else {
                    std::task::Poll::Ready(())
                }
            })));
            let report = rt.shutdown_timeout(Duration::from_secs(3600));
            assert!(report.finished);
            assert_eq!(report.cancelled_tasks, 0);
            waker_thread.join().unwrap();
        }
    });
}

/// Bug 4 of issue 28: on a paused runtime, `shutdown_timeout` read its
/// deadline on the virtual clock, which a busy task holds still: it never
/// returned. Its timeout is wall time.
#[test]
fn shutdown_timeout_returns_on_a_paused_runtime_with_a_busy_task() -> std::io::Result<()> {
    let rt = ioloop::Runtime::builder().start_paused(true).build()?;
    let _busy = rt.spawn(async {
        loop {
            ioloop::yield_now().await;
        }
    });
    let report = within(Duration::from_secs(20), move || {
        rt.shutdown_timeout(Duration::from_millis(100))
    });
    assert!(!report.finished);
    assert_eq!(report.cancelled_tasks, 1);
    assert_eq!(report.blocking_still_running, 0);
    Ok(())
}
