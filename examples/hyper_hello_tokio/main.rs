//! The tokio twin of `hyper_hello`: the same hyper 1.x server (HTTP/1.1
//! keep-alive `Hello, World!`, or HTTP/2 with `--http2`) on tokio's
//! current_thread runtime, with hyper-util's `TokioIo`, `TokioTimer` and
//! `TokioExecutor`: what the comparison's "hyper" row measures
//! `hyper_hello` against. Same settings: a timer, `TCP_NODELAY`, one task
//! per connection.
//!
//! ```sh
//! cargo run --release -p testkit --example hyper_hello_tokio -- --port 8081
//! wrk -t1 -c100 -d5s http://127.0.0.1:8081/
//! ```
//!
//! Nothing is logged per request; Ctrl-C simply ends the process.

use std::convert::Infallible;
use std::io;
use std::net::Ipv4Addr;

use bytes::Bytes;
use http_body_util::Full;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use tokio::net::TcpListener;

const USAGE: &str = "usage: hyper_hello_tokio [--port 8081] [--http2]";

/// `--port N` and `--http2`.
fn args() -> (u16, bool) {
    let (mut port, mut http2) = (8081, false);
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--http2" => http2 = true,
            "--port" => match args.next().and_then(|p| p.parse().ok()) {
                Some(p) => port = p,
                None => usage(),
            },
            _ => usage(),
        }
    }
    (port, http2)
}

fn usage() -> ! {
    eprintln!("{USAGE}");
    std::process::exit(2)
}

async fn hello(_req: Request<hyper::body::Incoming>) -> Result<Response<Full<Bytes>>, Infallible> {
    Ok(Response::new(Full::new(Bytes::from_static(
        b"Hello, World!",
    ))))
}

fn main() -> io::Result<()> {
    let (port, http2) = args();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async move {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, port)).await?;
        let proto = if http2 { "HTTP/2" } else { "HTTP/1.1" };
        eprintln!(
            "hyper_hello_tokio listening on {} ({proto})",
            listener.local_addr()?
        );
        loop {
            let (stream, _) = listener.accept().await?;
            let _ = stream.set_nodelay(true);
            let io = TokioIo::new(stream);
            tokio::spawn(async move {
                let service = service_fn(hello);
                let _ = if http2 {
                    hyper::server::conn::http2::Builder::new(TokioExecutor::new())
                        .timer(TokioTimer::new())
                        .serve_connection(io, service)
                        .await
                } else {
                    hyper::server::conn::http1::Builder::new()
                        .timer(TokioTimer::new())
                        .keep_alive(true)
                        .serve_connection(io, service)
                        .await
                };
            });
        }
    })
}
