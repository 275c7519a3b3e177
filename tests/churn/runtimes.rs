//! Runtimes and their guards, made and dropped over and over.

use std::io;

use testkit::account::{self, Held};

/// 1,000 runtimes, each with a task and a blocking job, built and dropped:
/// no thread, descriptor or heap byte is left behind.
#[test]
fn runtimes_built_and_dropped_leave_nothing() -> io::Result<()> {
    let _serial = account::serial();
    let one = || -> io::Result<()> {
        let rt = ioloop::Runtime::new()?;
        let n = rt.block_on(async {
            let task = ioloop::spawn(async { 1 });
            let job = ioloop::spawn_blocking(|| 2);
            task.await.unwrap() + job.await.unwrap()
        });
        assert_eq!(n, 3);
        Ok(())
    };
    // Warm: the first runtime sets up what lives for the process (the
    // logger, thread-locals of this thread).
    for _ in 0..10 {
        one()?;
    }
    let before = Held::now();
    for _ in 0..1_000 {
        one()?;
    }
    // A blocking thread exits on its own after the runtime drops; give the
    // last ones a moment (a safety net, not what is measured).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while account::runtime_threads() > before.threads && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    before.assert_back("1,000 runtimes", 16 * 1024);
    Ok(())
}

/// A task's waker may outlive its runtime: 1,000 runtimes each dropped
/// with a pending task whose waker was kept outside. Waking those wakers
/// afterwards (by reference, by value, through a clone) does nothing, and
/// dropping them frees each task and, with the last, its runtime's shared
/// half: the heap is back where it was (a task holds its runtime; the last
/// reference to a task, here a waker, frees both).
#[test]
fn wakers_that_outlive_their_runtimes_wake_harmlessly_and_free_everything() -> io::Result<()> {
    use std::sync::{Arc, Mutex};
    use std::task::{Poll, Waker};
    let _serial = account::serial();
    let one = |kept: &mut Vec<Waker>| -> io::Result<()> {
        let rt = ioloop::Runtime::new()?;
        let slot = Arc::new(Mutex::new(None::<Waker>));
        let stored = slot.clone();
        let task = rt.spawn(std::future::poll_fn(move |cx| {
            *stored.lock().unwrap() = Some(cx.waker().clone());
            Poll::<()>::Pending
        }));
        rt.block_on(async {
            while slot.lock().unwrap().is_none() {
                ioloop::yield_now().await;
            }
        });
        drop(task);
        drop(rt);
        kept.push(
            slot.lock()
                .unwrap()
                .take()
                .expect("the task stored its waker"),
        );
        Ok(())
    };
    let mut warm = Vec::new();
    for _ in 0..10 {
        one(&mut warm)?;
    }
    drop(warm);
    let before = Held::now();
    let mut kept = Vec::new();
    for _ in 0..1_000 {
        one(&mut kept)?;
    }
    for (i, waker) in kept.into_iter().enumerate() {
        waker.wake_by_ref();
        let copy = waker.clone();
        if i % 2 == 0 {
            drop(copy);
            waker.wake();
        } else {
            copy.wake();
            drop(waker);
        }
    }
    before.assert_back("1,000 runtimes outlived by their tasks' wakers", 16 * 1024);
    Ok(())
}
