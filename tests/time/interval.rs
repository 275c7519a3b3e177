//! `interval` and `interval_at`: ticks on the schedule, the first at once;
//! the three `MissedTickBehavior`s after a stall; `Interval` as a `Stream`;
//! `reset`, `reset_immediately`, `reset_after` and `reset_at`.
//!
//! On a paused clock (`start_paused`): a stall is `advance`, which moves
//! the clock past ticks without the interval's task running, exactly as a
//! busy loop would, so every instant is checked exactly, whatever the
//! machine's speed. The last test keeps a real stall of the loop thread.

use std::future::poll_fn;
use std::io;
use std::pin::Pin;
use std::task::Poll;
use std::time::Duration;

use futures_core::Stream;
use ioloop::time::{
    Instant, Interval, MissedTickBehavior, advance, interval, interval_at, timeout,
};
use testkit::time_poll;
use time_poll::poll_once;

/// Safety net for waits that should end long before it; never a measure.
/// On a paused clock it is virtual: a tick that never comes fails at once.
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

#[ioloop::test(start_paused = true)]
async fn the_first_tick_is_immediate_and_the_rest_are_on_the_schedule() -> io::Result<()> {
    let start = Instant::now();
    let mut iv = interval(PERIOD);
    assert_eq!(iv.period(), PERIOD);
    let Poll::Ready(first) = poll_once(&mut Box::pin(iv.tick())) else {
        panic!("the first tick of `interval` was not ready at once");
    };
    assert_eq!(first, start);
    for k in 1..=5u32 {
        let scheduled = tick(&mut iv).await?;
        assert_eq!(scheduled, start + PERIOD * k, "tick {k} off the schedule");
        assert_eq!(Instant::now(), scheduled, "tick {k} came off its instant");
    }
    Ok(())
}

#[ioloop::test(start_paused = true)]
async fn interval_at_starts_at_its_start_instant() -> io::Result<()> {
    let start = Instant::now() + Duration::from_millis(15);
    let mut iv = interval_at(start, PERIOD);
    assert_eq!(tick(&mut iv).await?, start);
    assert_eq!(Instant::now(), start);
    assert_eq!(tick(&mut iv).await?, start + PERIOD);
    assert_eq!(Instant::now(), start + PERIOD);
    Ok(())
}

/// Item 12 of the correctness issue: Skip is the default (tokio's is
/// Burst), the one that suits housekeeping: after a stall, no burst of
/// missed ticks, and the schedule stays on its grid.
#[ioloop::test(start_paused = true)]
async fn interval_default_missed_tick_behavior_is_skip_unlike_tokio() -> io::Result<()> {
    assert_eq!(MissedTickBehavior::default(), MissedTickBehavior::Skip);
    let start = Instant::now();
    let mut iv = interval_at(start, PERIOD);
    assert_eq!(iv.missed_tick_behavior(), MissedTickBehavior::Skip);
    assert_eq!(tick(&mut iv).await?, start);
    advance(PERIOD * 7 / 2).await;
    // The late tick, then the grid instant after the stall: ticks 2 and 3
    // are skipped, where Burst would deliver them back to back.
    assert_eq!(tick(&mut iv).await?, start + PERIOD);
    assert_eq!(tick(&mut iv).await?, start + PERIOD * 4);
    Ok(())
}

#[ioloop::test(start_paused = true)]
async fn burst_delivers_every_missed_tick_back_to_back_on_the_grid() -> io::Result<()> {
    let start = Instant::now();
    let mut iv = interval_at(start, PERIOD);
    iv.set_missed_tick_behavior(MissedTickBehavior::Burst);
    assert_eq!(tick(&mut iv).await?, start);

    // 3.5 periods late: ticks start+10, +20 and +30 are missed.
    advance(PERIOD * 7 / 2).await;

    for k in 1..=3u32 {
        match poll_once(&mut Box::pin(iv.tick())) {
            Poll::Ready(at) => assert_eq!(at, start + PERIOD * k),
            Poll::Pending => panic!("missed tick {k} was not delivered at once"),
        }
    }
    // Burst never leaves the grid.
    assert_eq!(tick(&mut iv).await?, start + PERIOD * 4);
    assert_eq!(Instant::now(), start + PERIOD * 4);
    Ok(())
}

#[ioloop::test(start_paused = true)]
async fn delay_restarts_the_schedule_one_period_after_the_late_tick() -> io::Result<()> {
    let start = Instant::now();
    let mut iv = interval_at(start, PERIOD);
    iv.set_missed_tick_behavior(MissedTickBehavior::Delay);
    assert_eq!(tick(&mut iv).await?, start);

    advance(PERIOD * 7 / 2).await;

    // The late tick is delivered at once, for the instant it was due.
    let late_at = Instant::now();
    let Poll::Ready(late) = poll_once(&mut Box::pin(iv.tick())) else {
        panic!("the late tick was not delivered at once");
    };
    assert_eq!(late, start + PERIOD);

    // The next one is a whole period after the late one was delivered, and
    // the spacing holds from there.
    assert_eq!(tick(&mut iv).await?, late_at + PERIOD);
    assert_eq!(tick(&mut iv).await?, late_at + PERIOD * 2);
    assert_eq!(Instant::now(), late_at + PERIOD * 2);
    Ok(())
}

#[ioloop::test(start_paused = true)]
async fn skip_drops_missed_ticks_and_resumes_on_the_original_grid() -> io::Result<()> {
    let start = Instant::now();
    let mut iv = interval_at(start, PERIOD);
    iv.set_missed_tick_behavior(MissedTickBehavior::Skip);
    assert_eq!(tick(&mut iv).await?, start);

    advance(PERIOD * 7 / 2).await;

    let Poll::Ready(late) = poll_once(&mut Box::pin(iv.tick())) else {
        panic!("the late tick was not delivered at once");
    };
    assert_eq!(late, start + PERIOD);

    // The next tick: the first grid instant after the late delivery.
    let next = tick(&mut iv).await?;
    assert_eq!(grid_index(start, next, PERIOD), 4);
    assert_eq!(Instant::now(), next);
    Ok(())
}

/// A tick taken late but before the next one is due misses nothing, so
/// every behaviour keeps the grid: Delay restarts the schedule only for a
/// missed tick. At the edge, a tick taken just as the next falls due
/// (one period late) has missed it; a nanosecond earlier it has not.
#[ioloop::test(start_paused = true)]
async fn a_late_tick_that_misses_none_keeps_the_grid_in_every_behavior() -> io::Result<()> {
    let nano = Duration::from_nanos(1);
    for missed in [
        MissedTickBehavior::Burst,
        MissedTickBehavior::Delay,
        MissedTickBehavior::Skip,
    ] {
        for late in [PERIOD * 3 / 10, PERIOD - nano, PERIOD, PERIOD + nano] {
            let start = Instant::now();
            let mut iv = interval_at(start, PERIOD);
            iv.set_missed_tick_behavior(missed);
            assert_eq!(iv.missed_tick_behavior(), missed);
            assert_eq!(tick(&mut iv).await?, start);
            advance(PERIOD + late).await;
            let taken_at = Instant::now();
            let Poll::Ready(due) = poll_once(&mut Box::pin(iv.tick())) else {
                panic!("{missed:?}: the late tick was not delivered at once");
            };
            assert_eq!(due, start + PERIOD);
            let expected = match missed {
                _ if late < PERIOD => start + PERIOD * 2,
                MissedTickBehavior::Burst => start + PERIOD * 2,
                MissedTickBehavior::Delay => taken_at + PERIOD,
                MissedTickBehavior::Skip => start + PERIOD * 3,
            };
            assert_eq!(tick(&mut iv).await?, expected, "{missed:?}, {late:?} late");
        }
    }
    Ok(())
}

#[ioloop::test(start_paused = true)]
async fn an_interval_is_a_stream_of_scheduled_instants() -> io::Result<()> {
    let start = Instant::now();
    let mut iv = interval_at(start, PERIOD);
    for k in 0..3u32 {
        let next = timeout(SAFETY, poll_fn(|cx| Pin::new(&mut iv).poll_next(cx))).await?;
        assert_eq!(next, Some(start + PERIOD * k));
        assert_eq!(Instant::now(), start + PERIOD * k);
    }
    Ok(())
}

#[ioloop::test(start_paused = true)]
async fn reset_restarts_the_schedule_one_period_from_now() -> io::Result<()> {
    let mut iv = interval(PERIOD);
    tick(&mut iv).await?;
    advance(PERIOD / 2).await;
    let reset_at = Instant::now();
    iv.reset();
    assert_eq!(tick(&mut iv).await?, reset_at + PERIOD);
    assert_eq!(Instant::now(), reset_at + PERIOD);

    // Reset long before it is due, a tick is still a whole period away.
    let mut hourly = interval(Duration::from_secs(3600));
    tick(&mut hourly).await?;
    advance(Duration::from_secs(1800)).await;
    hourly.reset();
    let reset_at = Instant::now();
    assert!(poll_once(&mut Box::pin(hourly.tick())).is_pending());
    advance(Duration::from_secs(3599)).await;
    assert!(poll_once(&mut Box::pin(hourly.tick())).is_pending());
    assert_eq!(
        tick(&mut hourly).await?,
        reset_at + Duration::from_secs(3600)
    );
    Ok(())
}

/// A real stall of the loop thread, on the real clock: the loop's own
/// lateness, not a jump of the clock, makes the missed ticks. Assertions
/// are bracketed by instants read before and after the event they check.
#[test]
fn a_real_stall_of_the_loop_skips_ticks_on_the_real_clock() -> io::Result<()> {
    ioloop::block_on(async {
        let start = Instant::now();
        let mut iv = interval_at(start, PERIOD);
        assert_eq!(tick(&mut iv).await?, start);
        stall_loop(PERIOD * 7 / 2).await;
        let before = Instant::now();
        let Poll::Ready(late) = poll_once(&mut Box::pin(iv.tick())) else {
            panic!("the late tick was not delivered at once");
        };
        let after = Instant::now();
        assert_eq!(late, start + PERIOD);
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

/// Issue 28, item 12: with `Skip`, a 1 µs period and a 2 h stall, the
/// count of missed periods was capped at `u32::MAX` (71 minutes' worth),
/// so the "next" tick was still in the past and the interval burst. The
/// next tick must be the first grid instant after now, whatever the stall.
#[ioloop::test(start_paused = true)]
async fn interval_skip_after_a_long_stall_never_schedules_a_tick_in_the_past() -> io::Result<()> {
    for period in [
        Duration::from_micros(1),
        Duration::from_nanos(3),
        Duration::from_nanos(1),
    ] {
        let start = Instant::now();
        let mut iv = interval_at(start, period);
        iv.set_missed_tick_behavior(MissedTickBehavior::Skip);
        assert_eq!(tick(&mut iv).await?, start);

        advance(Duration::from_secs(2 * 3600)).await;
        let stalled_until = Instant::now();

        // The late tick, once.
        let Poll::Ready(late) = poll_once(&mut Box::pin(iv.tick())) else {
            panic!("the late tick was not delivered at once");
        };
        assert_eq!(late, start + period);
        // Then nothing until the clock moves: the next tick is ahead.
        assert!(
            poll_once(&mut Box::pin(iv.tick())).is_pending(),
            "a {period:?} interval burst after a 2 h stall"
        );
        let next = tick(&mut iv).await?;
        assert!(next > stalled_until, "{period:?}");
        assert!(next - stalled_until <= period, "{period:?}");
        grid_index(start, next, period);
    }
    Ok(())
}

/// Item 12, the other policies at the extremes. `Delay` after a 2 h stall
/// with a 1 µs period: the next tick one period after the late one. `Burst`
/// owes every missed tick (7.2 billion here) and delivers them back to back,
/// on the grid, as tokio does; each spends the task's budget like any ready
/// sleep, so the loop still runs other tasks meanwhile.
#[ioloop::test(start_paused = true)]
async fn interval_delay_and_burst_after_a_long_stall_with_a_tiny_period() -> io::Result<()> {
    let period = Duration::from_micros(1);
    let start = Instant::now();
    let mut iv = interval_at(start, period);
    iv.set_missed_tick_behavior(MissedTickBehavior::Delay);
    assert_eq!(tick(&mut iv).await?, start);
    advance(Duration::from_secs(2 * 3600)).await;
    let late_at = Instant::now();
    assert_eq!(tick(&mut iv).await?, start + period);
    assert!(poll_once(&mut Box::pin(iv.tick())).is_pending());
    assert_eq!(tick(&mut iv).await?, late_at + period);

    let start = Instant::now();
    let mut iv = interval_at(start, period);
    iv.set_missed_tick_behavior(MissedTickBehavior::Burst);
    assert_eq!(tick(&mut iv).await?, start);
    advance(Duration::from_secs(2 * 3600)).await;
    let other_ran = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let other = {
        let other_ran = other_ran.clone();
        ioloop::spawn(async move { other_ran.store(true, std::sync::atomic::Ordering::SeqCst) })
    };
    for k in 1..=10_000u32 {
        assert_eq!(tick(&mut iv).await?, start + period * k);
    }
    assert!(
        other_ran.load(std::sync::atomic::Ordering::SeqCst),
        "a burst of ticks kept another task from running"
    );
    other.await.unwrap();
    Ok(())
}

/// Item 12 with the period at its extreme: the next tick saturates to
/// "never" on every policy, and no arithmetic overflows.
#[ioloop::test(start_paused = true)]
async fn interval_with_a_maximal_period_saturates_on_every_policy() -> io::Result<()> {
    for policy in [
        MissedTickBehavior::Burst,
        MissedTickBehavior::Delay,
        MissedTickBehavior::Skip,
    ] {
        let start = Instant::now();
        let mut iv = interval_at(start, Duration::MAX);
        iv.set_missed_tick_behavior(policy);
        assert_eq!(tick(&mut iv).await?, start);
        advance(Duration::MAX).await;
        let _ = poll_once(&mut Box::pin(iv.tick()));
        assert!(
            poll_once(&mut Box::pin(iv.tick())).is_pending(),
            "{policy:?}"
        );
    }
    Ok(())
}

#[ioloop::test(start_paused = true)]
async fn reset_immediately_makes_the_next_tick_due_now() -> io::Result<()> {
    let mut iv = interval(PERIOD);
    tick(&mut iv).await?;
    advance(PERIOD / 2).await;
    let reset_at = Instant::now();
    iv.reset_immediately();
    let Poll::Ready(now) = poll_once(&mut Box::pin(iv.tick())) else {
        panic!("the tick after reset_immediately was not ready at once");
    };
    assert_eq!(now, reset_at);
    // The schedule goes on from there.
    assert_eq!(tick(&mut iv).await?, reset_at + PERIOD);
    assert_eq!(Instant::now(), reset_at + PERIOD);
    Ok(())
}

#[ioloop::test(start_paused = true)]
async fn reset_after_moves_the_next_tick_and_the_schedule_with_it() -> io::Result<()> {
    let mut iv = interval(PERIOD);
    tick(&mut iv).await?;
    let reset_at = Instant::now();
    iv.reset_after(PERIOD * 3);
    advance(PERIOD * 2).await;
    assert!(poll_once(&mut Box::pin(iv.tick())).is_pending());
    assert_eq!(tick(&mut iv).await?, reset_at + PERIOD * 3);
    assert_eq!(tick(&mut iv).await?, reset_at + PERIOD * 4);
    assert_eq!(Instant::now(), reset_at + PERIOD * 4);
    Ok(())
}

/// `reset_at` a deadline in the future, more than a period away, forgets
/// the ticks missed before; one in the past is a missed tick, caught up on
/// as the missed-tick policy says (Burst here).
#[ioloop::test(start_paused = true)]
async fn reset_at_forgets_missed_ticks_and_a_past_deadline_is_caught_up_on() -> io::Result<()> {
    let start = Instant::now();
    let mut iv = interval_at(start, PERIOD);
    iv.set_missed_tick_behavior(MissedTickBehavior::Burst);
    assert_eq!(tick(&mut iv).await?, start);
    advance(PERIOD * 7 / 2).await; // three ticks missed
    let later = Instant::now() + PERIOD * 5;
    iv.reset_at(later);
    assert!(poll_once(&mut Box::pin(iv.tick())).is_pending());
    assert_eq!(tick(&mut iv).await?, later);
    assert_eq!(Instant::now(), later);
    assert_eq!(tick(&mut iv).await?, later + PERIOD);

    // Two and a half periods in the past: that tick and the two after it
    // are due at once, back to back, then the grid goes on.
    let past = Instant::now() - PERIOD * 5 / 2;
    iv.reset_at(past);
    for k in 0..3u32 {
        let Poll::Ready(at) = poll_once(&mut Box::pin(iv.tick())) else {
            panic!("missed tick {k} after reset_at was not delivered at once");
        };
        assert_eq!(at, past + PERIOD * k);
    }
    assert_eq!(tick(&mut iv).await?, past + PERIOD * 3);
    Ok(())
}
