//! The floor: the lesson's `Reactor` written by hand on mio, with no
//! executor, no tasks and no wakers (issue 6).
//!
//! ```sh
//! cargo run --release -p testkit --example mio_reference -- --protocol line --port 9102
//! nc 127.0.0.1 9102
//! ```
//!
//! One thread, one `mio::Poll`, every socket registered once for reading
//! and writing, edge-triggered. A readable connection is read until the
//! kernel buffer is empty (a short `recv` says so, so the `EAGAIN` call is
//! skipped, unless the peer has shut its side: then the end of the stream
//! may wait behind the bytes with no edge of its own), every complete line is answered into the outbuf, and the
//! outbuf is sent at once; what the kernel does not take waits for the next
//! writable edge. That is one `recv` and one `send` per message, plus an
//! `epoll_wait` shared by every connection ready in the same tick: the
//! syscall floor any readiness-based runtime can reach, and the reference
//! the comparison measures ioloop against.
//!
//! Each mode does the work of the ioloop server it is measured against
//! (BENCHMARKS.md, "like for like"), so their difference is the runtime's:
//!
//! - `--protocol plain` is `tcp_echo`: the bytes back as they come, each
//!   read sent straight back from the read buffer, reading paused while the
//!   kernel refuses an echo;
//! - `--protocol line` is `line_echo`: the greeting, `[echo]` replies,
//!   `ERR` and close past `--max-line`, and its idle timeout
//!   (`--idle-timeout` seconds, default 30, 0 for none): the lesson's
//!   `last_seen` per connection and a heap of deadlines whose nearest is
//!   the poll's timeout;
//! - `--protocol http` answers every HTTP/1.1 request with `Hello, World!`
//!   using the same parser as the HTTP examples.
//!
//! No graceful stop: SIGTERM or SIGINT ends it at once.

#[path = "../common/args.rs"]
mod args;
mod conn;
#[path = "../common/http.rs"]
mod http;
mod server;

use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::time::Duration;

use mio::net::TcpListener;

use conn::Protocol;

const USAGE: &str = "usage: mio_reference [--protocol plain|line|http] [--port 9102] [--max-line 65536] [--idle-timeout 30]";

fn main() -> io::Result<()> {
    let args = args::Args::parse(USAGE);
    let protocol = match args.get("protocol", String::from("line")).as_str() {
        "line" => Protocol::Line {
            max_line: args.get("max-line", 65_536),
            idle: Some(args.get("idle-timeout", 30.0))
                .filter(|secs| *secs > 0.0)
                .map(Duration::from_secs_f64),
        },
        "http" => Protocol::Http,
        "plain" => Protocol::Plain,
        other => {
            eprintln!("unknown protocol {other:?}\n{USAGE}");
            std::process::exit(2);
        }
    };
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, args.get("port", 9102)));
    let listener = TcpListener::bind(addr)?;
    eprintln!("mio_reference listening on {}", listener.local_addr()?);
    server::serve(listener, protocol)
}
