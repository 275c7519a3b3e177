//! tokio-postgres on ioloop: a PostgreSQL client written for tokio's I/O
//! traits, over ioloop's sockets through `ioloop::compat::tokio::TokioIo`
//! (feature `tokio-io`), with no tokio runtime. It creates a table, inserts
//! 10,000 rows with pipelined statements, reads them back, rolls a
//! transaction back, and receives a NOTIFY on a LISTEN channel while other
//! queries run (`work.rs`, which the tokio twin `pg_client_tokio` runs too).
//!
//! A throwaway server (Debian's `postgresql`, installed if missing):
//!
//! ```sh
//! benches/postgres.sh start /tmp/pg        # prints host=/tmp/pg port=PORT user=postgres
//! cargo run --example pg_client -- --conn "host=/tmp/pg port=PORT user=postgres"
//! cargo run --example pg_client -- --conn "host=127.0.0.1 port=PORT user=postgres"
//! benches/postgres.sh stop /tmp/pg
//! ```
//!
//! A `host` that is a directory is a Unix socket's (`.s.PGSQL.PORT` in it);
//! any other is a TCP address.

#[path = "../common/args.rs"]
mod args;
mod connect;
#[path = "../pg_client_tokio/connect.rs"]
mod tokio_connect;
mod work;

use std::io;
use std::time::{Duration, Instant};

use connect::connect;
use tokio_postgres::Config;
use tokio_postgres::config::Host;

const USAGE: &str = "usage: pg_client --conn \"host=/tmp/pg port=5432 user=postgres\" [--bench SECONDS [--clients 16] [--tokio-thread true]]";

#[ioloop::main]
async fn main() -> io::Result<()> {
    let args = args::Args::parse(USAGE);
    let conn: String = args.get("conn", String::new());
    let config: Config = conn
        .parse()
        .map_err(|err| io::Error::new(io::ErrorKind::InvalidInput, format!("--conn: {err}")))?;
    let bench: f64 = args.get("bench", 0.0);
    if bench > 0.0 {
        let clients = args.get("clients", 16);
        if args.get("tokio-thread", false) {
            return run_bench_on_a_tokio_thread(&config, clients, bench).await;
        }
        return run_bench(&config, clients, bench).await;
    }
    let (mut client, mut notes, _) = connect(&config).await?;
    let (notifier, _, _) = connect(&config).await?;
    println!(
        "connected twice to {conn} (ioloop, {})",
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
        "ioloop_pg_client",
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
        .map(|client| ioloop::spawn(async move { work::selects_until(&client, until).await }))
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
        work::bench_line("ioloop", clients, queries, elapsed, cpu)
    );
    Ok(())
}

/// A query the tokio thread runs for an ioloop task, and where the reply
/// goes.
type Request = tokio::sync::oneshot::Sender<Result<i32, tokio_postgres::Error>>;

/// `--bench SECONDS --tokio-thread true`: the workaround for a library
/// that needs tokio's reactor, measured with this one. The connections
/// live on a tokio current_thread runtime on a thread of its own, over
/// tokio's sockets, one tokio task each; each of `clients` ioloop tasks
/// sends its connection's task a request over a channel and awaits the
/// reply, one query at a time, as `run_bench`'s tasks do directly.
async fn run_bench_on_a_tokio_thread(
    config: &Config,
    clients: usize,
    seconds: f64,
) -> io::Result<()> {
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    let config = config.clone();
    let side = std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        runtime.block_on(async move {
            let mut tasks = Vec::new();
            let mut senders = Vec::new();
            for _ in 0..clients {
                let (client, _) = tokio_connect::connect(&config).await?;
                let select = client
                    .prepare(work::BENCH_QUERY)
                    .await
                    .map_err(io::Error::other)?;
                let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Request>();
                senders.push(tx);
                tasks.push(tokio::spawn(async move {
                    while let Some(reply) = rx.recv().await {
                        let row = client.query_one(&select, &[]).await;
                        let _ = reply.send(row.map(|row| row.get(0)));
                    }
                }));
            }
            let _ = ready_tx.send(senders);
            for task in tasks {
                task.await.map_err(io::Error::other)?;
            }
            io::Result::Ok(())
        })
    });
    let senders = ioloop::spawn_blocking(move || ready_rx.recv())
        .await
        .map_err(io::Error::other)?;
    let senders = senders.map_err(|_| io::Error::other("the tokio thread failed to connect"))?;
    let (cpu, started) = (work::cpu_seconds(), Instant::now());
    let until = started + Duration::from_secs_f64(seconds);
    let tasks: Vec<_> = senders
        .into_iter()
        .map(|to_tokio| {
            ioloop::spawn(async move {
                let mut ran = 0u64;
                while Instant::now() < until {
                    let (reply, replied) = tokio::sync::oneshot::channel();
                    to_tokio
                        .send(reply)
                        .map_err(|_| io::Error::other("the tokio thread is gone"))?;
                    let one = replied
                        .await
                        .map_err(io::Error::other)?
                        .map_err(io::Error::other)?;
                    assert_eq!(one, 1);
                    ran += 1;
                }
                io::Result::Ok(ran)
            })
        })
        .collect();
    let mut queries = 0;
    for task in tasks {
        queries += task.await.map_err(io::Error::other)??;
    }
    let (cpu, elapsed) = (work::cpu_seconds() - cpu, started.elapsed().as_secs_f64());
    // The senders are gone with the tasks: the tokio thread's tasks end.
    ioloop::spawn_blocking(move || side.join())
        .await
        .map_err(io::Error::other)?
        .map_err(|_| io::Error::other("the tokio thread panicked"))??;
    println!(
        "{}",
        work::bench_line("ioloop+tokio-thread", clients, queries, elapsed, cpu)
    );
    Ok(())
}
