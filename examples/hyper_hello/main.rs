//! hyper 1.x on ioloop through `ioloop::compat::hyper` (the `hyper`
//! feature): an HTTP/1.1 keep-alive server answering every request with
//! `Hello, World!`, or HTTP/2 (prior knowledge, `h2c`) with `--http2`.
//! Its tokio twin is `hyper_hello_tokio`; the comparison's "hyper" row
//! measures the two (`benches/compare.sh --only hyper`).
//!
//! ```sh
//! cargo run --release -p testkit --example hyper_hello -- --port 8080
//! curl -s http://127.0.0.1:8080/
//! wrk -t1 -c100 -d5s http://127.0.0.1:8080/
//! cargo run --release -p testkit --example hyper_hello -- --port 8080 --http2
//! curl -s --http2-prior-knowledge http://127.0.0.1:8080/
//! ```
//!
//! Ctrl-C stops it gracefully: no new connections, open ones finish their
//! request (for at most 5 seconds), then it exits.

use std::convert::Infallible;
use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::service::service_fn;
use hyper::{Request, Response};
use ioloop::compat::hyper::Server;
use ioloop::net::TcpListener;

const USAGE: &str = "usage: hyper_hello [--port 8080] [--http2]";

/// `--port N` and `--http2`.
fn args() -> (u16, bool) {
    let (mut port, mut http2) = (8080, false);
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
    ioloop::block_on(async move {
        let listener = TcpListener::bind(SocketAddr::from((Ipv4Addr::LOCALHOST, port))).await?;
        let proto = if http2 { "HTTP/2" } else { "HTTP/1.1" };
        eprintln!(
            "hyper_hello listening on {} ({proto})",
            listener.local_addr()?
        );
        let stop = async {
            if let Err(err) = ioloop::signal::ctrl_c().await {
                eprintln!("hyper_hello: cannot wait for Ctrl-C: {err}");
                std::future::pending::<()>().await;
            }
        };
        Server::new()
            .http2(http2)
            .grace_period(Duration::from_secs(5))
            .serve(listener, service_fn(hello), stop)
            .await?;
        eprintln!("hyper_hello stopped");
        Ok(())
    })
}
