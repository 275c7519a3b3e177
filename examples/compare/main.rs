//! The comparison harness: ioloop against tokio's current_thread and
//! multi_thread runtimes, side by side in one run (issue 5), and smol 2.x
//! in the runtime-only and idle-connection rows (issue 31).
//!
//! ```sh
//! cargo run --release -p testkit --example compare -- --quick     # about 2 minutes
//! cargo run --release -p testkit --example compare    # the full run
//! ```
//!
//! (`benches/compare.sh` does the same and installs what it needs first.)
//!
//! Every workload runs against each runtime in turn, A B C A B C, for
//! `--reps` repetitions (3 by default), so slow drifts of a noisy machine
//! hit all runtimes alike; the table shows the median and the min–max.
//! Servers are pinned to core 0 and clients to core 1 with taskset; all
//! traffic is on 127.0.0.1. Workloads:
//!
//! - echo ping-pong, 64 B messages, 100 and 1,000 connections (`loadgen`
//!   against `line_echo` / `line_echo_tokio`): messages/s, latency
//!   percentiles, and the server's CPU time per message (from
//!   /proc/PID/stat), the figure that separates runtimes when the client's
//!   core saturates first;
//! - HTTP/1.1 keep-alive hello under wrk, 100 connections;
//! - the same with hyper 1.x ("hyper 100 conns"): `hyper_hello` through
//!   `ioloop::compat::hyper` against `hyper_hello_tokio` on tokio's
//!   current_thread runtime (instructions per request: benches/hyper_cost.sh);
//! - spawn + join of 1,000,000 tasks, 1,000,000 timers, and a two-task
//!   ping-pong through a waker handoff (`bench_micro`): time and peak RSS;
//! - memory per idle connection (10,000 greeted, silent connections);
//!   smol (its twin `line_echo_smol`) is measured in this row and the
//!   `bench_micro` ones only;
//! - syscalls per echoed message (`strace -c -f` on the server).
//!
//! Beside the runtimes, `mio_raw` is `examples/mio_reference`: the lesson's
//! Reactor hand-written on mio, no executor at all, the floor for any
//! readiness-based runtime on the echo and HTTP workloads.
//!
//! It prints a Markdown table (also written to `target/compare/report.md`)
//! and draws `target/compare/ratios.svg`. wrk and strace are installed with
//! apt-get if missing; their workloads are skipped if that fails.
//!
//! Flags: `--quick`, `--reps N`, `--duration SECONDS` (per echo/HTTP run),
//! `--only TEXT` (workloads whose name contains TEXT), `--echo-conns
//! 100,1000` (the connection counts of the echo runs), `--out DIR`, and
//! `--from FILE` to redraw the table and chart from a saved run's
//! `samples.json` without measuring again.

mod chart;
mod procs;
mod report;
mod workloads;

use std::io;
use std::path::PathBuf;
use std::process::Command;
use std::time::Instant;

use workloads::{RUNTIMES, Runtime, Sample, progress};

struct Options {
    quick: bool,
    reps: usize,
    duration: f64,
    only: Option<String>,
    /// Connection counts of the echo runs, one run each.
    echo_conns: Vec<usize>,
    out: PathBuf,
    /// Re-draw the report from a saved run's samples instead of measuring.
    from: Option<PathBuf>,
}

fn options() -> Options {
    let mut o = Options {
        quick: false,
        reps: 3,
        duration: 5.0,
        only: None,
        echo_conns: vec![100, 1000],
        out: PathBuf::from("target/compare"),
        from: None,
    };
    let mut args = std::env::args().skip(1);
    let mut explicit_duration = false;
    while let Some(arg) = args.next() {
        let mut value = || {
            args.next()
                .unwrap_or_else(|| usage(&format!("{arg} needs a value")))
        };
        match arg.as_str() {
            "--quick" => o.quick = true,
            "--reps" => {
                o.reps = value()
                    .parse()
                    .unwrap_or_else(|_| usage("--reps takes a number"))
            }
            "--duration" => {
                o.duration = value()
                    .parse()
                    .unwrap_or_else(|_| usage("--duration takes seconds"));
                explicit_duration = true;
            }
            "--only" => o.only = Some(value()),
            "--echo-conns" => {
                o.echo_conns = value()
                    .split(',')
                    .map(|n| n.trim().parse().ok().filter(|&n: &usize| n > 0))
                    .collect::<Option<_>>()
                    .unwrap_or_else(|| usage("--echo-conns takes counts, as in 50,500"))
            }
            "--out" => o.out = PathBuf::from(value()),
            "--from" => o.from = Some(PathBuf::from(value())),
            "-h" | "--help" => usage(""),
            other => usage(&format!("unknown argument {other:?}")),
        }
    }
    if o.quick && !explicit_duration {
        o.duration = 0.4;
    }
    o.reps = o.reps.max(1);
    o
}

fn usage(why: &str) -> ! {
    eprintln!(
        "{why}\nusage: compare [--quick] [--reps 3] [--duration 5] [--only TEXT] [--echo-conns 100,1000] [--out target/compare]"
    );
    std::process::exit(2)
}

/// The programs the harness runs, built in release mode next to it: every
/// server of [`RUNTIMES`] (the reference server included) and the clients.
const PROGRAMS: [&str; 12] = [
    "line_echo",
    "line_echo_tokio",
    "line_echo_smol",
    "http_hello",
    "http_hello_tokio",
    "mio_reference",
    "hyper_hello",
    "hyper_hello_tokio",
    "kv_server",
    "kv_server_tokio",
    "loadgen",
    "bench_micro",
];

fn build_programs() -> io::Result<()> {
    for rt in &RUNTIMES {
        for (server, _) in [Some(rt.echo), rt.http].into_iter().flatten() {
            assert!(PROGRAMS.contains(&server), "{server} is run but not built");
        }
    }
    let dir = procs::examples_dir();
    if PROGRAMS.iter().all(|p| dir.join(p).exists()) && std::env::var_os("CARGO").is_none() {
        return Ok(());
    }
    progress("building the servers and clients (release) ...");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    // `--workspace`: the ioloop servers are the facade's examples, the
    // twins and the clients testkit's.
    cmd.args(["build", "--release", "--quiet", "--workspace"]);
    for p in PROGRAMS {
        cmd.args(["--example", p]);
    }
    let status = cmd.status()?;
    if !status.success() {
        return Err(io::Error::other(format!("cargo build failed: {status}")));
    }
    Ok(())
}

/// One planned run: a label and what to do for a runtime.
type Job = (String, Box<dyn Fn(&Runtime) -> io::Result<Vec<Sample>>>);

fn plan(o: &Options, have_wrk: bool, have_redis: bool) -> Vec<Job> {
    let d = o.duration;
    // Quick runs skip the warm-up: each connects its clients only once.
    let warm = if o.quick { 0.0 } else { 1.0 };
    let n = if o.quick { 100_000 } else { 1_000_000 };
    let idle = if o.quick { 500 } else { 10_000 };
    let mut jobs: Vec<Job> = Vec::new();
    for &conns in &o.echo_conns {
        jobs.push((
            format!("echo {conns} conns"),
            Box::new(move |rt| workloads::echo(rt, conns, d, warm)),
        ));
    }
    if have_wrk {
        jobs.push((
            "http 100 conns".into(),
            Box::new(move |rt| workloads::http(rt, 100, d, warm)),
        ));
        jobs.push((
            "hyper 100 conns".into(),
            Box::new(move |rt| workloads::hyper(rt, 100, d, warm)),
        ));
    }
    if have_redis {
        for pipeline in [1, 16] {
            let requests = if o.quick { 20_000 } else { 100_000 } * pipeline;
            jobs.push((
                format!("redis 50 clients -P {pipeline}"),
                Box::new(move |rt| workloads::redis(rt, pipeline, requests)),
            ));
        }
    }
    for w in ["spawn", "timers", "pingpong"] {
        jobs.push((w.into(), Box::new(move |rt| workloads::micro(rt, w, n))));
    }
    jobs.push((
        format!("idle {idle} conns"),
        Box::new(move |rt| workloads::idle_memory(rt, idle)),
    ));
    jobs.retain(|(name, _)| o.only.as_ref().is_none_or(|t| name.contains(t.as_str())));
    jobs
}

fn main() -> io::Result<()> {
    let o = options();
    if let Some(from) = &o.from {
        let saved: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(from)?)?;
        let header = saved["header"].as_str().unwrap_or_default().to_string();
        let notes = saved["notes"].as_str().unwrap_or_default().to_string();
        let samples: Vec<Sample> = saved["samples"]
            .as_array()
            .map(|a| a.iter().filter_map(Sample::from_json).collect())
            .unwrap_or_default();
        return write_report(&o, &header, &samples, &notes);
    }
    let started = Instant::now();
    let fds = procs::raise_fd_limit();
    if fds < 12_000 {
        progress(format!(
            "note: open-file limit is {fds}; the idle-connection run may fail"
        ));
    }
    build_programs()?;
    let have_wrk = procs::ensure_tool("wrk", "wrk");
    let have_strace = procs::ensure_tool("strace", "strace");
    let have_redis = procs::ensure_tool("redis-benchmark", "redis-tools");
    let jobs = plan(&o, have_wrk, have_redis);
    let total = jobs.len() * RUNTIMES.len() * o.reps;
    let mut samples = Vec::new();
    let mut failures = Vec::new();
    let mut done = 0;
    for rep in 1..=o.reps {
        for (name, job) in &jobs {
            for rt in &RUNTIMES {
                done += 1;
                let t = Instant::now();
                match job(rt) {
                    Ok(s) if s.is_empty() => {} // not applicable to this runtime
                    Ok(s) => {
                        let first = s
                            .first()
                            .map(|s| format!("{} {:.1} {}", s.metric, s.value, s.unit));
                        progress(format!(
                            "[{done}/{total}] {name} · {} · rep {rep}: {} ({:.1}s)",
                            rt.name,
                            first.unwrap_or_default(),
                            t.elapsed().as_secs_f64()
                        ));
                        samples.extend(s);
                    }
                    Err(err) => {
                        progress(format!(
                            "[{done}/{total}] {name} · {} · rep {rep}: FAILED: {err}",
                            rt.name
                        ));
                        failures.push(format!("{name} on {}: {err}", rt.name));
                    }
                }
            }
        }
    }
    let mut notes = Vec::new();
    if have_strace
        && o.only
            .as_ref()
            .is_none_or(|t| "syscalls".contains(t.as_str()))
    {
        let secs = if o.quick { 0.3 } else { 2.0 };
        for rt in RUNTIMES.iter().filter(|rt| rt.echo_under_load) {
            match workloads::syscalls(rt, 100, secs) {
                Ok((s, note)) => {
                    progress(format!(
                        "syscalls · {}: {:.3} per message",
                        rt.name, s[0].value
                    ));
                    samples.extend(s);
                    notes.push(note);
                }
                Err(err) => failures.push(format!("syscalls on {}: {err}", rt.name)),
            }
        }
    }
    let when = Command::new("date")
        .arg("-u")
        .arg("+%Y-%m-%d %H:%M UTC")
        .output();
    let when = when
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    let mode = if o.quick { "--quick" } else { "full" };
    let header = format!(
        "Run {when}, {mode}, {} repetition(s), {:.1}s per echo/HTTP run; servers on core {}, clients on core {}.",
        o.reps,
        o.duration,
        procs::SERVER_CORE,
        procs::CLIENT_CORE
    );
    let mut extra = String::new();
    if !notes.is_empty() {
        extra.push_str(&format!(
            "\nSyscalls per message, by call: {}.\n",
            notes.join("; ")
        ));
    }
    if !failures.is_empty() {
        extra.push_str(&format!("\nFailed runs: {}.\n", failures.join("; ")));
    }
    std::fs::create_dir_all(&o.out)?;
    let saved = serde_json::json!({
        "header": header,
        "notes": extra,
        "samples": samples.iter().map(Sample::to_json).collect::<Vec<_>>(),
    });
    std::fs::write(
        o.out.join("samples.json"),
        serde_json::to_string_pretty(&saved)?,
    )?;
    write_report(&o, &header, &samples, &extra)?;
    progress(format!(
        "measured in {:.0}s",
        started.elapsed().as_secs_f64()
    ));
    Ok(())
}

/// Prints the table, and writes it and the chart under `--out`.
fn write_report(o: &Options, header: &str, samples: &[Sample], extra: &str) -> io::Result<()> {
    let names: Vec<&str> = RUNTIMES.iter().map(|r| r.name).collect();
    let rows = report::rows(samples);
    let table = report::markdown(&rows, &names);
    let md = format!("{header}\n\n{table}{extra}");
    println!("{md}");
    std::fs::create_dir_all(&o.out)?;
    std::fs::write(o.out.join("report.md"), &md)?;
    let svg = o.out.join("ratios.svg");
    let title = format!(
        "ioloop, tokio multi_thread, smol and a raw mio loop vs tokio current_thread — {header}"
    );
    chart::svg(
        &svg,
        &rows,
        &names,
        title.split(';').next().unwrap_or(&title),
    )
    .map_err(|e| io::Error::other(e.to_string()))?;
    progress(format!(
        "wrote {} and {}",
        o.out.join("report.md").display(),
        svg.display()
    ));
    Ok(())
}
