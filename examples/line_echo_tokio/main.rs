//! The tokio twin of `line_echo` (issue 5): the selectors lecture's
//! `LineEchoServer` (lesson 000), greeting each client with `Hello!` and
//! answering every line `X` with `[echo] X`, on tokio's current_thread
//! runtime, or its multi-thread one with `--flavor multi_thread`.
//!
//! ```sh
//! cargo run -p testkit --example line_echo_tokio -- --port 9101
//! nc 127.0.0.1 9101        # type lines; each comes back as "[echo] ..."
//! ```
//!
//! Flags as `line_echo`'s: `--port` (default 9101), `--max-line` bytes
//! (default 65536; a longer line gets an `ERR` line and the connection is
//! closed), `--idle-timeout` seconds (default 30), `--grace` seconds
//! (default 5; on Ctrl-C or SIGTERM the server stops accepting and gives
//! open connections this long to finish their current line, then prints
//! `reactor stopped` and exits 0), and `--flavor current_thread|multi_thread`.
//! Connects and disconnects are logged to stderr.
//!
//! - `handler.rs`: the protocol, one task per connection.
//! - `server.rs`: signals, graceful shutdown.

#[path = "../common/args.rs"]
mod args;
mod handler;
mod server;
#[path = "../common/tokio_flavor.rs"]
mod tokio_flavor;

use std::time::Duration;

const USAGE: &str = "usage: line_echo_tokio [--port 9101] [--max-line 65536] [--idle-timeout 30] \
                     [--grace 5] [--flavor current_thread|multi_thread]";

fn main() -> std::io::Result<()> {
    let args = args::Args::parse(USAGE);
    let config = handler::Config {
        max_line: args.get("max-line", 65_536),
        idle_timeout: Duration::from_secs_f64(args.get("idle-timeout", 30.0)),
    };
    let grace = Duration::from_secs_f64(args.get("grace", 5.0));
    let runtime = tokio_flavor::runtime(&args, USAGE)?;
    server::run(runtime, args.get("port", 9101), config, grace)
}
