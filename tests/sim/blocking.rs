//! A simulated host that waits for the blocking pool (issue 40, bug 6): a
//! job in flight is progress the loop waits for, not a deadlock, and the
//! loop neither spins nor moves its virtual clock meanwhile.

use std::io;
use std::time::Duration;

use ioloop::sim::{Report, Sim};
use ioloop::time::sleep;

/// The job: real time on a pool thread, then a value.
fn job() -> u32 {
    std::thread::sleep(Duration::from_millis(50));
    7
}

/// One client awaiting [`job`] on the pool (and, if `timer`, another task
/// sleeping 5 s of virtual time meanwhile); the ticks the loop turned while
/// it waited.
fn run(seed: u64, timer: bool) -> (Report, u64) {
    let ticks = std::rc::Rc::new(std::cell::Cell::new(u64::MAX));
    let seen = ticks.clone();
    let report = Sim::new(seed)
        .client("client", move || async move {
            let _sleeper = timer.then(|| ioloop::spawn_local(sleep(Duration::from_secs(5))));
            let handle = ioloop::Handle::current();
            let before = handle.metrics().ticks;
            let value = ioloop::spawn_blocking(job)
                .await
                .map_err(io::Error::other)?;
            assert_eq!(value, 7);
            seen.set(handle.metrics().ticks - before);
            Ok(())
        })
        .run()
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
