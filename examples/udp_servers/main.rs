//! The UDP time server and UDP echo server from the event-driven I/O
//! recipe (lesson 003), in one process, on two ports, on one loop.
//!
//! ```sh
//! cargo run --example udp_servers -- --port 14000 --echo-port 15000
//! echo | nc -u -w1 127.0.0.1 14000     # prints the current time (UTC)
//! echo hi | nc -u -w1 127.0.0.1 15000  # prints "hi"
//! ```
//!
//! The recipe registers two handlers with one `select` loop; here each
//! server is a task, and both wait on the same reactor.

#[path = "../common/args.rs"]
mod args;
mod servers;

use std::io;
use std::net::Ipv4Addr;

use ioloop::net::UdpSocket;
use servers::{echo_server, time_server};

const USAGE: &str = "usage: udp_servers [--port 14000] [--echo-port 15000]";

#[ioloop::main]
async fn main() -> io::Result<()> {
    let args = args::Args::parse(USAGE);
    let time_port: u16 = args.get("port", 14000);
    let echo_port: u16 = args.get("echo-port", 15000);
    let time = UdpSocket::bind((Ipv4Addr::LOCALHOST, time_port)).await?;
    let echo = UdpSocket::bind((Ipv4Addr::LOCALHOST, echo_port)).await?;
    eprintln!("udp time server on {}", time.local_addr()?);
    eprintln!("udp echo server on {}", echo.local_addr()?);
    let time = ioloop::spawn(time_server(time));
    let echo = ioloop::spawn(echo_server(echo));
    // Each runs until its socket fails; report whichever does.
    let first = time.await;
    eprintln!("time server stopped: {first:?}");
    echo.await?
}
