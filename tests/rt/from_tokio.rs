//! The guide's "Coming from tokio" table, held to account: each tokio item
//! a server reaches for, run on ioloop, as it is where it needs no tokio
//! runtime (its `sync` module, `select!`, `task_local!`, tokio-stream's
//! `StreamMap`), or shown to need one (`tokio::fs`, `tokio::process`) with
//! the way that serves instead.
//!
//! Every wait here is on a channel or a count; the only timeouts are
//! `within`'s safety nets.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use testkit::util::{panic_text, within};
use tokio::sync::{Mutex, Notify, Semaphore, broadcast, mpsc, oneshot, watch};

const NET: Duration = Duration::from_secs(30);

/// `Notify` wakes an ioloop task notified from another task and from a
/// plain thread, and keeps a `notify_one` made before anyone waits (its
/// permit): the wake a port to a listener without a permit loses.
#[test]
fn tokio_notify_wakes_ioloop_tasks_and_keeps_an_early_permit() {
    within(NET, || {
        ioloop::block_on(async {
            let notify = Arc::new(Notify::new());
            // Made before anyone waits: kept as a permit.
            notify.notify_one();
            notify.notified().await;

            let waiter = ioloop::spawn({
                let notify = notify.clone();
                async move {
                    notify.notified().await;
                    notify.notified().await;
                }
            });
            ioloop::yield_now().await;
            notify.notify_one();
            let thread = std::thread::spawn({
                let notify = notify.clone();
                move || notify.notify_one()
            });
            waiter.await.unwrap();
            thread.join().unwrap();
        })
    })
}

/// `Semaphore` bounds how many ioloop tasks are inside at once (the
/// connection limit of a server), with owned permits moved into tasks.
#[test]
fn tokio_semaphore_bounds_ioloop_tasks() {
    within(NET, || {
        ioloop::block_on(async {
            let limit = Arc::new(Semaphore::new(2));
            let (inside, most) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
            let mut tasks = Vec::new();
            for _ in 0..10 {
                let permit = limit.clone().acquire_owned().await.unwrap();
                let (inside, most) = (inside.clone(), most.clone());
                tasks.push(ioloop::spawn(async move {
                    let now = inside.fetch_add(1, Ordering::SeqCst) + 1;
                    most.fetch_max(now, Ordering::SeqCst);
                    for _ in 0..3 {
                        ioloop::yield_now().await;
                    }
                    inside.fetch_sub(1, Ordering::SeqCst);
                    drop(permit);
                }));
            }
            for task in tasks {
                task.await.unwrap();
            }
            assert_eq!(most.load(Ordering::SeqCst), 2);
            assert_eq!(limit.available_permits(), 2);
        })
    })
}

/// `mpsc` carries values from ioloop tasks and from a plain thread
/// (`blocking_send`) to a task, bounded; `oneshot` carries each reply back.
#[test]
fn tokio_mpsc_and_oneshot_carry_requests_and_replies() {
    within(NET, || {
        let (tx, mut rx) = mpsc::channel::<(u64, oneshot::Sender<u64>)>(4);
        let thread = std::thread::spawn({
            let tx = tx.clone();
            move || {
                for i in 0..100 {
                    let (reply, answer) = oneshot::channel();
                    tx.blocking_send((i, reply)).unwrap();
                    assert_eq!(answer.blocking_recv().unwrap(), i * 2);
                }
            }
        });
        let served = ioloop::block_on(async move {
            let server = ioloop::spawn(async move {
                let mut served = 0;
                while let Some((i, reply)) = rx.recv().await {
                    reply.send(i * 2).unwrap();
                    served += 1;
                }
                served
            });
            for i in 0..100 {
                let (reply, answer) = oneshot::channel();
                tx.send((i, reply)).await.unwrap();
                assert_eq!(answer.await.unwrap(), i * 2);
            }
            drop(tx);
            // Ends once the thread's sender is gone too.
            server.await.unwrap()
        });
        thread.join().unwrap();
        assert_eq!(served, 200);
    })
}

/// `broadcast` reaches every subscribed ioloop task (pub/sub, a chat
/// room), and a receiver that falls behind learns how much it missed.
#[test]
fn tokio_broadcast_reaches_every_subscriber_and_reports_lag() {
    within(NET, || {
        ioloop::block_on(async {
            let (tx, _) = broadcast::channel::<u32>(4);
            let subscribers: Vec<_> = (0..3)
                .map(|_| {
                    let mut rx = tx.subscribe();
                    ioloop::spawn(async move {
                        let mut got = Vec::new();
                        while let Ok(v) = rx.recv().await {
                            got.push(v);
                        }
                        got
                    })
                })
                .collect();
            let mut slow = tx.subscribe();
            for v in 0..10 {
                tx.send(v).unwrap();
                // Room for the subscribers to keep up; `slow` never reads.
                ioloop::yield_now().await;
            }
            drop(tx);
            for task in subscribers {
                assert_eq!(task.await.unwrap(), (0..10).collect::<Vec<_>>());
            }
            assert_eq!(
                slow.recv().await,
                Err(broadcast::error::RecvError::Lagged(6))
            );
            assert_eq!(slow.recv().await, Ok(6));
        })
    })
}

/// `watch` hands an ioloop task the latest value (a configuration, a stop
/// flag), from a task or a thread; intermediate values may be skipped.
#[test]
fn tokio_watch_delivers_the_latest_value() {
    within(NET, || {
        ioloop::block_on(async {
            let (tx, mut rx) = watch::channel(0u32);
            let reader = ioloop::spawn(async move {
                while *rx.borrow_and_update() < 100 {
                    rx.changed().await.unwrap();
                }
                *rx.borrow()
            });
            // The sender may be gone before the reader looks: `changed`
            // still reports a value it has not seen.
            std::thread::spawn(move || {
                for v in 1..=100 {
                    tx.send(v).unwrap();
                }
            });
            assert_eq!(reader.await.unwrap(), 100);
        })
    })
}

/// `tokio::sync::Mutex` held across an `.await` on ioloop, by tasks and
/// by a thread (`blocking_lock`).
#[test]
fn tokio_mutex_is_held_across_awaits() {
    within(NET, || {
        let total = Arc::new(Mutex::new(0u64));
        let thread = std::thread::spawn({
            let total = total.clone();
            move || {
                for _ in 0..1000 {
                    *total.blocking_lock() += 1;
                }
            }
        });
        ioloop::block_on(async {
            let tasks: Vec<_> = (0..4)
                .map(|_| {
                    let total = total.clone();
                    ioloop::spawn(async move {
                        for _ in 0..100 {
                            let mut guard = total.lock().await;
                            ioloop::yield_now().await;
                            *guard += 1;
                        }
                    })
                })
                .collect();
            for task in tasks {
                task.await.unwrap();
            }
        });
        thread.join().unwrap();
        assert_eq!(*total.blocking_lock(), 1400);
    })
}

/// `tokio::select!` races ioloop futures (a receive against an ioloop
/// timer), drops the losers, and takes its `else` arm when every branch's
/// pattern fails.
#[test]
fn tokio_select_races_ioloop_futures() {
    within(NET, || {
        ioloop::block_on(async {
            let (tx, mut rx) = mpsc::channel::<u32>(1);
            let sent = ioloop::spawn(async move { tx.send(7).await.unwrap() });
            let got = tokio::select! {
                v = rx.recv() => v,
                () = ioloop::time::sleep(Duration::from_secs(3600)) => None,
            };
            assert_eq!(got, Some(7));
            sent.await.unwrap();
            // The sender is gone: `recv` yields `None`, which fails the
            // pattern; the far timer never fires, so `else` is taken once
            // the only other branch is disabled too.
            let ended = tokio::select! {
                biased;
                Some(_) = rx.recv() => false,
                else => true,
            };
            assert!(ended);
            let timed_out = tokio::select! {
                _ = std::future::pending::<()>() => false,
                () = ioloop::time::sleep(Duration::from_millis(1)) => true,
            };
            assert!(timed_out);
        })
    })
}

tokio::task_local! {
    static REQUEST_ID: u64;
}

/// `tokio::task_local!`: a value scoped to one ioloop task's future, seen
/// across its awaits and not by another task.
#[test]
fn tokio_task_local_scopes_an_ioloop_task() {
    within(NET, || {
        ioloop::block_on(async {
            let tasks: Vec<_> = (0..3u64)
                .map(|id| {
                    ioloop::spawn(REQUEST_ID.scope(id, async move {
                        ioloop::yield_now().await;
                        REQUEST_ID.get()
                    }))
                })
                .collect();
            for (id, task) in tasks.into_iter().enumerate() {
                assert_eq!(task.await.unwrap(), id as u64);
            }
            assert!(REQUEST_ID.try_with(|_| ()).is_err());
        })
    })
}

/// tokio-stream's `StreamMap` merges keyed streams (one per subscribed
/// channel, say) on ioloop, and forgets a stream once it ends.
#[test]
fn tokio_stream_map_merges_keyed_streams() {
    use tokio_stream::StreamExt;
    use tokio_stream::{StreamMap, wrappers::ReceiverStream};
    within(NET, || {
        ioloop::block_on(async {
            let mut map = StreamMap::new();
            for name in ["news", "sport"] {
                let (tx, rx) = mpsc::channel::<String>(4);
                map.insert(name, ReceiverStream::new(rx));
                // Detached: the stream ends when the sender is dropped.
                drop(ioloop::spawn(async move {
                    for i in 0..3 {
                        tx.send(format!("{name} {i}")).await.unwrap();
                    }
                }));
            }
            let mut got = Vec::new();
            while let Some((key, msg)) = map.next().await {
                assert!(msg.starts_with(key));
                got.push(msg);
            }
            got.sort();
            assert_eq!(got.len(), 6);
            assert!(map.is_empty());
        })
    })
}

/// `tokio::fs` runs its work on tokio's blocking pool, so inside ioloop it
/// panics; ioloop's `spawn_blocking` around `std::fs` does the same job.
#[test]
fn tokio_fs_needs_tokio_and_spawn_blocking_with_std_fs_serves() {
    within(NET, || {
        let path = std::env::temp_dir().join(format!("ioloop-from-tokio-{}", std::process::id()));
        let text = panic_on_ioloop(
            async { tokio::fs::read(&path).await.ok() },
            "tokio::fs needs a tokio runtime",
        );
        assert!(text.contains("Tokio"), "{text}");
        let read = ioloop::block_on(async {
            let path2 = path.clone();
            ioloop::spawn_blocking(move || {
                std::fs::write(&path2, b"kept")?;
                std::fs::read(&path2)
            })
            .await
            .unwrap()
        });
        std::fs::remove_file(&path).unwrap();
        assert_eq!(read.unwrap(), b"kept");
    })
}

/// `tokio::process` needs tokio's reactor; a child run and waited for in
/// `spawn_blocking` serves, and keeps the loop free.
#[test]
fn tokio_process_needs_tokio_and_spawn_blocking_with_std_process_serves() {
    within(NET, || {
        let text = panic_on_ioloop(
            async { tokio::process::Command::new("true").status().await.ok() },
            "tokio::process needs a tokio runtime",
        );
        assert!(text.contains("reactor"), "{text}");
        let status = ioloop::block_on(async {
            let child = ioloop::spawn_blocking(|| std::process::Command::new("true").status());
            // The loop goes on meanwhile (tests/rt/fib_offload.rs shows it
            // answering while a job runs).
            assert_eq!(ioloop::spawn(async { "pong" }).await.unwrap(), "pong");
            child.await.unwrap()
        });
        assert!(status.unwrap().success());
    })
}

/// Runs `future` on ioloop, which must panic (`why` says why it should),
/// and returns the panic's message.
fn panic_on_ioloop<F: std::future::Future<Output: std::fmt::Debug>>(
    future: F,
    why: &str,
) -> String {
    let run = std::panic::AssertUnwindSafe(|| ioloop::block_on(future));
    panic_text(&*std::panic::catch_unwind(run).expect_err(why))
}
