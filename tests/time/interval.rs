//! `interval` and `interval_at`: ticks on the schedule, the first at once;
//! the three `MissedTickBehavior`s after a stall; `Interval` as a `Stream`.
//!
//! The stalls are deliberate: a task blocks the loop thread with
//! `std::thread::sleep` for a few periods, so ticks are missed for certain.
//! Assertions never rely on how long the stall really took: each one is
//! bracketed by instants read before and after the event it checks.

use std::future::poll_fn;
use std::io;
use std::pin::Pin;
use std::task::Poll;
use std::time::Duration;

use ioloop::time::Instant;

use futures_core::Stream;
use ioloop::time::{Interval, MissedTickBehavior, interval, interval_at, timeout};
use testkit::time_poll;
use time_poll::poll_once;

/// Safety net for waits that should end long before it; never a measure.
const SAFETY: Duration = Duration::from_secs(10);
const PERIOD: Duration = Duration::from_millis(10);

/// Blocks the loop thread for `d`, from inside a task, as a busy task would.
async fn stall_loop(d: Duration) {
    ioloop::spawn(async move { std::thread::sleep(d) })
        .await
        .expect("the stalling task failed");
}

/// Waits for the next tick, bounded by the safety net.
async fn tick(iv: &mut Interval) -> io::Result<Instant> {
    Ok(timeout(SAFETY, iv.tick()).await?)
}

/// Which instant of the grid `start + k * period` `at` is; fails if it is
/// off the grid.
fn grid_index(start: Instant, at: Instant, period: Duration) -> u128 {
    let offset = at - start;
    assert_eq!(
        offset.as_nanos() % period.as_nanos(),
        0,
        "{offset:?} is off the grid of {period:?}"
    );
    offset.as_nanos() / period.as_nanos()
}

#[test]
fn the_first_tick_is_immediate_and_the_rest_are_on_the_schedule() -> io::Result<()> {
    ioloop::block_on(async {
        let before = Instant::now();
        let mut iv = interval(PERIOD);
        assert_eq!(iv.period(), PERIOD);
        let Poll::Ready(first) = poll_once(&mut Box::pin(iv.tick())) else {
            panic!("the first tick of `interval` was not ready at once");
        };
        assert!(first >= before && first <= Instant::now());

        // With the default policy (Skip) a tick the loop was too late for
        // would be skipped, so consecutive ticks are one period apart when
        // the loop keeps up and a whole number of periods apart always.
        let mut last = 0;
        for _ in 0..5 {
            let scheduled = tick(&mut iv).await?;
            assert!(Instant::now() >= scheduled, "a tick came early");
            let k = grid_index(first, scheduled, PERIOD);
            assert!(k > last, "tick {k} after tick {last}");
            last = k;
        }

        // Burst owes every tick, so there the schedule is exact.
        let start = Instant::now();
        let mut iv = interval_at(start, PERIOD);
        iv.set_missed_tick_behavior(MissedTickBehavior::Burst);
        for k in 0..5u32 {
            let scheduled = tick(&mut iv).await?;
            assert_eq!(scheduled, start + PERIOD * k, "tick {k} off the schedule");
            assert!(Instant::now() >= scheduled, "tick {k} came early");
        }
        Ok(())
    })
}

#[test]
fn interval_at_starts_at_its_start_instant() -> io::Result<()> {
    ioloop::block_on(async {
        let start = Instant::now() + Duration::from_millis(15);
        let mut iv = interval_at(start, PERIOD);
        assert_eq!(tick(&mut iv).await?, start);
        assert!(Instant::now() >= start);
        let second = tick(&mut iv).await?;
        assert!(grid_index(start, second, PERIOD) >= 1);
        assert!(Instant::now() >= second);
        Ok(())
    })
}

/// Item 12 of the correctness issue: Skip is the default (tokio's is
/// Burst), the one that suits housekeeping: after a stall, no burst of
/// missed ticks, and the schedule stays on its grid.
#[test]
fn interval_default_missed_tick_behavior_is_skip_unlike_tokio() -> io::Result<()> {
    assert_eq!(MissedTickBehavior::default(), MissedTickBehavior::Skip);
    ioloop::block_on(async {
        let start = Instant::now();
        let mut iv = interval_at(start, PERIOD);
        assert_eq!(iv.missed_tick_behavior(), MissedTickBehavior::Skip);
        assert_eq!(tick(&mut iv).await?, start);
        stall_loop(PERIOD * 7 / 2).await;
        // The late tick, then the grid instant after the stall: ticks 2
        // and 3 are skipped, where Burst would deliver them back to back.
        assert_eq!(tick(&mut iv).await?, start + PERIOD);
        let next = tick(&mut iv).await?;
        assert!(grid_index(start, next, PERIOD) >= 4);
        Ok(())
    })
}

#[test]
fn burst_delivers_every_missed_tick_back_to_back_on_the_grid() -> io::Result<()> {
    ioloop::block_on(async {
        let start = Instant::now();
        let mut iv = interval_at(start, PERIOD);
        iv.set_missed_tick_behavior(MissedTickBehavior::Burst);
        assert_eq!(tick(&mut iv).await?, start);

        // At least 3.5 periods late: ticks start+10, +20 and +30 are missed.
        stall_loop(PERIOD * 7 / 2).await;

        for k in 1..=3u32 {
            match poll_once(&mut Box::pin(iv.tick())) {
                Poll::Ready(at) => assert_eq!(at, start + PERIOD * k),
                Poll::Pending => panic!("missed tick {k} was not delivered at once"),
            }
        }
        // Burst never leaves the grid, however long the stall really was.
        assert_eq!(tick(&mut iv).await?, start + PERIOD * 4);
        assert!(Instant::now() >= start + PERIOD * 4);
        Ok(())
    })
}

#[test]
fn delay_restarts_the_schedule_one_period_after_the_late_tick() -> io::Result<()> {
    ioloop::block_on(async {
        let start = Instant::now();
        let mut iv = interval_at(start, PERIOD);
        iv.set_missed_tick_behavior(MissedTickBehavior::Delay);
        assert_eq!(tick(&mut iv).await?, start);

        stall_loop(PERIOD * 7 / 2).await;

        // The late tick is delivered at once, for the instant it was due.
        let before = Instant::now();
        let Poll::Ready(late) = poll_once(&mut Box::pin(iv.tick())) else {
            panic!("the late tick was not delivered at once");
        };
        let after = Instant::now();
        assert_eq!(late, start + PERIOD);

        // The next one is a whole period after the late one was delivered.
        let next = tick(&mut iv).await?;
        assert!(next >= before + PERIOD, "{:?}", next - before);
        assert!(next <= after + PERIOD, "{:?}", next - after);
        assert!(Instant::now() >= next);

        // And the spacing holds from there (more if the loop was late again).
        let third = tick(&mut iv).await?;
        assert!(third >= next + PERIOD);
        assert!(Instant::now() >= third);
        Ok(())
    })
}

#[test]
fn skip_drops_missed_ticks_and_resumes_on_the_original_grid() -> io::Result<()> {
    ioloop::block_on(async {
        let start = Instant::now();
        let mut iv = interval_at(start, PERIOD);
        iv.set_missed_tick_behavior(MissedTickBehavior::Skip);
        assert_eq!(tick(&mut iv).await?, start);

        stall_loop(PERIOD * 7 / 2).await;

        let before = Instant::now();
        let Poll::Ready(late) = poll_once(&mut Box::pin(iv.tick())) else {
            panic!("the late tick was not delivered at once");
        };
        let after = Instant::now();
        assert_eq!(late, start + PERIOD);

        // The next tick: the first grid instant after the late delivery.
        let next = tick(&mut iv).await?;
        let k = grid_index(start, next, PERIOD);
        assert!(k >= 4, "tick {k} of the grid was missed, not skipped");
        assert!(next > before, "the resumed tick is in the past");
        assert!(
            next - PERIOD <= after,
            "an earlier grid instant was still in the future"
        );
        assert!(Instant::now() >= next);
        Ok(())
    })
}

#[test]
fn an_interval_is_a_stream_of_scheduled_instants() -> io::Result<()> {
    ioloop::block_on(async {
        let start = Instant::now();
        let mut iv = interval_at(start, PERIOD);
        // Burst, so the instants are exact whatever the machine's load.
        iv.set_missed_tick_behavior(MissedTickBehavior::Burst);
        for k in 0..3u32 {
            let next = timeout(SAFETY, poll_fn(|cx| Pin::new(&mut iv).poll_next(cx))).await?;
            assert_eq!(next, Some(start + PERIOD * k));
            assert!(Instant::now() >= start + PERIOD * k);
        }
        Ok(())
    })
}

#[test]
fn reset_restarts_the_schedule_one_period_from_now() -> io::Result<()> {
    ioloop::block_on(async {
        let mut iv = interval(PERIOD);
        tick(&mut iv).await?;
        let before = Instant::now();
        iv.reset();
        let after = Instant::now();
        let at = tick(&mut iv).await?;
        assert!(at >= before + PERIOD, "{:?}", at - before);
        assert!(at <= after + PERIOD, "{:?}", at - after);
        assert!(Instant::now() >= at);

        // Reset long before it is due, a tick is still a whole period away.
        let mut hourly = interval(Duration::from_secs(3600));
        tick(&mut hourly).await?;
        hourly.reset();
        assert!(poll_once(&mut Box::pin(hourly.tick())).is_pending());
        Ok(())
    })
}

/// BUG (runtime/src/time/interval.rs:114, also :136): `poll_tick` computes
/// the next tick as `scheduled + self.period` with `Instant`'s panicking
/// `+`, so a period too large to add to the clock (`Duration::MAX`, or a
/// "never" read from configuration) panics on the very first tick, inside
/// the task that polls it. `sleep` saturates such a duration on purpose
/// (time/sleep.rs, `checked_add(..).unwrap_or_else(..)`); `interval` should
/// do the same: first tick at once, the next one practically never.
#[test]
fn a_huge_period_saturates_instead_of_panicking() -> io::Result<()> {
    ioloop::block_on(async {
        let mut iv = interval(Duration::MAX);
        let first = poll_once(&mut Box::pin(iv.tick()));
        assert!(first.is_ready(), "the first tick is due at once");
        assert!(poll_once(&mut Box::pin(iv.tick())).is_pending());
        // `reset` has the same `+` (interval.rs:136).
        iv.reset();
        assert!(poll_once(&mut Box::pin(iv.tick())).is_pending());
        Ok(())
    })
}
