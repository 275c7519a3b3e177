//! The tokio twin of `pg_client`: the same client (`../pg_client/work.rs`)
//! on tokio's current_thread runtime, over tokio's own sockets, for the
//! comparison in BENCHMARKS.md (`benches/pg_cost.sh`).
//!
//! ```sh
//! benches/postgres.sh start /tmp/pg
//! cargo run -p testkit --example pg_client_tokio -- --conn "host=/tmp/pg port=PORT user=postgres"
//! benches/postgres.sh stop /tmp/pg
//! ```

#[path = "../common/args.rs"]
mod args;
mod connect;
#[path = "../pg_client/work.rs"]
mod work;

use std::io;
use std::time::{Duration, Instant};

use connect::connect;
use tokio_postgres::Config;
use tokio_postgres::config::Host;

const USAGE: &str = "usage: pg_client_tokio --conn \"host=/tmp/pg port=5432 user=postgres\" [--bench SECONDS [--clients 16]]";

#[tokio::main(flavor = "current_thread")]
async fn main() -> io::Result<()> {
    let args = args::Args::parse(USAGE);
    let conn: String = args.get("conn", String::new());
    let config: Config = conn
        .parse()
        .map_err(|err| io::Error::new(io::ErrorKind::InvalidInput, format!("--conn: {err}")))?;
    let bench: f64 = args.get("bench", 0.0);
    if bench > 0.0 {
        return run_bench(&config, args.get("clients", 16), bench).await;
    }
    let (mut client, mut notes) = connect(&config).await?;
    let (notifier, _) = connect(&config).await?;
    println!(
        "connected twice to {conn} (tokio, {})",
        if matches!(config.get_hosts().first(), Some(Host::Unix(_))) {
            "Unix socket"
        } else {
            "TCP"
        }
    );
    let summary = work::demo(
        &mut client,
        &notifier,
        &mut notes,
        "tokio_pg_client",
        &mut |line| println!("{line}"),
    )
    .await
    .map_err(io::Error::other)?;
    println!("done: {summary:?}");
    Ok(())
}

/// `--bench SECONDS`: `--clients` connections (16 by default), each a task
/// running simple `SELECT`s one at a time for that long; prints
/// `work::bench_line`.
async fn run_bench(config: &Config, clients: usize, seconds: f64) -> io::Result<()> {
    let mut connected = Vec::new();
    for _ in 0..clients {
        connected.push(connect(config).await?.0);
    }
    let (cpu, started) = (work::cpu_seconds(), Instant::now());
    let until = started + Duration::from_secs_f64(seconds);
    let tasks: Vec<_> = connected
        .into_iter()
        .map(|client| tokio::spawn(async move { work::selects_until(&client, until).await }))
        .collect();
    let mut queries = 0;
    for task in tasks {
        queries += task
            .await
            .map_err(io::Error::other)?
            .map_err(io::Error::other)?;
    }
    let (cpu, elapsed) = (work::cpu_seconds() - cpu, started.elapsed().as_secs_f64());
    println!(
        "{}",
        work::bench_line("tokio", clients, queries, elapsed, cpu)
    );
    Ok(())
}
