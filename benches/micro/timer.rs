//! Timers: insert + cancel, the life of nearly every timeout a server arms
//! (the request finishes first and the timer is dropped).

use std::future::{Future, poll_fn};
use std::pin::pin;
use std::task::Poll;
use std::time::{Duration, Instant};

use criterion::Criterion;

use crate::rt::{Ioloop, Rt, TokioCt};
use crate::{Host, ioloop_rt, tokio_rt};

/// Create a sleep, poll it once so it is armed, drop it.
pub fn insert_cancel(c: &mut Criterion) {
    let mut group = c.benchmark_group("timer");
    let ioloop = ioloop_rt();
    group.bench_function("insert_cancel/ioloop", |b| {
        b.iter_custom(|iters| ioloop.time(arm_and_drop::<Ioloop>(iters)))
    });
    let tokio = tokio_rt();
    group.bench_function("insert_cancel/tokio_ct", |b| {
        b.iter_custom(|iters| tokio.time(arm_and_drop::<TokioCt>(iters)))
    });
    group.finish();
}

async fn arm_and_drop<R: Rt>(iters: u64) -> Duration {
    // A running server has an earlier timer armed when its driver parks.
    // Without one, tokio's driver (which last parked with no timer)
    // treats every insert as a new earliest deadline and unparks itself
    // with an eventfd write each time: a syscall per timer that measures
    // the cold start. So: arm an earlier sentinel and give the loop a turn.
    let mut sentinel = pin!(R::sleep(Duration::from_millis(500)));
    poll_fn(|cx| {
        let _pending = sentinel.as_mut().poll(cx);
        Poll::Ready(())
    })
    .await;
    R::yield_now().await;

    // Unbudgeted: past 128 polls in one task poll, tokio's `Sleep` returns
    // `Pending` without arming, and this would measure nothing.
    R::unbudgeted(async move {
        let start = Instant::now();
        for _ in 0..iters {
            let mut sleep = pin!(R::sleep(Duration::from_secs(1)));
            poll_fn(|cx| {
                let _pending = sleep.as_mut().poll(cx);
                Poll::Ready(())
            })
            .await;
        }
        start.elapsed()
    })
    .await
}
