//! A key-value server that speaks enough of the Redis protocol for
//! `redis-cli` and `redis-benchmark`: GET, SET (with `EX` / `PX` expiry),
//! DEL, PING, PUBLISH, SUBSCRIBE / UNSUBSCRIBE. A tokio server ported onto
//! ioloop; `kv_server_tokio` is its twin.
//!
//! ```sh
//! cargo run --release -p testkit --example kv_server -- --port 6380
//! redis-cli -p 6380 SET greeting hello EX 10
//! redis-benchmark -p 6380 -t set,get -c 50 -n 100000 -P 16
//! ```
//!
//! `--max-connections` (default 250): the next client waits, connected but
//! not served, until one leaves. Ctrl-C stops accepting, lets every
//! connection finish the command it is on, and exits 0 (`--grace` seconds
//! at most, default 5).
//!
//! - `server.rs`: the accept loop, the limit, the stop, one task per
//!   connection;
//! - `../common/resp.rs`: the protocol; `../common/kv_store.rs`: the
//!   commands and the store (both shared with the twin).

#[path = "../common/args.rs"]
mod args;
#[path = "../common/kv_pubsub.rs"]
mod kv_pubsub;
#[path = "../common/kv_store.rs"]
mod kv_store;
#[path = "../common/resp.rs"]
mod resp;
mod server;

use std::net::Ipv4Addr;
use std::time::Duration;

const USAGE: &str = "usage: kv_server [--port 6380] [--max-connections 250] [--grace 5]";

fn main() -> std::io::Result<()> {
    let args = args::Args::parse(USAGE);
    let config = server::Config {
        max_connections: args.get("max-connections", 250),
        grace: Duration::from_secs(args.get("grace", 5)),
    };
    let port: u16 = args.get("port", 6380);
    ioloop::block_on(async {
        let listener = ioloop::net::TcpListener::bind((Ipv4Addr::LOCALHOST, port)).await?;
        eprintln!("kv_server listening on {}", listener.local_addr()?);
        let ctrl_c = async {
            if let Err(err) = ioloop::signal::ctrl_c().await {
                eprintln!("kv_server: cannot listen for Ctrl-C: {err}");
                std::future::pending::<()>().await;
            }
            eprintln!("kv_server: stopping; open connections finish their command");
        };
        server::serve(listener, config, ctrl_c).await?;
        eprintln!("kv_server stopped");
        Ok(())
    })
}
