//! The cookbook's UDP fib server (lesson 003): each request `n` is computed
//! on the blocking pool, and answered when done, while the same process
//! keeps echoing on a TCP port without delay.
//!
//! ```sh
//! cargo run --release --example fib_offload -- --port 16000 --echo-port 16001
//! # ask for fib(38), which takes seconds (naive recursion on purpose):
//! python3 -c "import socket as s; u=s.socket(s.AF_INET,s.SOCK_DGRAM); u.sendto(b'38',('127.0.0.1',16000)); print(u.recvfrom(64))"
//! # meanwhile, in another terminal, the echo answers at once:
//! nc 127.0.0.1 16001
//! ```
//!
//! In the recipe a `ThreadPoolHandler` runs `fib(n)` on a thread and the
//! result reaches the event loop through a socket pair the loop watches.
//! Here `spawn_blocking` runs it, and the completion wakes the task that
//! awaits it, through the loop's own waker: the loop sleeps in the poller
//! meanwhile, serving the echo port as if nothing else were happening.

#[path = "../common/args.rs"]
mod args;
mod servers;

use std::io;
use std::net::Ipv4Addr;

use ioloop::net::{TcpListener, UdpSocket};

const USAGE: &str = "usage: fib_offload [--port 16000] [--echo-port 16001]";

#[ioloop::main]
async fn main() -> io::Result<()> {
    let args = args::Args::parse(USAGE);
    let fib_port: u16 = args.get("port", 16000);
    let echo_port: u16 = args.get("echo-port", 16001);
    let fib = UdpSocket::bind((Ipv4Addr::LOCALHOST, fib_port)).await?;
    let echo = TcpListener::bind((Ipv4Addr::LOCALHOST, echo_port)).await?;
    eprintln!("udp fib server on {}", fib.local_addr()?);
    eprintln!("tcp echo server on {}", echo.local_addr()?);
    let echo = ioloop::spawn(servers::echo_server(echo));
    servers::fib_server(fib).await?;
    echo.await?
}
