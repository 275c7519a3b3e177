//! What `pg_client` does with a PostgreSQL server, written against
//! tokio-postgres alone, so the ioloop example and its tokio twin run the
//! same code: only how a socket is connected and where the connection's
//! task is spawned differ (`main.rs` in each).

use std::future::poll_fn;
use std::time::Instant;

use futures_util::future::try_join_all;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::mpsc;
use tokio_postgres::{AsyncMessage, Client, Connection, Error, Notification};

/// Rows the demo inserts.
pub const ROWS: i32 = 10_000;
/// Inserts in flight at once: each batch goes out pipelined (every
/// statement sent before the first reply is read).
pub const BATCH: usize = 1_000;
/// The LISTEN channel.
pub const CHANNEL: &str = "ioloop_demo";

/// Drives a connection: reads the server's messages and hands each
/// notification to `notes`. Ends when the connection does; an error is
/// the connection's.
pub async fn drive<S, T>(
    mut connection: Connection<S, T>,
    notes: mpsc::UnboundedSender<Notification>,
) -> Result<(), Error>
where
    S: AsyncRead + AsyncWrite + Unpin,
    T: AsyncRead + AsyncWrite + Unpin,
{
    while let Some(message) = poll_fn(|cx| connection.poll_message(cx)).await {
        if let AsyncMessage::Notification(note) = message? {
            // The receiver may be gone: the notice is then nobody's.
            let _ = notes.send(note);
        }
    }
    Ok(())
}

/// What the demo found, each figure checked before it is returned.
#[derive(Debug, PartialEq, Eq)]
pub struct Summary {
    /// Rows read back, each equal to what was inserted.
    pub rows: usize,
    /// Rows seen inside the transaction before it was rolled back.
    pub in_transaction: i64,
    /// Rows counted after the rollback.
    pub after_rollback: i64,
    /// The payload of the notification received.
    pub payload: String,
    /// Queries that ran while the notification was on its way.
    pub queries_meanwhile: usize,
}

/// The demo: a table, `ROWS` rows inserted pipelined and read back, a
/// transaction rolled back, and a NOTIFY from `notifier` received on
/// `client`'s LISTEN channel while `client` runs other queries. `table`
/// names the table (created, then dropped), so runs can share a server.
/// `say` is told each step.
pub async fn demo(
    client: &mut Client,
    notifier: &Client,
    notes: &mut mpsc::UnboundedReceiver<Notification>,
    table: &str,
    say: &mut dyn FnMut(String),
) -> Result<Summary, Error> {
    client.batch_execute(&format!("DROP TABLE IF EXISTS {table}; CREATE TABLE {table} (id int PRIMARY KEY, name text NOT NULL)")).await?;
    say(format!("created table {table}"));

    let started = Instant::now();
    let insert = client
        .prepare(&format!("INSERT INTO {table} (id, name) VALUES ($1, $2)"))
        .await?;
    let ids: Vec<i32> = (0..ROWS).collect();
    for batch in ids.chunks(BATCH) {
        let names: Vec<String> = batch.iter().map(|id| name_of(*id)).collect();
        let inserts = batch
            .iter()
            .zip(&names)
            .map(|(id, name)| async { client.execute(&insert, &[id, name]).await });
        let counts = try_join_all(inserts).await?;
        assert!(counts.iter().all(|&n| n == 1), "one row each");
    }
    say(format!(
        "inserted {ROWS} rows, {BATCH} statements in flight at a time, in {:.0} ms",
        started.elapsed().as_secs_f64() * 1e3
    ));

    let rows = client
        .query(&format!("SELECT id, name FROM {table} ORDER BY id"), &[])
        .await?;
    for (row, id) in rows.iter().zip(0..) {
        let (got_id, name): (i32, &str) = (row.get(0), row.get(1));
        assert_eq!((got_id, name), (id, name_of(id).as_str()), "row {id}");
    }
    assert_eq!(rows.len(), ROWS as usize);
    say(format!("read back {} rows, each as inserted", rows.len()));

    let count = format!("SELECT count(*) FROM {table}");
    let transaction = client.transaction().await?;
    for id in ROWS..ROWS + 100 {
        transaction.execute(&insert, &[&id, &name_of(id)]).await?;
    }
    let in_transaction: i64 = transaction.query_one(&count, &[]).await?.get(0);
    transaction.rollback().await?;
    let after_rollback: i64 = client.query_one(&count, &[]).await?.get(0);
    say(format!(
        "a transaction saw {in_transaction} rows; rolled back, {after_rollback} are left"
    ));

    client.batch_execute(&format!("LISTEN {CHANNEL}")).await?;
    // The notice is sent while `client` is busy with queries of its own,
    // and arrives between their replies.
    let payload = format!("{table} done");
    let queries = async {
        let mut ran = 0;
        while notes.is_empty() {
            let row = client.query_one("SELECT $1::int + 1", &[&ran]).await?;
            assert_eq!(row.get::<_, i32>(0), ran + 1);
            ran += 1;
        }
        Ok::<_, Error>(ran as usize)
    };
    let notify = async {
        notifier
            .execute("SELECT pg_notify($1, $2)", &[&CHANNEL, &payload])
            .await
    };
    let (queries_meanwhile, _) = futures_util::future::try_join(queries, notify).await?;
    let note = notes
        .recv()
        .await
        .expect("the connection's task ended first");
    assert_eq!(
        (note.channel(), note.payload()),
        (CHANNEL, payload.as_str())
    );
    client
        .batch_execute(&format!("UNLISTEN {CHANNEL}; DROP TABLE {table}"))
        .await?;
    say(format!(
        "received NOTIFY {CHANNEL} '{}' while running {queries_meanwhile} other queries",
        note.payload()
    ));

    Ok(Summary {
        rows: rows.len(),
        in_transaction,
        after_rollback,
        payload: note.payload().to_string(),
        queries_meanwhile,
    })
}

/// The benchmark's query: a simple `SELECT`, prepared once per client.
pub const BENCH_QUERY: &str = "SELECT 1::int";

/// One benchmark client: the prepared `SELECT` run again and again, one at
/// a time, until `until`. Returns how many ran.
pub async fn selects_until(client: &Client, until: Instant) -> Result<u64, Error> {
    let select = client.prepare(BENCH_QUERY).await?;
    let mut ran = 0;
    while Instant::now() < until {
        let one: i32 = client.query_one(&select, &[]).await?.get(0);
        assert_eq!(one, 1);
        ran += 1;
    }
    Ok(ran)
}

/// CPU time this process has used so far, user and system, in seconds.
pub fn cpu_seconds() -> f64 {
    // SAFETY: `getrusage` fills the zeroed struct it is given and keeps no
    // pointer to it.
    #[allow(unsafe_code)]
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut usage);
        usage
    };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    secs(usage.ru_utime) + secs(usage.ru_stime)
}

/// The benchmark's line: the runtime, the clients, queries, seconds,
/// queries per second and client CPU per query.
pub fn bench_line(runtime: &str, clients: usize, queries: u64, seconds: f64, cpu: f64) -> String {
    format!(
        "bench: runtime={runtime} clients={clients} queries={queries} seconds={seconds:.3} qps={:.0} cpu_us_per_query={:.2}",
        queries as f64 / seconds,
        cpu * 1e6 / queries as f64
    )
}

/// The name stored with `id`.
pub fn name_of(id: i32) -> String {
    format!("row-{id:05}")
}
