//! A task that yields in a loop never starves timers or I/O: `yield_now`
//! puts it behind the next poll of the OS.

use std::future::poll_fn;
use std::io::{Read, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use ioloop::io::Registration;
use testkit::util;

/// Yields until `flag` is set; gives up after a generous safety limit and
/// reports how often it yielded.
async fn spin_until(flag: Arc<AtomicBool>) -> Result<u64, String> {
    let start = Instant::now();
    let mut spins = 0;
    while !flag.load(Ordering::SeqCst) {
        if start.elapsed() > Duration::from_secs(10) {
            return Err(format!("starved: still spinning after {spins} yields"));
        }
        ioloop::yield_now().await;
        spins += 1;
    }
    Ok(spins)
}

#[test]
fn a_yielding_task_does_not_starve_a_timer() {
    ioloop::block_on(async {
        let fired = Arc::new(AtomicBool::new(false));
        let f = fired.clone();
        let spinner = ioloop::spawn(spin_until(fired.clone()));
        ioloop::spawn(async move {
            ioloop::time::sleep(Duration::from_millis(10)).await;
            f.store(true, Ordering::SeqCst);
        })
        .await
        .unwrap();
        let spins = spinner.await.unwrap().unwrap();
        assert!(spins > 0);
    });
}

#[test]
fn a_yielding_task_does_not_starve_an_io_event() -> std::io::Result<()> {
    ioloop::block_on(async {
        let (a, mut b) = mio::net::UnixStream::pair()?;
        let a = Registration::new(a)?;
        let got = Arc::new(AtomicBool::new(false));
        let parked = util::signal();
        let (g, p) = (got.clone(), parked.clone());
        let reader = ioloop::spawn(async move {
            let mut buf = [0u8; 16];
            let n = poll_fn(|cx| {
                let r = a.poll_read_io(cx, |mut s| s.read(&mut buf));
                if r.is_pending() {
                    p.set(); // parked on the reactor, not holding data yet
                }
                r
            })
            .await?;
            g.store(true, Ordering::SeqCst);
            Ok::<_, std::io::Error>(buf[..n].to_vec())
        });
        let spinner = ioloop::spawn(spin_until(got.clone()));
        parked.wait().await;
        // The data arrives while the spinner keeps the run queue non-empty:
        // only a poll of the OS between its yields can deliver the event.
        b.write_all(b"wake up")?;
        assert_eq!(reader.await.unwrap()?, b"wake up");
        spinner.await.unwrap().map_err(std::io::Error::other)?;
        Ok(())
    })
}

#[test]
fn yielded_tasks_run_in_wake_order() {
    let order = Arc::new(std::sync::Mutex::new(Vec::new()));
    let o = order.clone();
    ioloop::block_on(async move {
        let tasks: Vec<_> = (0..4)
            .map(|i| {
                let o = o.clone();
                ioloop::spawn(async move {
                    for round in 0..3 {
                        o.lock().unwrap().push((round, i));
                        ioloop::yield_now().await;
                    }
                })
            })
            .collect();
        for t in tasks {
            t.await.unwrap();
        }
    });
    let order = order.lock().unwrap().clone();
    let mut expected = Vec::new();
    for round in 0..3 {
        for i in 0..4 {
            expected.push((round, i));
        }
    }
    assert_eq!(order, expected);
}

#[test]
fn a_task_woken_during_a_tick_waits_for_the_next_one() {
    ioloop::block_on(async {
        let ticks = Arc::new(AtomicU64::new(0));
        let t = ticks.clone();
        let before = ioloop::Handle::current().metrics().ticks;
        ioloop::spawn(async move {
            ioloop::yield_now().await;
            t.store(ioloop::Handle::current().metrics().ticks, Ordering::SeqCst);
        })
        .await
        .unwrap();
        // Spawned in tick `before`, first polled in the next tick, polled
        // again after yielding in the one after: at least two ticks passed.
        assert!(ticks.load(Ordering::SeqCst) >= before + 2);
    });
}
