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
mod serve;

use std::io;
use std::net::Ipv4Addr;

use ioloop::net::TcpListener;

const USAGE: &str = "usage: http_hello [--port 8080]";

fn main() -> io::Result<()> {
    let port: u16 = args::Args::parse(USAGE).get("port", 8080);
    ioloop::block_on(async move {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, port)).await?;
        eprintln!("http_hello listening on {}", listener.local_addr()?);
        serve::serve(listener).await
    })
}
