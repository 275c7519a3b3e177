//! A chat server: what a newcomer from asyncio asks first. Every line a
//! client sends goes to every client, with tokio's `sync::broadcast`,
//! which needs no tokio runtime, on ioloop's sockets and streams.
//!
//! ```sh
//! cargo run -p testkit --example chat -- --port 9300
//! nc 127.0.0.1 9300        # in two terminals: what one types, both see
//! ```
//!
//! - `room.rs`: the room (a broadcast channel) and one task per client.
//!
//! A client that reads too slowly to keep up is told how many messages it
//! missed (`Lagged`) rather than holding the room back.

#[path = "../common/args.rs"]
mod args;
mod room;

use std::io;
use std::net::{Ipv4Addr, SocketAddr};

use ioloop::net::TcpListener;

const USAGE: &str = "usage: chat [--port 9300]";

#[ioloop::main]
async fn main() -> io::Result<()> {
    let port: u16 = args::Args::parse(USAGE).get("port", 9300);
    let listener = TcpListener::bind(SocketAddr::from((Ipv4Addr::LOCALHOST, port))).await?;
    eprintln!("chat on {}", listener.local_addr()?);
    room::serve(listener).await
}
