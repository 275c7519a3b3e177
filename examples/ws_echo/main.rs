//! A WebSocket echo server: async-tungstenite on ioloop's `TcpStream`,
//! with no glue (it speaks futures-io, as ioloop's sockets do). Every text
//! or binary message comes back as it was sent.
//!
//! ```sh
//! cargo run -p testkit --example ws_echo -- --port 9002
//! # any WebSocket client, e.g. Python's `websockets`:
//! python3 -c 'import asyncio, websockets
//! async def main():
//!     async with websockets.connect("ws://127.0.0.1:9002") as ws:
//!         await ws.send("hi"); print(await ws.recv())
//! asyncio.run(main())'
//! ```
//!
//! - `serve.rs`: accept, upgrade, echo (shared with tests/servers/ws_echo.rs).

#[path = "../common/args.rs"]
mod args;
mod serve;

use std::io;
use std::net::Ipv4Addr;

use ioloop::net::TcpListener;

const USAGE: &str = "usage: ws_echo [--port 9002]";

fn main() -> io::Result<()> {
    let port: u16 = args::Args::parse(USAGE).get("port", 9002);
    ioloop::block_on(async move {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, port)).await?;
        eprintln!("ws_echo listening on {}", listener.local_addr()?);
        serve::serve(listener, |peer, end| eprintln!("{peer}: {end}")).await
    })
}
