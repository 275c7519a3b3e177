//! An HTTP/1.1 keep-alive server that answers every request with
//! `Hello, World!`, on ioloop: the requests-per-second workload of the
//! Tornado/Twisted article (lesson 001), for the comparison of issue 5.
//! Its tokio twin is `http_hello_tokio`; both parse with
//! examples/common/http.rs.
//!
//! ```sh
//! cargo run --release --example http_hello -- --port 8080
//! curl -s http://127.0.0.1:8080/
//! wrk -t1 -c100 -d5s http://127.0.0.1:8080/
//! ```
//!
//! `--loops N` (default 1) serves the port with N event loops, one per
//! thread, each with its own listener (examples/common/loops.rs).
//!
//! Pipelined requests are answered in order, all those one read brought in
//! one write; a malformed request gets a 400 and the connection closes.
//! Nothing is logged per request (it is a benchmark target); Ctrl-C simply
//! ends the process.
//!
//! - `serve.rs`: the connection loop (shared with tests/servers/http_hello.rs).
//! - `../common/http.rs`: the request parser both twins share.

#[path = "../common/args.rs"]
mod args;
#[path = "../common/http.rs"]
mod http;
#[path = "../common/loops.rs"]
mod loops;
mod serve;

use std::io;
use std::net::{Ipv4Addr, SocketAddr};

const USAGE: &str = "usage: http_hello [--port 8080] [--loops 1]";

fn main() -> io::Result<()> {
    let args = args::Args::parse(USAGE);
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, args.get("port", 8080)));
    let n: usize = args.get::<usize>("loops", 1).max(1);
    let rt = ioloop::Runtime::new()?;
    let listener = {
        let _entered = rt.enter();
        loops::listen(addr, n > 1)?
    };
    let addr = listener.local_addr()?;
    // The other loops serve until the process ends, as this one does.
    let _others = loops::start(n, addr, ioloop::Runtime::new, |_, rt, listener| {
        rt.block_on(serve::serve(listener))
    })?;
    match n {
        1 => eprintln!("http_hello listening on {addr}"),
        n => eprintln!("http_hello listening on {addr} with {n} loops"),
    }
    rt.block_on(serve::serve(listener))
}
