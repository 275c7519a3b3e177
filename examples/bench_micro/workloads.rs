//! The runtime-only workloads of the comparison, each written once over
//! [`Rt`] so that it has the same shape on every runtime.

use std::future::{Future, poll_fn};
use std::task::Poll;
use std::time::Duration;

use crate::baton::Baton;
use crate::rt::Rt;

/// Spawns `n` trivial tasks, then joins each: the cost of a task from
/// birth to death (allocation, first schedule, poll, output, join, free).
/// Every task is alive at once, so the peak RSS is `n` tasks and handles.
pub async fn spawn_join<R: Rt>(n: usize) {
    let handles: Vec<_> = (0..n).map(|i| R::spawn(async move { i })).collect();
    let mut sum = 0usize;
    for handle in handles {
        sum = sum.wrapping_add(handle.await);
    }
    assert_eq!(sum, (0..n).fold(0usize, usize::wrapping_add));
}

/// Spawns a task and waits for it, `n` times in turn: each handle is
/// awaited before its task has run, so every join waits (the path a
/// detached task never takes, and `spawn` above takes once).
pub async fn spawn_wait<R: Rt>(n: usize) {
    let mut sum = 0usize;
    for i in 0..n {
        sum = sum.wrapping_add(R::spawn(async move { i }).await);
    }
    assert_eq!(sum, (0..n).fold(0usize, usize::wrapping_add));
}

/// Arms `n` timers, all at once, and waits until every one has fired.
///
/// The shape, and why:
/// - One task owns every timer, so no task is spawned: the time is the
///   timer's insert + fire (+ the wake of the one task), not task churn.
/// - All `n` are armed in a single poll, before the loop can fire any:
///   the timer structure holds `n` entries at its peak, and the peak RSS
///   is the memory of `n` armed timers.
/// - Each timer is due 1–2 ms after it was armed, in a scattered order
///   (a heap gets real sifting, not sorted pushes). Arming a million takes
///   far longer than that, so by the time the loop looks, nearly all are
///   due: the run is CPU-bound, the wall time is the timer cost, and the
///   idle tail is at most the last timers' 2 ms. (Longer sleeps would add
///   idle time; sequential sleeps per task would make it clock-bound.)
/// - Each `Sleep` is boxed: tokio's is `!Unpin` and a collection of them
///   needs one box each. ioloop's is `Unpin` and would not, but it is boxed
///   too, so both pay the same allocation and the difference is the timers.
/// - After arming, each wake polls the timers not yet fired; those that
///   have are dropped (fired timers free their entries).
/// - On smol, async-io's `async-io` thread fires due timers while the
///   arming poll still runs (sharing its core under taskset), so smol's
///   timer map never holds `n` entries: its peak RSS is mostly the boxed
///   timers. (With sleeps of seconds instead, it equals tokio's.)
/// - First, one sentinel timer is armed and the loop given a turn, so the
///   timer driver has parked knowing a deadline earlier than all the
///   others, as in a server that is already running. Without it tokio,
///   whose driver last parked with no timer armed, takes every insert for
///   "earlier than the next wake-up" and unparks the driver each time:
///   one eventfd `write` per timer, a million syscalls that measure the
///   cold start, not the timers.
pub async fn timers<R: Rt>(n: usize) {
    let mut sentinel = Box::pin(R::sleep(Duration::from_millis(1)));
    poll_fn(|cx| {
        let _pending = sentinel.as_mut().poll(cx);
        Poll::Ready(())
    })
    .await;
    R::yield_now().await;
    let mut sleeps = Vec::with_capacity(n);
    let arm_all = poll_fn(|cx| {
        for j in 0..n {
            let micros = 1000 + (j as u64 * 7919) % 1000;
            let mut sleep = Box::pin(R::sleep(Duration::from_micros(micros)));
            // Pending (armed) unless this thread was preempted for more
            // than a millisecond since the sleep was made. One that is done
            // is not kept: a future is not polled again once Ready (smol's
            // `Timer`, polled again, stays Pending for ever).
            if sleep.as_mut().poll(cx).is_pending() {
                sleeps.push(sleep);
            }
        }
        Poll::Ready(())
    });
    R::unbudgeted(arm_all).await;
    let fire_all = poll_fn(|cx| {
        sleeps.retain_mut(|sleep| sleep.as_mut().poll(cx).is_pending());
        if sleeps.is_empty() {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    });
    R::unbudgeted(fire_all).await;
    drop(sentinel);
}

/// Two tasks pass a baton back and forth `n` times (see `baton.rs`): each
/// hop is one waker clone, one wake, one schedule and one poll.
pub async fn pingpong<R: Rt>(n: usize) {
    let baton = Baton::new(n);
    let ping = R::spawn(baton.clone().play(0));
    let pong = R::spawn(baton.play(1));
    ping.await;
    pong.await;
}
