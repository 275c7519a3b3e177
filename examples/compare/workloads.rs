//! One run of each workload against one runtime, turned into samples.

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::Value;

use crate::procs::{self, CLIENT_CORE, SERVER_CORE, Server, examples_dir};

/// A runtime under comparison: which servers and which micro-benchmark
/// flag stand for it.
pub struct Runtime {
    pub name: &'static str,
    /// The line echo server: the idle-connection row's, and the echo and
    /// syscalls rows' where `echo_under_load`.
    pub echo: (&'static str, &'static [&'static str]),
    /// Whether the echo and syscalls rows load `echo`; false for smol,
    /// whose twin is there for the idle-connection row only.
    pub echo_under_load: bool,
    /// The hand-written HTTP hello server; `None` for smol, which has none.
    pub http: Option<(&'static str, &'static [&'static str])>,
    /// The same hello server written with hyper 1.x, for the "hyper" row;
    /// `None` where there is no such twin (tokio_mt, smol, the raw mio
    /// loop).
    pub hyper: Option<(&'static str, &'static [&'static str])>,
    /// `bench_micro`'s name for it; `None` for the reference server, which
    /// has no executor to measure.
    pub micro: Option<&'static str>,
    /// The Redis-protocol key-value server, for the redis-benchmark rows;
    /// `None` for smol and the raw mio loop, which have none.
    pub kv: Option<(&'static str, &'static [&'static str])>,
}

/// Run, and shown, in this order.
pub const RUNTIMES: [Runtime; 5] = [
    Runtime {
        name: "ioloop",
        echo: ("line_echo", &[]),
        echo_under_load: true,
        http: Some(("http_hello", &[])),
        hyper: Some(("hyper_hello", &[])),
        micro: Some("ioloop"),
        kv: Some(("kv_server", &[])),
    },
    Runtime {
        name: "tokio_ct",
        echo: ("line_echo_tokio", &["--flavor", "current_thread"]),
        echo_under_load: true,
        http: Some(("http_hello_tokio", &["--flavor", "current_thread"])),
        hyper: Some(("hyper_hello_tokio", &[])),
        micro: Some("tokio_ct"),
        kv: Some(("kv_server_tokio", &["--flavor", "current_thread"])),
    },
    Runtime {
        name: "tokio_mt",
        echo: ("line_echo_tokio", &["--flavor", "multi_thread"]),
        echo_under_load: true,
        http: Some(("http_hello_tokio", &["--flavor", "multi_thread"])),
        hyper: None,
        micro: Some("tokio_mt"),
        kv: Some(("kv_server_tokio", &["--flavor", "multi_thread"])),
    },
    Runtime {
        name: "smol",
        echo: ("line_echo_smol", &[]),
        echo_under_load: false,
        http: None,
        hyper: None,
        micro: Some("smol"),
        kv: None,
    },
    Runtime {
        name: "mio_raw",
        echo: ("mio_reference", &["--protocol", "line"]),
        echo_under_load: true,
        http: Some(("mio_reference", &["--protocol", "http"])),
        hyper: None,
        micro: None,
        kv: None,
    },
];

/// Whether a smaller or a larger value is better.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Better {
    Lower,
    Higher,
}

/// One measured figure.
#[derive(Clone, Debug)]
pub struct Sample {
    pub workload: String,
    pub metric: String,
    pub unit: String,
    pub better: Better,
    pub runtime: String,
    pub value: f64,
}

impl Sample {
    /// The sample as saved in `samples.json`.
    pub fn to_json(&self) -> Value {
        serde_json::json!({
            "workload": self.workload,
            "metric": self.metric,
            "unit": self.unit,
            "lower_is_better": self.better == Better::Lower,
            "runtime": self.runtime,
            "value": self.value,
        })
    }

    /// A sample read back from `samples.json`.
    pub fn from_json(v: &Value) -> Option<Sample> {
        Some(Sample {
            workload: v["workload"].as_str()?.to_string(),
            metric: v["metric"].as_str()?.to_string(),
            unit: v["unit"].as_str()?.to_string(),
            better: if v["lower_is_better"].as_bool()? {
                Better::Lower
            } else {
                Better::Higher
            },
            runtime: v["runtime"].as_str()?.to_string(),
            value: v["value"].as_f64()?,
        })
    }
}

fn sample(w: &str, metric: &str, unit: &str, better: Better, rt: &Runtime, value: f64) -> Sample {
    Sample {
        workload: w.to_string(),
        metric: metric.to_string(),
        unit: unit.to_string(),
        better,
        runtime: rt.name.to_string(),
        value,
    }
}

fn json(out: &str) -> io::Result<Value> {
    let line = out.lines().rev().find(|l| l.trim_start().starts_with('{'));
    let line = line.ok_or_else(|| io::Error::other(format!("no JSON in {out:?}")))?;
    serde_json::from_str(line).map_err(io::Error::other)
}

fn num(v: &Value, key: &str) -> io::Result<f64> {
    v[key]
        .as_f64()
        .ok_or_else(|| io::Error::other(format!("no {key} in {v}")))
}

/// Echo ping-pong through the line protocol: throughput, latency, and the
/// server's CPU time per message (the figure that separates runtimes when
/// the client saturates its core first).
pub fn echo(rt: &Runtime, conns: usize, secs: f64, warm: f64) -> io::Result<Vec<Sample>> {
    if !rt.echo_under_load {
        return Ok(Vec::new());
    }
    let server = Server::start(rt.echo.0, rt.echo.1)?;
    let loadgen = examples_dir().join("loadgen");
    let args = |d: f64| -> Vec<String> {
        let addr = server.addr.to_string();
        let (c, d) = (conns.to_string(), d.to_string());
        [
            "--addr",
            &addr,
            "--connections",
            &c,
            "--duration",
            &d,
            "--warmup",
            "0",
            "--size",
            "64",
            "--protocol",
            "line",
            "--json",
        ]
        .map(String::from)
        .to_vec()
    };
    if warm > 0.0 {
        procs::run_client(&loadgen, &args(warm))?;
    }
    let cpu0 = server.cpu()?;
    let out = procs::run_client(&loadgen, &args(secs))?;
    let cpu = server.cpu()? - cpu0;
    let v = json(&out)?;
    if num(&v, "errors")? > 0.0 {
        return Err(io::Error::other(format!("loadgen reported errors: {v}")));
    }
    let messages = num(&v, "messages")?;
    let w = format!("echo {conns} conns");
    Ok(vec![
        sample(
            &w,
            "throughput",
            "msg/s",
            Better::Higher,
            rt,
            num(&v, "msgs_per_sec")?,
        ),
        sample(
            &w,
            "p50 latency",
            "µs",
            Better::Lower,
            rt,
            num(&v, "p50_us")?,
        ),
        sample(
            &w,
            "p99 latency",
            "µs",
            Better::Lower,
            rt,
            num(&v, "p99_us")?,
        ),
        sample(
            &w,
            "p99.9 latency",
            "µs",
            Better::Lower,
            rt,
            num(&v, "p999_us")?,
        ),
        sample(
            &w,
            "server CPU per message",
            "µs",
            Better::Lower,
            rt,
            cpu.as_secs_f64() * 1e6 / messages,
        ),
    ])
}

/// HTTP/1.1 keep-alive hello under wrk: requests/s, latency, server CPU per
/// request. Nothing for runtimes without such a server.
pub fn http(rt: &Runtime, conns: usize, secs: f64, warm: f64) -> io::Result<Vec<Sample>> {
    let Some(server) = rt.http else {
        return Ok(Vec::new());
    };
    wrk(
        rt,
        server,
        &format!("http {conns} conns"),
        conns,
        secs,
        warm,
    )
}

/// The same load against the hyper 1.x hello servers (`hyper_hello` on
/// ioloop::compat::hyper, `hyper_hello_tokio` on tokio current_thread):
/// the "hyper" row. Nothing for runtimes without a hyper twin.
pub fn hyper(rt: &Runtime, conns: usize, secs: f64, warm: f64) -> io::Result<Vec<Sample>> {
    match rt.hyper {
        Some(server) => wrk(
            rt,
            server,
            &format!("hyper {conns} conns"),
            conns,
            secs,
            warm,
        ),
        None => Ok(Vec::new()),
    }
}

/// redis-benchmark against the key-value server: SET and GET from 50
/// clients, `pipeline` commands in flight on each: requests/s of each, and
/// the server's CPU per request over both.
pub fn redis(rt: &Runtime, pipeline: usize, requests: usize) -> io::Result<Vec<Sample>> {
    let Some((example, args)) = rt.kv else {
        return Ok(Vec::new());
    };
    let server = Server::start(example, args)?;
    let w = format!("redis 50 clients -P {pipeline}");
    let bench = |n: usize| -> io::Result<String> {
        let out = Command::new("taskset")
            .args(["-c", CLIENT_CORE, "redis-benchmark", "-h", "127.0.0.1"])
            .args([
                "-p",
                &server.addr.port().to_string(),
                "-c",
                "50",
                "-t",
                "set,get",
            ])
            .args(["-n", &n.to_string(), "-P", &pipeline.to_string(), "--csv"])
            .output()?;
        if !out.status.success() {
            return Err(io::Error::other(
                String::from_utf8_lossy(&out.stderr).into_owned(),
            ));
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    };
    // A first, shorter run warms the server up (its tables and buffers).
    bench(requests / 10)?;
    let cpu0 = server.cpu()?;
    let out = bench(requests)?;
    let cpu = server.cpu()? - cpu0;
    // --csv: a header, then `"SET","123456.79",...` per test.
    let rps = |test: &str| -> io::Result<f64> {
        out.lines()
            .find_map(|l| l.strip_prefix(&format!("\"{test}\",\"")))
            .and_then(|rest| rest.split('"').next()?.parse().ok())
            .ok_or_else(|| {
                io::Error::other(format!("no {test} row in redis-benchmark's output: {out}"))
            })
    };
    Ok(vec![
        sample(
            &w,
            "SET throughput",
            "req/s",
            Better::Higher,
            rt,
            rps("SET")?,
        ),
        sample(
            &w,
            "GET throughput",
            "req/s",
            Better::Higher,
            rt,
            rps("GET")?,
        ),
        sample(
            &w,
            "server CPU per request",
            "µs",
            Better::Lower,
            rt,
            cpu.as_secs_f64() * 1e6 / (2 * requests) as f64,
        ),
    ])
}

/// wrk against `server` (example and arguments), as workload `w`.
fn wrk(
    rt: &Runtime,
    server: (&str, &[&str]),
    w: &str,
    conns: usize,
    secs: f64,
    warm: f64,
) -> io::Result<Vec<Sample>> {
    let server = Server::start(server.0, server.1)?;
    let url = format!("http://{}/", server.addr);
    let wrk = |d: f64| -> io::Result<String> {
        let out = Command::new("taskset")
            .args([
                "-c",
                CLIENT_CORE,
                "wrk",
                "-t1",
                &format!("-c{conns}"),
                &format!("-d{d}s"),
                "--latency",
                &url,
            ])
            .output()?;
        if !out.status.success() {
            return Err(io::Error::other(
                String::from_utf8_lossy(&out.stderr).into_owned(),
            ));
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    };
    // wrk counts whole seconds: a warm-up shorter than one is skipped.
    if warm >= 1.0 {
        wrk(warm)?;
    }
    let cpu0 = server.cpu()?;
    let out = wrk(secs.max(1.0))?;
    let cpu = server.cpu()? - cpu0;
    let parsed = parse_wrk(&out)
        .ok_or_else(|| io::Error::other(format!("cannot read wrk's output: {out}")))?;
    if parsed.errors > 0 {
        return Err(io::Error::other(format!(
            "wrk saw {} errors: {out}",
            parsed.errors
        )));
    }
    Ok(vec![
        sample(w, "throughput", "req/s", Better::Higher, rt, parsed.rps),
        sample(w, "p50 latency", "µs", Better::Lower, rt, parsed.p50_us),
        sample(w, "p99 latency", "µs", Better::Lower, rt, parsed.p99_us),
        sample(
            w,
            "server CPU per request",
            "µs",
            Better::Lower,
            rt,
            cpu.as_secs_f64() * 1e6 / parsed.requests,
        ),
    ])
}

/// What wrk printed.
struct Wrk {
    rps: f64,
    requests: f64,
    p50_us: f64,
    p99_us: f64,
    errors: u64,
}

fn parse_wrk(out: &str) -> Option<Wrk> {
    let duration_us = |s: &str| -> Option<f64> {
        let (n, mult) = if let Some(n) = s.strip_suffix("us") {
            (n, 1.0)
        } else if let Some(n) = s.strip_suffix("ms") {
            (n, 1e3)
        } else if let Some(n) = s.strip_suffix('s') {
            (n, 1e6)
        } else {
            return None;
        };
        n.parse::<f64>().ok().map(|v| v * mult)
    };
    let mut w = Wrk {
        rps: 0.0,
        requests: 0.0,
        p50_us: 0.0,
        p99_us: 0.0,
        errors: 0,
    };
    for line in out.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        match f.as_slice() {
            ["Requests/sec:", v] => w.rps = v.parse().ok()?,
            ["50%", v] => w.p50_us = duration_us(v)?,
            ["99%", v] => w.p99_us = duration_us(v)?,
            [n, "requests", "in", ..] => w.requests = n.parse().ok()?,
            ["Socket", "errors:", rest @ ..] => {
                w.errors = rest
                    .iter()
                    .filter_map(|t| t.trim_end_matches(',').parse::<u64>().ok())
                    .sum()
            }
            ["Non-2xx", "or", "3xx", "responses:", n] => w.errors += n.parse::<u64>().ok()?,
            _ => {}
        }
    }
    (w.rps > 0.0 && w.requests > 0.0).then_some(w)
}

/// A runtime-only workload of `bench_micro`: time and peak memory.
pub fn micro(rt: &Runtime, workload: &str, n: u64) -> io::Result<Vec<Sample>> {
    let Some(runtime) = rt.micro else {
        return Ok(Vec::new());
    };
    let args: Vec<String> = [
        "--runtime",
        runtime,
        "--workload",
        workload,
        "--n",
        &n.to_string(),
    ]
    .map(String::from)
    .to_vec();
    let out = procs::pinned(SERVER_CORE, &examples_dir().join("bench_micro"), &args)
        .stderr(Stdio::null())
        .output()?;
    if !out.status.success() {
        return Err(io::Error::other(format!(
            "bench_micro {args:?} failed: {}",
            out.status
        )));
    }
    let v = json(&String::from_utf8_lossy(&out.stdout))?;
    let w = format!("{workload} ×{}", human(n));
    Ok(vec![
        sample(
            &w,
            "time",
            "ms",
            Better::Lower,
            rt,
            num(&v, "seconds")? * 1e3,
        ),
        sample(
            &w,
            "peak RSS",
            "MiB",
            Better::Lower,
            rt,
            num(&v, "peak_rss_kb")? / 1024.0,
        ),
    ])
}

fn human(n: u64) -> String {
    match n {
        n if n % 1_000_000 == 0 => format!("{}M", n / 1_000_000),
        n if n % 1_000 == 0 => format!("{}k", n / 1_000),
        n => n.to_string(),
    }
}

/// Memory per idle connection: the server's RSS growth with `conns` open,
/// greeted connections that say nothing.
pub fn idle_memory(rt: &Runtime, conns: usize) -> io::Result<Vec<Sample>> {
    let server = Server::start(rt.echo.0, rt.echo.1)?;
    std::thread::sleep(Duration::from_millis(100));
    let before = server.rss_kb()?;
    let mut open = Vec::with_capacity(conns);
    for _ in 0..conns {
        let s = TcpStream::connect(server.addr)?;
        s.set_read_timeout(Some(Duration::from_secs(20)))?;
        open.push(s);
    }
    // Every connection greeted: accepted, and its handler is waiting.
    for s in &open {
        let mut hello = [0u8; 7];
        (&*s).read_exact(&mut hello)?;
    }
    std::thread::sleep(Duration::from_millis(200));
    let after = server.rss_kb()?;
    drop(open);
    let w = format!("idle {} conns", human(conns as u64));
    let per_conn = (after.saturating_sub(before) as f64) * 1024.0 / conns as f64;
    Ok(vec![sample(
        &w,
        "memory per connection",
        "bytes",
        Better::Lower,
        rt,
        per_conn,
    )])
}

/// System calls per echoed message, counted by `strace -c -f` on the
/// server during a fixed run. Also returns strace's top syscalls.
pub fn syscalls(rt: &Runtime, conns: usize, secs: f64) -> io::Result<(Vec<Sample>, String)> {
    let server = Server::start(rt.echo.0, rt.echo.1)?;
    let out_file = std::env::temp_dir().join(format!("ioloop-strace-{}.txt", server.pid()));
    let mut strace = Command::new("strace")
        .args(["-c", "-f", "-q", "-o"])
        .arg(&out_file)
        .args(["-p", &server.pid().to_string()])
        .stderr(Stdio::piped())
        .spawn()?;
    // Give strace time to attach to every thread before the load starts.
    std::thread::sleep(Duration::from_millis(500));
    let loadgen = examples_dir().join("loadgen");
    let addr = server.addr.to_string();
    let args: Vec<String> = [
        "--addr",
        &addr,
        "--connections",
        &conns.to_string(),
        "--duration",
        &secs.to_string(),
        "--warmup",
        "0",
        "--protocol",
        "line",
        "--json",
    ]
    .map(String::from)
    .to_vec();
    let out = procs::run_client(&loadgen, &args)?;
    // SAFETY: kill(2) on strace's pid with SIGINT, which makes it detach
    // and write its summary; no memory is touched.
    unsafe { libc::kill(strace.id() as i32, libc::SIGINT) };
    strace.wait()?;
    let table = std::fs::read_to_string(&out_file)?;
    let _ = std::fs::remove_file(&out_file);
    let messages = num(&json(&out)?, "messages")?;
    let (total, top) = parse_strace(&table)
        .ok_or_else(|| io::Error::other(format!("cannot read strace's table: {table}")))?;
    let w = format!("syscalls, echo {conns} conns");
    let detail = top
        .iter()
        .take(4)
        .map(|(n, c)| format!("{n} {:.3}", *c as f64 / messages))
        .collect::<Vec<_>>()
        .join(", ");
    Ok((
        vec![sample(
            &w,
            "syscalls per message",
            "calls",
            Better::Lower,
            rt,
            total as f64 / messages,
        )],
        format!("{}: {detail} per message", rt.name),
    ))
}

/// strace -c's table: the total number of calls, and calls per syscall,
/// most frequent first.
fn parse_strace(table: &str) -> Option<(u64, Vec<(String, u64)>)> {
    let mut rows = Vec::new();
    let mut total = None;
    for line in table.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() < 5 || f[0].parse::<f64>().is_err() {
            continue;
        }
        let calls: u64 = f[3].parse().ok()?;
        let name = f[f.len() - 1].to_string();
        if name == "total" {
            total = Some(calls);
        } else {
            rows.push((name, calls));
        }
    }
    rows.sort_by_key(|row| std::cmp::Reverse(row.1));
    Some((total?, rows))
}

/// Flushes progress output so it interleaves sensibly with children's.
pub fn progress(msg: impl std::fmt::Display) {
    eprintln!("{msg}");
    let _ = io::stderr().flush();
}
