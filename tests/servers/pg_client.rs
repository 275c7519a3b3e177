//! examples/pg_client: tokio-postgres on ioloop's sockets, against a real
//! PostgreSQL server each test starts for itself (testkit's `pg`; skipped,
//! saying so, where there is none to be had, unless
//! `IOLOOP_REQUIRE_POSTGRES=1`, as CI sets it). Every result is checked:
//! the example's own run over TCP and over a Unix socket, a server killed
//! mid-query, a query dropped under a timeout, and one client shared by a
//! task waiting on a query and another calling its other methods.

use std::io;
use std::time::Duration;

use futures_util::FutureExt;
use ioloop::time::timeout;
use testkit::io_run;
use testkit::pg::Postgres;
use tokio_postgres::{Client, Config};

use crate::connect::connect;
use crate::work;

/// Connects once to `conn`, as the example does.
async fn client(conn: &str) -> io::Result<crate::connect::Connected> {
    let config: Config = conn.parse().map_err(io::Error::other)?;
    connect(&config).await
}

/// Waits until `observer` sees `count` sessions waiting for an advisory
/// lock: the query under test is in the server, blocked.
async fn until_waiting(observer: &Client, count: i64) -> io::Result<()> {
    let query = "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted";
    loop {
        let waiting: i64 = observer
            .query_one(query, &[])
            .await
            .map_err(io::Error::other)?
            .get(0);
        if waiting == count {
            return Ok(());
        }
        ioloop::time::sleep(Duration::from_millis(5)).await;
    }
}

/// The example's run, over TCP and over the Unix socket: 10,000 rows in
/// and back, the rollback, the notification; then the connections close
/// cleanly (their tasks end with `Ok`) once the clients are dropped.
#[test]
fn the_example_runs_over_tcp_and_over_a_unix_socket() -> io::Result<()> {
    let Some(server) = Postgres::start() else {
        return Ok(());
    };
    let conns = [server.tcp_conn(), server.unix_conn()];
    io_run::run(move || async move {
        for (i, conn) in conns.iter().enumerate() {
            let (mut main, mut notes, main_task) = client(conn).await?;
            let (notifier, _, notifier_task) = client(conn).await?;
            let mut said = Vec::new();
            let summary = work::demo(
                &mut main,
                &notifier,
                &mut notes,
                &format!("t{i}"),
                &mut |line| said.push(line),
            )
            .await
            .map_err(io::Error::other)?;
            assert_eq!(summary.rows, work::ROWS as usize);
            assert_eq!(summary.in_transaction, i64::from(work::ROWS) + 100);
            assert_eq!(summary.after_rollback, i64::from(work::ROWS));
            assert_eq!(summary.payload, format!("t{i} done"));
            assert!(summary.queries_meanwhile >= 1);
            assert_eq!(said.len(), 5, "{said:?}");
            drop((main, notifier));
            main_task.await.unwrap().map_err(io::Error::other)?;
            notifier_task.await.unwrap().map_err(io::Error::other)?;
        }
        Ok(())
    })
}

/// The server killed while a query waits in it: the query fails with an
/// error (not a hang, not a row), the connection's task ends, and the
/// client then says it is closed, for every later call.
#[test]
fn a_server_killed_mid_query_is_an_error_not_a_hang() -> io::Result<()> {
    let Some(server) = Postgres::start() else {
        return Ok(());
    };
    let server = std::sync::Arc::new(server);
    let conn = server.tcp_conn();
    io_run::run(move || async move {
        let (holder, _, _) = client(&conn).await?;
        let (victim, _, victim_task) = client(&conn).await?;
        holder
            .execute("SELECT pg_advisory_lock(1)", &[])
            .await
            .map_err(io::Error::other)?;
        let blocked = ioloop::spawn(async move {
            let result = victim.query_one("SELECT pg_advisory_lock(1)", &[]).await;
            (result.map(|_| ()), victim)
        });
        until_waiting(&holder, 1).await?;
        let killer = server.clone();
        ioloop::spawn_blocking(move || killer.kill()).await.unwrap();
        let (result, victim) = blocked.await.unwrap();
        let err = result.expect_err("the server is gone");
        assert!(
            err.is_closed() || err.code().is_some(),
            "a clear error: {err}"
        );
        // The connection's task ends, with the error or at the closed socket.
        let _ = victim_task.await.unwrap();
        assert!(victim.is_closed());
        let again = victim.query_one("SELECT 1", &[]).await.expect_err("closed");
        assert!(again.is_closed(), "{again}");
        Ok(())
    })
}

/// A query whose future is dropped by a timeout (it waits on a lock
/// another session holds, so the timeout fires first whatever the clock
/// does): the server still runs it, its reply is discarded when it comes,
/// and the connection answers the next query. The dropped query did run
/// (the lock is ours afterwards).
#[test]
fn a_query_dropped_under_a_timeout_leaves_the_connection_usable() -> io::Result<()> {
    let Some(server) = Postgres::start() else {
        return Ok(());
    };
    let conn = server.unix_conn();
    io_run::run(move || async move {
        let (holder, _, _) = client(&conn).await?;
        let (user, _, _) = client(&conn).await?;
        holder
            .execute("SELECT pg_advisory_lock(7)", &[])
            .await
            .map_err(io::Error::other)?;
        let waited = timeout(
            Duration::from_millis(50),
            user.query_one("SELECT pg_advisory_lock(7)", &[]),
        )
        .await;
        assert!(waited.is_err(), "the lock is held: the timeout fires first");
        holder
            .execute("SELECT pg_advisory_unlock(7)", &[])
            .await
            .map_err(io::Error::other)?;
        let one: i32 = user
            .query_one("SELECT 1", &[])
            .await
            .map_err(io::Error::other)?
            .get(0);
        assert_eq!(one, 1);
        let unlocked: bool = user
            .query_one("SELECT pg_advisory_unlock(7)", &[])
            .await
            .map_err(io::Error::other)?
            .get(0);
        assert!(unlocked, "the dropped query took the lock");
        assert!(!user.is_closed());
        Ok(())
    })
}

/// One `Client` shared by two tasks: while one waits on a query the server
/// holds (a lock), the other calls the client's other methods (`prepare`,
/// `execute`, `query`, `query_one`, `query_opt`, `simple_query`,
/// `batch_execute`, `is_closed`); their replies come after the held one's,
/// in the order sent, once the lock is let go.
#[test]
fn a_shared_client_serves_one_task_waiting_and_another_calling() -> io::Result<()> {
    let Some(server) = Postgres::start() else {
        return Ok(());
    };
    let conn = server.tcp_conn();
    io_run::run(move || async move {
        let (holder, _, _) = client(&conn).await?;
        let (shared, _, _) = client(&conn).await?;
        let shared = std::rc::Rc::new(shared);
        holder
            .execute("SELECT pg_advisory_lock(3)", &[])
            .await
            .map_err(io::Error::other)?;
        let order = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
        let waiting = ioloop::spawn_local({
            let (shared, order) = (shared.clone(), order.clone());
            async move {
                let result = shared.query_one("SELECT pg_advisory_lock(3)", &[]).await;
                order.borrow_mut().push("lock");
                result.map(|_| ())
            }
        });
        until_waiting(&holder, 1).await?;
        let others = ioloop::spawn_local({
            let (shared, order) = (shared.clone(), order.clone());
            async move {
                assert!(!shared.is_closed());
                let stmt = shared.prepare("SELECT $1::int * 2").await?;
                order.borrow_mut().push("prepare");
                assert_eq!(shared.execute("SELECT 1", &[]).await?, 1);
                let rows = shared.query(&stmt, &[&21]).await?;
                assert_eq!(rows[0].get::<_, i32>(0), 42);
                assert_eq!(shared.query_one(&stmt, &[&2]).await?.get::<_, i32>(0), 4);
                assert!(
                    shared
                        .query_opt("SELECT 1 WHERE false", &[])
                        .await?
                        .is_none()
                );
                assert!(!shared.simple_query("SELECT 5").await?.is_empty());
                shared.batch_execute("SELECT 6; SELECT 7").await?;
                order.borrow_mut().push("rest");
                Ok::<_, tokio_postgres::Error>(())
            }
        });
        // Both wait: the lock's reply comes first, and nothing of the
        // other task's can pass it on one connection.
        for _ in 0..20 {
            ioloop::task::yield_now().await;
        }
        assert!(order.borrow().is_empty(), "{:?}", order.borrow());
        let mut others = others;
        assert!((&mut others).now_or_never().is_none());
        holder
            .execute("SELECT pg_advisory_unlock(3)", &[])
            .await
            .map_err(io::Error::other)?;
        waiting.await.unwrap().map_err(io::Error::other)?;
        others.await.unwrap().map_err(io::Error::other)?;
        assert_eq!(*order.borrow(), ["lock", "prepare", "rest"]);
        Ok(())
    })
}

/// The benchmark's clients (benches/pg_cost.sh) work: four connections run
/// the prepared `SELECT` for a moment, each at least once, and the report
/// line carries every figure. Nothing here is timed: the speed is
/// measured by the benchmark, not asserted.
#[test]
fn the_benchmark_clients_run_and_report() -> io::Result<()> {
    let Some(server) = Postgres::start() else {
        return Ok(());
    };
    let conn = server.unix_conn();
    io_run::run(move || async move {
        let cpu = work::cpu_seconds();
        let until = std::time::Instant::now() + Duration::from_millis(100);
        let mut tasks = Vec::new();
        for _ in 0..4 {
            let (client, _, _) = client(&conn).await?;
            tasks.push(ioloop::spawn(async move {
                work::selects_until(&client, until).await
            }));
        }
        let mut queries = 0;
        for task in tasks {
            let ran = task.await.unwrap().map_err(io::Error::other)?;
            assert!(ran >= 1, "each client ran the query");
            queries += ran;
        }
        let used = work::cpu_seconds() - cpu;
        assert!(used >= 0.0);
        let line = work::bench_line("ioloop", 4, queries, 0.1, used);
        assert!(
            line.starts_with(&format!(
                "bench: runtime=ioloop clients=4 queries={queries} "
            )),
            "{line}"
        );
        for field in ["seconds=", "qps=", "cpu_us_per_query="] {
            assert!(line.contains(field), "{line}");
        }
        Ok(())
    })
}
