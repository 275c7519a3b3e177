//! A simulated host that waits for a blocking job (issue 40, bug 6): a
//! job in flight is progress, not a deadlock, and the virtual clock does
//! not move meanwhile. In a simulation the job runs on the loop's thread,
//! in an order the seed decides (issue 41 item 6), and one still waiting
//! for its turn when the run ends is dropped, not leaked.

use std::io;
use std::time::Duration;

use ioloop::sim::{Report, Sim, run_seed};
use ioloop::time::sleep;

/// The job: real time (on the loop's thread, in a simulation), then a value.
fn job() -> u32 {
    std::thread::sleep(Duration::from_millis(50));
    7
}

/// One client awaiting [`job`] on the pool (and, if `timer`, another task
/// sleeping 5 s of virtual time meanwhile); the ticks the loop turned while
/// it waited.
fn run(seed: u64, timer: bool) -> (Report, u64) {
    let ticks = std::rc::Rc::new(std::cell::Cell::new(u64::MAX));
    let report = run_seed(seed, |seed| {
        let seen = ticks.clone();
        let mut sim = Sim::new(seed);
        sim.client("client", move || async move {
            let _sleeper = timer.then(|| ioloop::spawn_local(sleep(Duration::from_secs(5))));
            let handle = ioloop::Handle::current();
            let before = handle.metrics().ticks;
            let value = ioloop::spawn_blocking(job)
                .await
                .map_err(io::Error::other)?;
            assert_eq!(value, 7);
            seen.set(handle.metrics().ticks - before);
            Ok(())
        });
        sim
    })
    .unwrap_or_else(|failure| panic!("{failure}"));
    (report, ticks.get())
}

#[test]
fn a_blocking_job_in_flight_is_waited_for_not_a_deadlock() {
    for seed in 0..3 {
        for timer in [false, true] {
            let (report, ticks) = run(seed, timer);
            // The clock stood still while the job ran: the 5 s timer did
            // not fire early, and nothing else moved it.
            assert!(
                report.elapsed < Duration::from_secs(5),
                "seed {seed}, timer {timer}: {:?}",
                report.elapsed
            );
            // A loop spinning for the 50 ms would turn thousands of ticks;
            // waiting, it turns a few: the spawn, the pool's wake, the task.
            assert!(ticks < 20, "seed {seed}, timer {timer}: {ticks} ticks");
        }
    }
}

/// Jobs spawned at once, each recording its number when it runs: the
/// order they ran in, and whether each ran on the loop's thread.
fn order(seed: u64) -> (Vec<u32>, bool) {
    let seen = std::rc::Rc::new(std::cell::RefCell::new((Vec::new(), true)));
    let slot = seen.clone();
    run_seed(seed, |seed| {
        let slot = slot.clone();
        let mut sim = Sim::new(seed);
        sim.client("client", move || async move {
            let loop_thread = std::thread::current().id();
            let ran = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
            let jobs: Vec<_> = (0..8)
                .map(|i| {
                    let ran = ran.clone();
                    ioloop::spawn_blocking(move || {
                        ran.lock().unwrap().push(i);
                        std::thread::current().id()
                    })
                })
                .collect();
            let mut on_loop = true;
            for job in jobs {
                on_loop &= job.await.map_err(io::Error::other)? == loop_thread;
            }
            *slot.borrow_mut() = (ran.lock().unwrap().clone(), on_loop);
            Ok(())
        });
        sim
    })
    .unwrap_or_else(|failure| panic!("{failure}"));
    seen.take()
}

#[test]
fn blocking_jobs_run_on_the_loop_in_an_order_the_seed_decides() {
    let mut orders = std::collections::BTreeSet::new();
    for seed in 0..20 {
        let (ran, on_loop) = order(seed);
        assert!(on_loop, "seed {seed}: a job ran off the loop's thread");
        let mut sorted = ran.clone();
        sorted.sort_unstable();
        assert_eq!(
            sorted,
            (0..8).collect::<Vec<_>>(),
            "seed {seed}: each job once"
        );
        // Replayed: the same seed, the same order.
        assert_eq!(order(seed).0, ran, "seed {seed}");
        orders.insert(ran);
    }
    assert!(orders.len() > 1, "every seed ran the jobs in one order");
}

#[test]
fn a_blocking_job_still_waiting_for_its_turn_when_the_run_ends_is_dropped() {
    // The client returns right after spawning: for some seeds the run
    // ends with the job still queued, and dropping the runtime cancels
    // it. Either way the closure ran or was dropped, never leaked, and
    // the run ended.
    let mut ran = std::collections::BTreeSet::new();
    for seed in 0..20 {
        let kept = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        run_seed(seed, |seed| {
            let held = kept.clone();
            let mut sim = Sim::new(seed);
            sim.client("client", move || async move {
                drop(ioloop::spawn_blocking(move || {
                    held.store(true, std::sync::atomic::Ordering::Relaxed)
                }));
                Ok(())
            });
            sim
        })
        .unwrap_or_else(|failure| panic!("{failure}"));
        assert_eq!(
            std::sync::Arc::strong_count(&kept),
            1,
            "seed {seed}: leaked"
        );
        ran.insert(kept.load(std::sync::atomic::Ordering::Relaxed));
    }
    // Both ends are reached among the seeds: ran first, or cancelled.
    assert_eq!(ran.len(), 2, "{ran:?}");
}
