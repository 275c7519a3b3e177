//! The echo ping-pong load generator of the comparison harness: C
//! connections to an echo server, each keeping `depth` messages in flight,
//! every reply checked byte for byte, round-trip latency per message in an
//! HDR histogram.
//!
//! ```sh
//! cargo build --release -p testkit --example loadgen
//! cargo run --release --example line_echo -- --port 9100 &
//! taskset -c 1 target/release/examples/loadgen --addr 127.0.0.1:9100 \
//!     --protocol line --connections 100 --size 64 --duration 5 --json
//! ```
//!
//! Flags: `--addr` (default 127.0.0.1:9100), `--connections` (100),
//! `--size` bytes per message (64), `--duration` seconds measured (5),
//! `--warmup` seconds run first and not counted (1), `--depth` messages in
//! flight per connection (1: send, wait for the reply, send again),
//! `--protocol line|raw` (line), `--json` (one JSON line on stdout, for the
//! harness; the human summary then goes to stderr).
//!
//! Protocols: `line` is `line_echo`'s: the server greets with `Hello!\n`,
//! each message is `size - 1` printable bytes and `\n`, each reply is
//! `[echo] ` + the message. `raw` is `tcp_echo`'s: `size` bytes, echoed.
//!
//! Exit codes: 0 after a clean run; 1 if a connect, a greeting or a reply
//! check fails (a message says which), or if a connection broke during the
//! run (the results are printed first, with the count in `errors`); 2 on a
//! bad flag.
//!
//! # Why mio, and not ioloop
//!
//! On the 2-core machine the harness pins the server to one core and this
//! program to the other, and the client saturates its core before the
//! server does. So the client must be the cheapest one possible, and it
//! must not be one of the runtimes being compared: a client on ioloop
//! would move with every change to ioloop, and its costs would blur the
//! server's. One thread, one `mio::Poll`, edge-triggered non-blocking
//! sockets, no tasks, no wakers, no allocation per message: per message
//! it makes one `send` and one `recv` (fewer when replies arrive together).
//!
//! - `opts.rs`: the flags. `protocol.rs`: the bytes sent and expected.
//! - `conn.rs`: one connection: what is in flight, what is verified.
//! - `driver.rs`: connecting, the poll loop, the measured window.
//! - `report.rs`: percentiles, the human line and the JSON line.

mod conn;
mod driver;
mod opts;
mod protocol;
mod report;

use std::process::ExitCode;

fn main() -> ExitCode {
    let opts = opts::Options::parse();
    let outcome = match driver::run(&opts) {
        Ok(outcome) => outcome,
        Err(why) => {
            eprintln!("loadgen: {why}");
            return ExitCode::from(1);
        }
    };
    report::print(&opts, &outcome);
    if outcome.errors > 0 {
        eprintln!(
            "loadgen: {} connection(s) failed during the run; the figures above are not a clean \
             measurement",
            outcome.errors
        );
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}
