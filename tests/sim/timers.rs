//! Time under the simulation: tasks that sleep, move their sleeps, race
//! timeouts and tick intervals, each a seeded mix, beside each other and
//! with the rare paths on (timers due together fired in either order).
//! On the virtual clock every wake is exactly on time, so each is checked
//! to the nanosecond: a sleep ends at its deadline, a timeout at the
//! earlier of its two, an interval's tick at the instant its missed-tick
//! behaviour says; a sleep is elapsed once it ended and not before; and
//! a loop of timeouts that expire at once still lets the others run.

use std::cell::Cell;
use std::future::{Future, pending, poll_fn};
use std::io;
use std::pin::pin;
use std::rc::Rc;
use std::task::Poll;
use std::time::Duration;

use ioloop::sim::{Faults, Rng, Sim, run_seeds};
use ioloop::time::{Instant, MissedTickBehavior, interval, sleep, sleep_until, timeout};

/// The world's own choices, from its seed.
struct Draw(Rng);

impl Draw {
    fn below(&mut self, n: u64) -> u64 {
        self.0.below(n)
    }

    /// A duration of up to `max_ms` milliseconds, in whole microseconds
    /// (zero now and then).
    fn duration(&mut self, max_ms: u64) -> Duration {
        Duration::from_micros(self.below(max_ms * 1000 + 1))
    }
}

/// Fails the run with `what` unless `ok`.
fn check(ok: bool, what: impl FnOnce() -> String) -> io::Result<()> {
    if ok {
        Ok(())
    } else {
        Err(io::Error::other(what()))
    }
}

/// A sleep of a seeded length: it ends at its deadline, exactly, and is
/// elapsed then and not before.
async fn one_sleep(draw: &mut Draw) -> io::Result<()> {
    let d = draw.duration(50) + Duration::from_micros(1);
    let start = Instant::now();
    let mut sleep = pin!(sleep(d));
    check(!sleep.is_elapsed(), || {
        format!("a sleep of {d:?} elapsed at once")
    })?;
    sleep.as_mut().await;
    let took = Instant::now().saturating_duration_since(start);
    check(took == d, || format!("a sleep of {d:?} took {took:?}"))?;
    let now = Instant::now();
    let back = start.saturating_duration_since(now);
    check(back == Duration::ZERO, || {
        format!("the time back to a sleep's start was {back:?}")
    })?;
    // The other ways to the same instants, on the virtual clock (`d` is
    // never zero).
    check(
        start.elapsed() == d
            && now.duration_since(start) == d
            && now.checked_duration_since(start) == Some(d)
            && start.checked_duration_since(now).is_none()
            && start.checked_add(d) == Some(now)
            && now.checked_sub(d) == Some(start),
        || format!("a sleep of {d:?}: its start and end do not differ by it every way"),
    )?;
    check(sleep.is_elapsed(), || {
        format!("a sleep of {d:?} not elapsed once it ended")
    })
}

/// A sleep moved, once it has been polled, earlier or later: it ends at
/// the deadline it was moved to.
async fn moved_sleep(draw: &mut Draw) -> io::Result<()> {
    let start = Instant::now();
    let first = draw.duration(50) + Duration::from_micros(1);
    let moved = draw.duration(50) + Duration::from_micros(1);
    let mut sleep = pin!(sleep(first));
    // Polled once (armed), then moved.
    poll_fn(|cx| {
        let _ = sleep.as_mut().poll(cx);
        Poll::Ready(())
    })
    .await;
    let now = Instant::now();
    sleep.as_mut().reset(now + moved);
    sleep.as_mut().await;
    let took = Instant::now() - now;
    check(took == moved, || {
        format!(
            "a sleep of {first:?} moved to {moved:?} from its poll ended {took:?} after (started {:?} before)",
            now - start
        )
    })
}

/// A timeout racing a sleep of another length: the earlier wins, at its
/// own deadline.
async fn raced(draw: &mut Draw) -> io::Result<()> {
    let limit = draw.duration(40);
    let mut work = draw.duration(40);
    if work == limit {
        work += Duration::from_micros(1);
    }
    let start = Instant::now();
    let result = timeout(limit, sleep(work)).await;
    let took = Instant::now() - start;
    check(result.is_ok() == (work < limit), || {
        format!("a timeout of {limit:?} around a sleep of {work:?} gave {result:?}")
    })?;
    check(took == limit.min(work), || {
        format!("a timeout of {limit:?} around a sleep of {work:?} ended after {took:?}")
    })
}

/// The tick an interval owes, by its behaviour: the instant it reports
/// for a tick scheduled at `scheduled` and delivered at `now`, and when
/// the next is scheduled.
fn next_tick(
    behavior: MissedTickBehavior,
    scheduled: Instant,
    now: Instant,
    period: Duration,
) -> Instant {
    let next = scheduled + period;
    if next > now {
        return next;
    }
    match behavior {
        MissedTickBehavior::Burst => next,
        MissedTickBehavior::Delay => now + period,
        MissedTickBehavior::Skip => {
            let behind = (now - scheduled).as_nanos();
            let period = period.as_nanos();
            now + Duration::from_nanos((period - behind % period) as u64)
        }
    }
}

/// An interval of a seeded period and behaviour, ticked a few times with
/// seeded stalls between the ticks (some longer than several periods):
/// each tick reports the instant the model says, and comes then (or at
/// once, if that is past).
async fn ticking(draw: &mut Draw) -> io::Result<()> {
    let period = draw.duration(10) + Duration::from_micros(1);
    let behavior = [
        MissedTickBehavior::Burst,
        MissedTickBehavior::Delay,
        MissedTickBehavior::Skip,
    ][draw.below(3) as usize];
    let mut every = interval(period);
    every.set_missed_tick_behavior(behavior);
    let mut scheduled = Instant::now();
    for i in 0..6 {
        let called = Instant::now();
        let tick = every.tick().await;
        let now = Instant::now();
        check(tick == scheduled, || {
            format!(
                "{behavior:?} every {period:?}: tick {i} said {:?}, owed {:?}",
                tick - called,
                scheduled.saturating_duration_since(called)
            )
        })?;
        check(now == called.max(scheduled), || {
            format!(
                "{behavior:?} every {period:?}: tick {i} came {:?} after the call, owed at {:?}",
                now - called,
                scheduled.saturating_duration_since(called)
            )
        })?;
        scheduled = next_tick(behavior, scheduled, now, period);
        // A stall before the next call: half the time a whole number of
        // periods (0 to 3), which lands a late tick exactly on the grid
        // (the boundary of "missed"), else anything up to four periods.
        let stall = if draw.below(2) == 0 {
            period * draw.below(4) as u32
        } else {
            Duration::from_nanos(draw.below(period.as_nanos() as u64 * 4 + 1))
        };
        sleep_until(now + stall).await;
    }
    Ok(())
}

/// Timeouts that expire at once, back to back, more than a budget's
/// worth: the task yields meanwhile, so a task spawned beside it runs.
async fn expiring() -> io::Result<()> {
    let ran = Rc::new(Cell::new(false));
    let beside = {
        let ran = ran.clone();
        ioloop::spawn_local(async move { ran.set(true) })
    };
    for _ in 0..300 {
        let result = timeout(Duration::ZERO, pending::<()>()).await;
        check(result.is_err(), || {
            "a zero timeout around a pending future did not expire".into()
        })?;
    }
    check(ran.get(), || {
        "300 expiring timeouts never let another task run".into()
    })?;
    beside.await.map_err(io::Error::other)
}

/// The world: four tasks side by side, each a seeded mix of the above.
fn world(seed: u64) -> Sim {
    let mut sim = crate::worlds::sim(seed, Faults::default());
    sim.client("timekeeper", move || async move {
        let tasks: Vec<_> = (0..4u64)
            .map(|t| {
                ioloop::spawn_local(async move {
                    let mut draw = Draw(Rng::new(seed.wrapping_mul(31).wrapping_add(t)));
                    for _ in 0..8 {
                        match draw.below(5) {
                            0 => one_sleep(&mut draw).await?,
                            1 => moved_sleep(&mut draw).await?,
                            2 => raced(&mut draw).await?,
                            3 => ticking(&mut draw).await?,
                            _ => expiring().await?,
                        }
                    }
                    io::Result::Ok(())
                })
            })
            .collect();
        for task in tasks {
            task.await.map_err(io::Error::other)??;
        }
        Ok(())
    });
    sim
}

#[test]
fn sleeps_timeouts_and_intervals_keep_time_exactly_under_every_seed() {
    let runs = run_seeds(0..crate::seeds(), world).unwrap_or_else(|failure| panic!("{failure}"));
    assert!(runs >= 1);
}
