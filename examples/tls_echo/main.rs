//! The line echo protocol over TLS 1.3: futures-rustls on ioloop's
//! `TcpStream`, with no glue. The server makes a self-signed certificate
//! for `localhost` at start (rcgen) and prints it, so a client can trust
//! exactly that one.
//!
//! ```sh
//! cargo run -p testkit --example tls_echo -- --port 9443 > cert.pem
//! openssl s_client -quiet -CAfile cert.pem -connect localhost:9443
//! ```
//!
//! Each client is greeted with `Hello!` and each line `X` comes back as
//! `[echo] X`, as in `line_echo`: the handler (`serve.rs`) is line_echo's
//! loop with one change, the stream handed to `StreamReader` and
//! `StreamWriter` is the TLS stream's halves instead of `&TcpStream`.
//!
//! - `tls.rs`: the certificate and the rustls configurations.
//! - `serve.rs`: accept, handshake, echo (shared with tests/servers/tls_echo.rs).

#[path = "../common/args.rs"]
mod args;
mod serve;
mod tls;

use std::io;
use std::net::Ipv4Addr;

use ioloop::net::TcpListener;

const USAGE: &str = "usage: tls_echo [--port 9443]";

fn main() -> io::Result<()> {
    let port: u16 = args::Args::parse(USAGE).get("port", 9443);
    let identity = tls::Identity::self_signed("localhost")?;
    // The certificate on stdout, everything else on stderr.
    println!("{}", identity.cert_pem);
    ioloop::block_on(async move {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, port)).await?;
        eprintln!("tls_echo listening on {}", listener.local_addr()?);
        serve::serve(listener, identity.acceptor()?, |peer, end| {
            eprintln!("{peer}: {end}");
        })
        .await
    })
}
