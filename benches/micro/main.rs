//! Criterion micro-benchmarks: each operation on ioloop next to its tokio
//! counterpart (current_thread, the single-threaded peer) in one group.
//!
//! ```sh
//! cargo bench --bench micro                  # about a minute
//! cargo bench --bench micro -- wake          # one group
//! ```
//!
//! | group | what one iteration is |
//! |---|---|
//! | `spawn` | spawn a batch of 100 trivial tasks, join them |
//! | `wake` | `yield_now` (a task waking itself); one baton hop between two tasks |
//! | `timer` | create a sleep, poll it once so it is armed, drop it |
//! | `read_line` | read every line of 640 KiB of 64-byte lines from memory |
//!
//! Each runtime is built once per benchmark, and each sample runs as one
//! spawned task that times its own loop (`iter_custom`): neither building
//! the runtime nor entering it is measured.
//!
//! Not run by `cargo test` (a `harness = false` bench is only built with
//! `cargo test --benches` or `--all-targets`, and then runs each benchmark
//! once, as a smoke test); CI only builds it.

#[path = "../../examples/bench_micro/baton.rs"]
mod baton;
// Also gives `Rt::run` (bench_micro's, building a runtime per call), which
// the benchmarks do not use: they keep one runtime per benchmark instead.
#[allow(dead_code)]
#[path = "../../examples/bench_micro/rt.rs"]
mod rt;

mod read_line;
mod tasks;
mod timer;

use std::future::Future;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};

/// A runtime kept for a whole benchmark, running each sample as a task.
trait Host {
    /// Runs `body` as a spawned task and returns its output: the time it
    /// measured.
    fn time<F>(&self, body: F) -> Duration
    where
        F: Future<Output = Duration> + Send + 'static;
}

impl Host for ioloop::Runtime {
    fn time<F>(&self, body: F) -> Duration
    where
        F: Future<Output = Duration> + Send + 'static,
    {
        self.block_on(self.spawn(body))
            .expect("the benchmark task panicked")
    }
}

impl Host for tokio::runtime::Runtime {
    fn time<F>(&self, body: F) -> Duration
    where
        F: Future<Output = Duration> + Send + 'static,
    {
        self.block_on(self.spawn(body))
            .expect("the benchmark task panicked")
    }
}

fn ioloop_rt() -> ioloop::Runtime {
    ioloop::Runtime::new().expect("cannot create an ioloop runtime")
}

fn tokio_rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("cannot create a tokio runtime")
}

/// Short runs: nine benchmarks finish in about a minute. The operations
/// take nanoseconds, so even 20 samples of this length hold millions of
/// iterations each.
fn config() -> Criterion {
    Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_millis(1500))
}

criterion_group! {
    name = micro;
    config = config();
    targets = tasks::spawn, tasks::wake, timer::insert_cancel, read_line::read_line
}
criterion_main!(micro);
