//! The line echo server from the selectors lecture (lesson 000): the
//! `LineEchoServer` that greets each client with `Hello!` and answers every
//! line `X` with `[echo] X`, here as async fn handlers on ioloop.
//!
//! ```sh
//! cargo run --example line_echo -- --port 9100
//! nc 127.0.0.1 9100        # type lines; each comes back as "[echo] ..."
//! ```
//!
//! Flags: `--port` (default 9100), `--max-line` bytes (default 65536; a
//! longer line gets an `ERR` line and the connection is closed),
//! `--idle-timeout` seconds (default 30; a silent connection is closed).
//! Connects and disconnects are logged to stderr.

#[path = "../common/args.rs"]
mod args;
mod handler;

use std::time::Duration;

use handler::{Config, End};

const USAGE: &str = "usage: line_echo [--port 9100] [--max-line 65536] [--idle-timeout 30]";

fn main() -> std::io::Result<()> {
    let args = args::Args::parse(USAGE);
    let port: u16 = args.get("port", 9100);
    let config = Config {
        max_line: args.get("max-line", 65_536),
        idle_timeout: Duration::from_secs_f64(args.get("idle-timeout", 30.0)),
    };
    ioloop::block_on(async move {
        let listener = ioloop::net::TcpListener::bind((
            "127.0.0.1".parse::<std::net::IpAddr>().unwrap(),
            port,
        ))
        .await?;
        eprintln!("line_echo listening on {}", listener.local_addr()?);
        handler::serve(listener, config, move |peer, end| match end {
            None => eprintln!("connected: {peer}"),
            Some(End::Closed) => eprintln!("disconnected: {peer}"),
            Some(End::Idle) => {
                eprintln!("disconnected: {peer} (idle for {:?})", config.idle_timeout)
            }
            Some(End::LineTooLong) => {
                eprintln!("disconnected: {peer} (line over {} bytes)", config.max_line)
            }
            Some(End::Failed(err)) => eprintln!("disconnected: {peer} ({err})"),
        })
        .await
    })
}
