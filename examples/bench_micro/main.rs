//! The runtime-only workloads of the comparison harness, on ioloop, tokio
//! current_thread, tokio multi_thread or smol: one workload per process,
//! so the peak RSS it reports belongs to that workload alone.
//!
//! ```sh
//! cargo build --release -p testkit --example bench_micro
//! target/release/examples/bench_micro --runtime ioloop --workload spawn
//! target/release/examples/bench_micro --runtime tokio_ct --workload timers --n 100000
//! ```
//!
//! Flags: `--runtime ioloop|tokio_ct|tokio_mt|smol`, `--workload
//! spawn|spawn_wait|timers|pingpong`, `--n` (default 1,000,000: tasks, timers or
//! hops), `--slow-poll-ms` (ioloop only: the stall detector's threshold,
//! default 100; 0 turns the detector off, to measure what it costs).
//! Prints one JSON line on stdout,
//! `{"workload", "runtime", "n", "seconds", "peak_rss_kb"}`, and a human
//! line on stderr. `seconds` is the wall time of the workload alone,
//! measured inside the runtime (building and dropping the runtime are not
//! in it); `peak_rss_kb` is the process's `VmHWM` at the end.
//!
//! - `rt.rs`: the runtimes behind one trait.
//! - `workloads.rs`: spawn + join, timers, pingpong, and why each has the
//!   shape it has.
//! - `baton.rs`: the waker handoff of pingpong (shared with benches/micro).

#[path = "../common/args.rs"]
mod args;
mod baton;
mod rt;
mod workloads;

use std::future::Future;
use std::time::{Duration, Instant};

use rt::{Ioloop, Rt, Smol, TokioCt, TokioMt};

const USAGE: &str = "usage: bench_micro --runtime ioloop|tokio_ct|tokio_mt|smol \
                     --workload spawn|spawn_wait|timers|pingpong [--n 1000000] [--slow-poll-ms 100]";

fn main() {
    let args = args::Args::parse(USAGE);
    let runtime: String = args.get("runtime", String::new());
    let workload: String = args.get("workload", String::new());
    let n: usize = args.get("n", 1_000_000);
    rt::set_slow_poll_ms(args.get("slow-poll-ms", 100));
    let elapsed = match runtime.as_str() {
        "ioloop" => run::<Ioloop>(&workload, n),
        "tokio_ct" => run::<TokioCt>(&workload, n),
        "tokio_mt" => run::<TokioMt>(&workload, n),
        "smol" => run::<Smol>(&workload, n),
        _ => usage(&format!("unknown --runtime {runtime:?}")),
    };
    let seconds = elapsed.as_secs_f64();
    let peak_rss_kb = peak_rss_kb();
    eprintln!(
        "bench_micro: {workload} on {runtime}, n = {n}: {seconds:.3} s \
         ({:.1} ns each), peak RSS {peak_rss_kb} KiB",
        seconds * 1e9 / n.max(1) as f64
    );
    let line = serde_json::json!({
        "workload": workload,
        "runtime": runtime,
        "n": n,
        "seconds": seconds,
        "peak_rss_kb": peak_rss_kb,
    });
    println!("{line}");
}

/// Runs `workload` on `R` and returns how long it took.
fn run<R: Rt>(workload: &str, n: usize) -> Duration {
    match workload {
        "spawn" => R::run(timed(workloads::spawn_join::<R>(n))),
        "spawn_wait" => R::run(timed(workloads::spawn_wait::<R>(n))),
        "timers" => R::run(timed(workloads::timers::<R>(n))),
        "pingpong" => R::run(timed(workloads::pingpong::<R>(n))),
        _ => usage(&format!("unknown --workload {workload:?}")),
    }
}

async fn timed(workload: impl Future<Output = ()>) -> Duration {
    let start = Instant::now();
    workload.await;
    start.elapsed()
}

/// The peak resident set (`VmHWM`) of this process, in KiB: the high-water
/// mark, so memory freed before the end still counts.
fn peak_rss_kb() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

fn usage(why: &str) -> ! {
    eprintln!("{why}\n\n{USAGE}");
    std::process::exit(2)
}
