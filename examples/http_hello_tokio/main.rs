//! The tokio twin of `http_hello` (issue 5): the same HTTP/1.1 keep-alive
//! server answering every request with `Hello, World!`, with the same
//! parser (examples/common/http.rs) and the same batching, on tokio's
//! current_thread runtime, or its multi-thread one with
//! `--flavor multi_thread`.
//!
//! ```sh
//! cargo run --release -p testkit --example http_hello_tokio -- --port 8081
//! curl -s http://127.0.0.1:8081/
//! wrk -t1 -c100 -d5s http://127.0.0.1:8081/
//! ```
//!
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
#[path = "../common/tokio_flavor.rs"]
mod tokio_flavor;

use std::io;
use std::net::Ipv4Addr;

use tokio::net::TcpListener;

const USAGE: &str = "usage: http_hello_tokio [--port 8081] [--flavor current_thread|multi_thread]";

fn main() -> io::Result<()> {
    let args = args::Args::parse(USAGE);
    let port: u16 = args.get("port", 8081);
    tokio_flavor::runtime(&args, USAGE)?.block_on(async move {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, port)).await?;
        eprintln!("http_hello_tokio listening on {}", listener.local_addr()?);
        serve::serve(listener).await
    })
}
