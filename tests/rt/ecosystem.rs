//! README's ecosystem table, held to account: what runs on ioloop with no
//! glue (runtime-neutral channels and locks, across tasks and threads;
//! tokio's I/O traits over ioloop's streams through tokio-util's
//! `compat`), and what cannot run inside it (tokio's timers and sockets
//! need tokio's reactor) with the way around it.

use std::io;
use std::sync::Arc;
use std::time::Duration;

use ioloop::net::{TcpListener, TcpStream};

#[test]
fn async_channel_and_async_lock_work_across_tasks_and_threads() {
    let (tx, rx) = async_channel::bounded::<u64>(16);
    let lock = Arc::new(async_lock::Mutex::new(0u64));
    // A plain thread sends, blocking; tasks on the loop receive and add
    // under an async lock that another thread also takes.
    let sender = std::thread::spawn(move || {
        for i in 1..=1000 {
            tx.send_blocking(i).unwrap();
        }
    });
    let other = {
        let lock = lock.clone();
        std::thread::spawn(move || {
            for _ in 0..1000 {
                *lock.lock_blocking() += 1_000_000;
            }
        })
    };
    let total = ioloop::block_on(async {
        let tasks: Vec<_> = (0..4)
            .map(|_| {
                let (rx, lock) = (rx.clone(), lock.clone());
                ioloop::spawn(async move {
                    while let Ok(i) = rx.recv().await {
                        *lock.lock().await += i;
                    }
                })
            })
            .collect();
        drop(rx);
        for task in tasks {
            task.await.unwrap();
        }
        other.join().unwrap();
        *lock.lock().await
    });
    sender.join().unwrap();
    assert_eq!(total, 1000 * 1001 / 2 + 1000 * 1_000_000);
}

#[test]
fn tokio_io_traits_run_over_ioloop_streams_through_compat() -> io::Result<()> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio_util::compat::FuturesAsyncReadCompatExt;
    ioloop::block_on(async {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let client = TcpStream::connect(listener.local_addr()?).await?;
        let (server, _) = listener.accept().await?;
        // Code written against tokio's AsyncRead/AsyncWrite (tokio-rustls,
        // tokio-tungstenite, ...) takes these.
        let (mut client, mut server) = (client.compat(), server.compat());
        client.write_all(b"through tokio's traits").await?;
        client.shutdown().await?;
        let mut got = Vec::new();
        server.read_to_end(&mut got).await?;
        assert_eq!(got, b"through tokio's traits");
        Ok(())
    })
}

#[test]
fn tokio_timers_inside_ioloop_panic_for_want_of_tokio_reactor() {
    let panic = std::panic::catch_unwind(|| {
        ioloop::block_on(async { tokio::time::sleep(Duration::from_millis(1)).await })
    })
    .expect_err("tokio's sleep needs tokio's runtime");
    let text = testkit::util::panic_text(&*panic);
    assert!(text.contains("no reactor running"), "{text}");
}

/// The calls that stop the libraries built on tokio's runtime inside
/// ioloop (the guide's "Coming from tokio" names which library makes
/// which): `tokio::net`'s connect and bind (reqwest's connector, sqlx's
/// `runtime-tokio`, a tonic server's listener) and `tokio::spawn` (the
/// tasks hyper-util's and tonic's servers spawn per connection) panic,
/// saying why, rather than hang.
#[test]
fn tokio_net_and_tokio_spawn_inside_ioloop_panic_saying_why() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    /// One call made inside ioloop, expected to panic.
    type Call = Box<dyn FnOnce() + std::panic::UnwindSafe>;
    let calls: [(&str, Call); 3] = [
        (
            "tokio::net::TcpStream::connect",
            Box::new(move || {
                let _ = ioloop::block_on(tokio::net::TcpStream::connect(addr));
            }),
        ),
        (
            "tokio::net::TcpListener::bind",
            Box::new(|| {
                let _ = ioloop::block_on(tokio::net::TcpListener::bind("127.0.0.1:0"));
            }),
        ),
        (
            "tokio::spawn",
            Box::new(|| {
                ioloop::block_on(async { drop(tokio::spawn(async {})) });
            }),
        ),
    ];
    for (call, run) in calls {
        let panic = std::panic::catch_unwind(run).expect_err(call);
        let text = testkit::util::panic_text(&*panic);
        assert!(
            text.contains("no reactor running") || text.contains("Tokio 1.x runtime"),
            "{call}: {text}"
        );
    }
}

#[test]
fn tokio_work_runs_on_a_tokio_runtime_reached_through_spawn_blocking() {
    // The way around it: a tokio runtime of its own, entered from the
    // blocking pool, so the loop thread never blocks on it.
    let tokio_rt = Arc::new(
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap(),
    );
    let answer = ioloop::block_on(async move {
        ioloop::spawn_blocking(move || {
            tokio_rt.block_on(async {
                tokio::time::sleep(Duration::from_millis(1)).await;
                42
            })
        })
        .await
        .unwrap()
    });
    assert_eq!(answer, 42);
}
