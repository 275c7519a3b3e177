//! The line echo server from the selectors lecture (lesson 000): the
//! `LineEchoServer` that greets each client with `Hello!` and answers every
//! line `X` with `[echo] X`, here as async fn handlers on ioloop.
//!
//! ```sh
//! cargo run --example line_echo -- --port 9100
//! nc 127.0.0.1 9100        # type lines; each comes back as "[echo] ..."
//! ```
//!
//! Flags: `--port` (default 9100), `--loops` (default 1: how many event
//! loops, one per thread, share the port; see examples/common/loops.rs),
//! `--max-line` bytes (default 65536; a
//! longer line gets an `ERR` line and the connection is closed),
//! `--idle-timeout` seconds (default 30; a silent connection is closed),
//! `--grace` seconds (default 5; on Ctrl-C or SIGTERM the server stops
//! accepting and gives open connections this long to finish their current
//! line, then prints `reactor stopped` and exits 0), `--slow-poll-ms`
//! (default 100; a task that holds the loop longer is logged while it
//! does, through `log`; 0 turns the stall detector off). Connects and
//! disconnects are logged to stderr. SIGQUIT (Ctrl-\\) prints the tasks
//! of loop 0 to stderr (`ioloop::Handle::dump`): each connection and what
//! it waits on (the accept loop is not a task but the `block_on` future,
//! which the dump's first line only says is being polled); the server
//! goes on.
//!
//! - `handler.rs`: the protocol, one task per connection, and the stop
//!   notice connections wait on.
//! - `server.rs`: signals, graceful shutdown, the loops.
//! - `../common/loops.rs`: `--loops N`, one listener per loop on one port.

#[path = "../common/args.rs"]
mod args;
mod handler;
#[path = "../common/loops.rs"]
mod loops;
mod server;

use std::time::Duration;

const USAGE: &str = "usage: line_echo [--port 9100] [--loops 1] [--max-line 65536] [--idle-timeout 30] [--grace 5] [--slow-poll-ms 100]";

fn main() -> std::io::Result<()> {
    let args = args::Args::parse(USAGE);
    let config = handler::Config {
        max_line: args.get("max-line", 65_536),
        idle_timeout: Duration::from_secs_f64(args.get("idle-timeout", 30.0)),
        slow_poll_threshold: match args.get("slow-poll-ms", 100u64) {
            0 => None,
            ms => Some(Duration::from_millis(ms)),
        },
    };
    let grace = Duration::from_secs_f64(args.get("grace", 5.0));
    let loops = args.get("loops", 1usize).max(1);
    server::run(args.get("port", 9100), loops, config, grace)
}
