//! The tokio twin of `kv_server`: the same protocol, store and pub/sub
//! (`../common/resp.rs`, `../common/kv_store.rs`, `../common/kv_pubsub.rs`,
//! so the same limits and the same work: slices, yields, the output bound), on tokio, written as a
//! tokio user would (a `BufWriter` flushed once no whole command is left
//! to answer). What `benches/compare.sh`'s redis-benchmark rows measure
//! `kv_server` against.
//!
//! ```sh
//! cargo run --release -p testkit --example kv_server_tokio -- --port 6381
//! ```

#[path = "../common/args.rs"]
mod args;
#[path = "../common/kv_pubsub.rs"]
mod kv_pubsub;
#[path = "../common/kv_store.rs"]
mod kv_store;
#[path = "../common/resp.rs"]
mod resp;
mod server;
#[path = "../common/tokio_flavor.rs"]
mod tokio_flavor;

use std::net::Ipv4Addr;
use std::time::Duration;

const USAGE: &str = "usage: kv_server_tokio [--port 6381] [--max-connections 250] [--grace 5] \
                     [--flavor current_thread|multi_thread]";

fn main() -> std::io::Result<()> {
    let args = args::Args::parse(USAGE);
    let config = server::Config {
        max_connections: args.get("max-connections", 250),
        grace: Duration::from_secs(args.get("grace", 5)),
    };
    let port: u16 = args.get("port", 6381);
    tokio_flavor::runtime(&args, USAGE)?.block_on(async {
        let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, port)).await?;
        eprintln!("kv_server_tokio listening on {}", listener.local_addr()?);
        let ctrl_c = async {
            let _ = tokio::signal::ctrl_c().await;
            eprintln!("kv_server_tokio: stopping; open connections finish their command");
        };
        server::serve(listener, config, ctrl_c).await?;
        eprintln!("kv_server_tokio stopped");
        Ok(())
    })
}
