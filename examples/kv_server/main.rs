//! A key-value server that speaks enough of the Redis protocol for
//! `redis-cli` and `redis-benchmark`: GET, SET (with Redis 7's options,
//! `NX`, `XX`, `GET`, `KEEPTTL`, `EX` / `PX` / `EXAT` / `PXAT`), DEL,
//! DBSIZE, PING, PUBLISH, SUBSCRIBE / UNSUBSCRIBE. A tokio server ported onto
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
//! Against a hostile client it keeps Redis 7's limits and answers with
//! Redis's error texts (tests/servers/kv_hostile.rs, kv_limits.rs, each
//! limit at − 1, at, + 1):
//!
//! - a command of at most 1,048,576 arguments (Redis 6's bound; Redis 7
//!   allows `i32::MAX`), a bulk string of at most 512 MiB, a header or
//!   inline line of at most 64 KiB before its end: past one, a protocol
//!   error and the connection closed; a long command costs work in
//!   proportion to its length, and runs in slices of 1,024 keys or
//!   channels with the loop serving others in between (a `DEL` stays
//!   whole to other clients' commands on keys);
//! - every number range-checked as Redis checks it (`SET`'s `EX`, `PX`,
//!   `EXAT`, `PXAT`: "value is not an integer or out of range", "invalid
//!   expire time in 'set' command");
//! - a subscriber bounded by the bytes waiting for it, as Redis's
//!   `client-output-buffer-limit pubsub 32mb 8mb 60`: disconnected once
//!   32 MiB wait, or 8 MiB for over 60 s; never by a count of messages;
//! - a client's state (its subscriptions, its buffers) freed when it goes,
//!   however it goes.
//!
//! - `server.rs`: the accept loop, the limit, the stop, one task per
//!   connection;
//! - `../common/resp.rs`: the protocol; `../common/kv_store.rs`: the
//!   commands and the store; `../common/kv_pubsub.rs`: the channels and
//!   the subscribers' mailboxes (all three shared with the twin).

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
