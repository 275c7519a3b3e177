//! Tasks: spawn + join, and the two kinds of wake.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput};

use crate::baton::Baton;
use crate::rt::{Ioloop, Rt, TokioCt};
use crate::{Host, ioloop_rt, tokio_rt};

/// Tasks per iteration of the spawn benchmark: enough that the run queue
/// holds a batch, as it does in a server accepting a burst.
const BATCH: usize = 100;

/// Spawn a batch of trivial tasks, then join each.
pub fn spawn(c: &mut Criterion) {
    let mut group = c.benchmark_group("spawn");
    group.throughput(Throughput::Elements(BATCH as u64));
    let ioloop = ioloop_rt();
    group.bench_function("ioloop", |b| {
        b.iter_custom(|iters| ioloop.time(spawn_batches::<Ioloop>(iters)))
    });
    let tokio = tokio_rt();
    group.bench_function("tokio_ct", |b| {
        b.iter_custom(|iters| tokio.time(spawn_batches::<TokioCt>(iters)))
    });
    group.finish();
}

async fn spawn_batches<R: Rt>(iters: u64) -> Duration {
    let mut handles = Vec::with_capacity(BATCH);
    let start = Instant::now();
    for _ in 0..iters {
        handles.extend((0..BATCH).map(|i| R::spawn(async move { i })));
        for handle in handles.drain(..) {
            black_box(handle.await);
        }
    }
    start.elapsed()
}

/// A task waking itself (`yield_now`), and a wake from one task to another
/// (one hop of the baton: waker clone, wake, schedule, poll).
pub fn wake(c: &mut Criterion) {
    let mut group = c.benchmark_group("wake");
    let ioloop = ioloop_rt();
    let tokio = tokio_rt();
    group.bench_function("yield_now/ioloop", |b| {
        b.iter_custom(|iters| ioloop.time(yields::<Ioloop>(iters)))
    });
    group.bench_function("yield_now/tokio_ct", |b| {
        b.iter_custom(|iters| tokio.time(yields::<TokioCt>(iters)))
    });
    group.bench_function("cross_task/ioloop", |b| {
        b.iter_custom(|iters| ioloop.time(hops::<Ioloop>(iters)))
    });
    group.bench_function("cross_task/tokio_ct", |b| {
        b.iter_custom(|iters| tokio.time(hops::<TokioCt>(iters)))
    });
    group.finish();
}

async fn yields<R: Rt>(iters: u64) -> Duration {
    let start = Instant::now();
    for _ in 0..iters {
        R::yield_now().await;
    }
    start.elapsed()
}

async fn hops<R: Rt>(iters: u64) -> Duration {
    let baton = Baton::new(iters as usize);
    let start = Instant::now();
    let ping = R::spawn(baton.clone().play(0));
    let pong = R::spawn(baton.play(1));
    ping.await;
    pong.await;
    start.elapsed()
}
