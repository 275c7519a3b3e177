//! The TCP echo server from the event-driven I/O recipe (lesson 003): bytes
//! in, the same bytes out, for any number of clients at once.
//!
//! ```sh
//! cargo run --example tcp_echo -- --port 16001
//! nc 127.0.0.1 16001       # whatever you type comes back
//! ```
//!
//! The recipe's `TCPClient` handler keeps an outgoing buffer and asks the
//! loop for writability only while it is non-empty; here each connection
//! is a task that reads into a buffer and writes it back, and the reactor
//! parks the task while the socket cannot take more.

#[path = "common/args.rs"]
mod args;

use std::io;
use std::net::{Ipv4Addr, SocketAddr};

use ioloop::io::{AsyncReadExt, AsyncWriteExt};
use ioloop::net::{TcpListener, TcpStream};

const USAGE: &str = "usage: tcp_echo [--port 16001]";

async fn echo(mut stream: TcpStream) -> io::Result<u64> {
    let mut buf = vec![0u8; 16 * 1024];
    let mut total = 0;
    loop {
        let n = stream.read(&mut buf).await?;
        if n == 0 {
            return Ok(total);
        }
        stream.write_all(&buf[..n]).await?;
        total += n as u64;
    }
}

#[ioloop::main]
async fn main() -> io::Result<()> {
    let port: u16 = args::Args::parse(USAGE).get("port", 16001);
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, port)).await?;
    eprintln!("tcp_echo listening on {}", listener.local_addr()?);
    loop {
        let (stream, peer): (TcpStream, SocketAddr) = listener.accept().await?;
        eprintln!("connected: {peer}");
        drop(ioloop::spawn(async move {
            match echo(stream).await {
                Ok(n) => eprintln!("disconnected: {peer} (echoed {n} bytes)"),
                Err(err) => eprintln!("disconnected: {peer} ({err})"),
            }
        }));
    }
}
