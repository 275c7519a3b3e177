//! The timer heap's order, seen from tasks: 10,000 timers with random and
//! equal deadlines, half of them cancelled once armed. The rest wake in
//! deadline order, timers with equal deadlines in the order they were
//! armed, none before its deadline; the cancelled ones never wake.
//!
//! Each timer is a task's `sleep_until`. The tasks are spawned, and so
//! first polled (which arms their timers), in index order; timers due in
//! the same tick wake their tasks in heap order, and woken tasks run in
//! the order they were woken, so the order the tasks record is the order
//! the heap fired them in.
//!
//! The runtime's clock is paused (`start_paused`): it does not move while
//! tasks are ready, so every timer is armed before the first deadline
//! however loaded the machine is, and the order is always checked; the
//! clock then jumps from deadline to deadline, so the test waits no real
//! time. (That no sleep wakes early by the real clock is checked in
//! tests/time/sleep.rs.)

use std::io;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ioloop::time::Instant;

use ioloop::time::sleep_until;
use ioloop::{Handle, Metrics, yield_now};
use stress_rng::Rng;
use testkit::{stress_rng, util};

const TIMERS: usize = 10_000;
/// Deadlines shared by many timers.
const SHARED: u64 = 8;

/// The runtime's counters once every task queued before the call has run:
/// the first yield goes behind them, the second behind the tick they ran
/// in (counters are published at the end of a tick).
async fn fresh_metrics() -> Metrics {
    yield_now().await;
    yield_now().await;
    Handle::current().metrics()
}

#[test]
fn ten_thousand_timers_fire_in_deadline_order_fifo_among_equals_never_early() -> io::Result<()> {
    let mut rng = Rng::from_env("edge_timers");
    util::within(Duration::from_secs(60), move || {
        let rt = ioloop::Runtime::builder()
            .start_paused(true)
            .build()
            .unwrap();
        rt.block_on(async move {
            let base = Instant::now() + Duration::from_millis(30);
            let fired: Arc<Mutex<Vec<usize>>> = Arc::default();
            let early: Arc<Mutex<Vec<usize>>> = Arc::default();
            let mut deadlines = Vec::with_capacity(TIMERS);
            let mut tasks = Vec::with_capacity(TIMERS);
            let before = fresh_metrics().await;
            for i in 0..TIMERS {
                // Half on a few shared instants, half anywhere in 150 ms.
                let deadline = if rng.percent(50) {
                    base + Duration::from_millis(15 * rng.below(SHARED))
                } else {
                    base + Duration::from_micros(rng.below(150_000))
                };
                deadlines.push(deadline);
                let (fired, early) = (fired.clone(), early.clone());
                tasks.push(ioloop::spawn(async move {
                    sleep_until(deadline).await;
                    if Instant::now() < deadline {
                        early.lock().unwrap().push(i);
                    }
                    fired.lock().unwrap().push(i);
                }));
            }
            // Every task has run once, in spawn order: every timer is armed.
            let armed = fresh_metrics().await;
            // On a loaded machine the 30 ms head start may not last: a
            // sleep first polled after its deadline completes at once, in
            // poll order. The order checks need every timer armed in time;
            // the rest of the test holds either way.
            let armed_in_time = Instant::now() < base;
            if armed_in_time {
                assert_eq!(armed.live_timers - before.live_timers, TIMERS as u64);
                assert!(
                    fired.lock().unwrap().is_empty(),
                    "a timer fired before its deadline"
                );
            }

            // Cancel half, before any deadline.
            let mut cancelled = vec![false; TIMERS];
            for (i, task) in tasks.iter().enumerate() {
                if rng.percent(50) {
                    task.abort();
                    cancelled[i] = true;
                }
            }
            let kept = cancelled.iter().filter(|c| !**c).count();
            let m = fresh_metrics().await;
            // The count holds only if no deadline passed meanwhile.
            if Instant::now() < base {
                assert_eq!(m.live_timers - before.live_timers, kept as u64);
            }

            // The aborts were issued by now: a cancelled timer may have
            // fired only if its deadline came first (a loaded machine).
            let aborted_by = Instant::now();
            for (i, task) in tasks.into_iter().enumerate() {
                match task.await {
                    Ok(()) => assert!(
                        !cancelled[i] || deadlines[i] <= aborted_by,
                        "timer {i} was cancelled before its deadline, yet fired"
                    ),
                    Err(err) => assert!(err.is_cancelled() && cancelled[i], "timer {i}: {err}"),
                }
            }
            assert_eq!(*early.lock().unwrap(), Vec::<usize>::new(), "fired early");

            // Deadline order; among equal deadlines, the order armed.
            let fired = fired.lock().unwrap().clone();
            let mut expected = fired.clone();
            expected.sort_by_key(|&i| (deadlines[i], i));
            assert_eq!(fired.len(), expected.len());
            if !armed_in_time {
                println!(
                    "too loaded to arm every timer before the first deadline: order not checked"
                );
                return Ok(());
            }
            if let Some(at) = fired.iter().zip(&expected).position(|(a, b)| a != b) {
                panic!(
                    "out of order at {at}: timer {} (deadline +{:?}) fired where timer {} \
                     (deadline +{:?}) was due",
                    fired[at],
                    deadlines[fired[at]] - base,
                    expected[at],
                    deadlines[expected[at]] - base
                );
            }
            let ties = expected
                .windows(2)
                .filter(|w| deadlines[w[0]] == deadlines[w[1]])
                .count();
            let m = fresh_metrics().await;
            assert_eq!(m.live_timers, before.live_timers);
            println!(
                "{} timers fired in order ({ties} ties kept in arming order), {} cancelled",
                fired.len(),
                TIMERS - fired.len()
            );
            io::Result::Ok(())
        })
    })
}
