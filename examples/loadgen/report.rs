//! The results: a human summary, and with `--json` one JSON line for the
//! harness (the human summary then goes to stderr, so stdout is only JSON).

use serde_json::json;

use crate::driver::Outcome;
use crate::opts::Options;
use crate::protocol::Protocol;

/// Prints the outcome of a run.
pub fn print(opts: &Options, outcome: &Outcome) {
    let rate = if outcome.seconds > 0.0 {
        outcome.messages as f64 / outcome.seconds
    } else {
        0.0
    };
    let h = &outcome.latency;
    // Microseconds with a fraction: loopback round trips are tens of µs,
    // where whole microseconds would round away the differences.
    let us = |ns: u64| ns as f64 / 1000.0;
    let (p50, p99, p999, max) = if h.is_empty() {
        (0.0, 0.0, 0.0, 0.0)
    } else {
        (
            us(h.value_at_quantile(0.50)),
            us(h.value_at_quantile(0.99)),
            us(h.value_at_quantile(0.999)),
            us(h.max()),
        )
    };
    let protocol = match opts.protocol {
        Protocol::Line => "line",
        Protocol::Raw => "raw",
    };
    let human = format!(
        "loadgen: {addr} {protocol}, {c} connections, {s} B, depth {d}: {rate:.0} msgs/s \
         ({n} messages in {secs:.2} s); latency p50 {p50:.1} us, p99 {p99:.1} us, \
         p99.9 {p999:.1} us, max {max:.1} us; errors {e}",
        addr = opts.addr,
        c = opts.connections,
        s = opts.size,
        d = opts.depth,
        n = outcome.messages,
        secs = outcome.seconds,
        e = outcome.errors,
    );
    if !opts.json {
        println!("{human}");
        return;
    }
    eprintln!("{human}");
    let line = json!({
        "messages": outcome.messages,
        "seconds": outcome.seconds,
        "msgs_per_sec": rate,
        "p50_us": p50,
        "p99_us": p99,
        "p999_us": p999,
        "max_us": max,
        "errors": outcome.errors,
        "connections": opts.connections,
        "size": opts.size,
        "depth": opts.depth,
    });
    println!("{line}");
}
