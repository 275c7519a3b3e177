//! A seeded runtime (`sim::Seed::seed`, issue 32): the same seed runs the
//! same program's tasks in the same order, timers due at the same instant
//! and tasks woken together included; other seeds try other orders; no
//! seed keeps first in, first out.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ioloop::sim::Seed;
use ioloop::time::{Instant, sleep, sleep_until};

/// Six tasks taking turns in three ways (yielding, sleeping to one shared
/// deadline on a paused clock, and waking one another through a
/// `JoinHandle`), each noting every step. Returns the steps in the order
/// they ran, and the runtime's schedule hash.
fn program(seed: Option<u64>) -> (Vec<(u32, u32)>, Option<u64>) {
    let mut builder = ioloop::Runtime::builder();
    builder.start_paused(true);
    if let Some(seed) = seed {
        builder.seed(seed);
    }
    let rt = builder.build().unwrap();
    rt.block_on(async {
        let steps = Arc::new(Mutex::new(Vec::new()));
        let due = Instant::now() + Duration::from_secs(1);
        let mut tasks = Vec::new();
        for task in 0..6u32 {
            let steps = steps.clone();
            tasks.push(ioloop::spawn(async move {
                for step in 0..3u32 {
                    steps.lock().unwrap().push((task, step));
                    match step {
                        0 => ioloop::yield_now().await,
                        1 => sleep_until(due).await,
                        _ => sleep(Duration::from_millis(10)).await,
                    }
                }
                task
            }));
        }
        // A seventh task that waits on the first: woken by its completion.
        let first = tasks.remove(0);
        let steps2 = steps.clone();
        let waiter = ioloop::spawn(async move {
            let n = first.await.unwrap();
            steps2.lock().unwrap().push((100, n));
        });
        for task in tasks {
            task.await.unwrap();
        }
        waiter.await.unwrap();
        let hash = ioloop::sim::schedule_hash();
        let steps = steps.lock().unwrap().clone();
        (steps, hash)
    })
}

#[test]
fn the_same_seed_runs_the_same_order_every_time() {
    for seed in [0, 1, 42, u64::MAX] {
        let first = program(Some(seed));
        assert!(first.1.is_some());
        for _ in 0..5 {
            assert_eq!(program(Some(seed)), first, "seed {seed}");
        }
    }
}

#[test]
fn other_seeds_try_other_orders() {
    let orders: BTreeSet<_> = (0..40).map(|seed| program(Some(seed)).0).collect();
    let hashes: BTreeSet<_> = (0..40).map(|seed| program(Some(seed)).1).collect();
    // 40 seeds over six interleaved tasks: collisions are possible, but
    // not many.
    assert!(orders.len() >= 30, "only {} orders of 40", orders.len());
    assert!(hashes.len() >= 30, "only {} hashes of 40", hashes.len());
    // Every order is still a correct run: each task's steps in its own
    // order, every step present.
    for order in orders {
        assert_eq!(order.len(), 6 * 3 + 1);
        for task in 0..6 {
            let mine: Vec<u32> = order
                .iter()
                .filter(|(t, _)| *t == task)
                .map(|(_, s)| *s)
                .collect();
            assert_eq!(mine, [0, 1, 2]);
        }
        let last_of_0 = order.iter().position(|&s| s == (0, 2)).unwrap();
        let woken = order.iter().position(|&s| s == (100, 0)).unwrap();
        assert!(woken > last_of_0, "the waiter ran before its task ended");
    }
}

#[test]
fn timers_due_at_the_same_instant_fire_in_an_order_the_seed_picks() {
    let fired = |seed: u64| {
        let rt = ioloop::Runtime::builder()
            .start_paused(true)
            .seed(seed)
            .build()
            .unwrap();
        rt.block_on(async {
            let order = Arc::new(Mutex::new(Vec::new()));
            let due = Instant::now() + Duration::from_secs(5);
            let sleepers: Vec<_> = (0..8)
                .map(|n| {
                    let order = order.clone();
                    ioloop::spawn(async move {
                        sleep_until(due).await;
                        order.lock().unwrap().push(n);
                    })
                })
                .collect();
            for sleeper in sleepers {
                sleeper.await.unwrap();
            }
            order.lock().unwrap().clone()
        })
    };
    assert_eq!(fired(3), fired(3));
    let orders: BTreeSet<Vec<i32>> = (0..20).map(fired).collect();
    assert!(orders.len() > 10, "{orders:?}");
}

#[test]
fn without_a_seed_tasks_run_first_in_first_out_and_no_hash_is_kept() {
    let (steps, hash) = program(None);
    assert_eq!(hash, None);
    // Spawned in order, each yields once: the first round runs 0..6 in
    // spawn order, and so does the second.
    let first_round: Vec<u32> = steps.iter().take(6).map(|(t, _)| *t).collect();
    assert_eq!(first_round, [0, 1, 2, 3, 4, 5]);
    assert_eq!(program(None), (steps, None));
}

#[test]
fn a_seeded_runtimes_tasks_carry_their_spawners_tag() {
    let rt = ioloop::Runtime::builder().seed(11).build().unwrap();
    let seen = rt.block_on(async {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let mut hosts = Vec::new();
        for host in [7u32, 9] {
            let seen = seen.clone();
            hosts.push(ioloop::sim::with_tag(host, || {
                ioloop::spawn(async move {
                    seen.lock().unwrap().push(("host", ioloop::sim::tag()));
                    // A child, and a grandchild spawned after a yield.
                    let seen2 = seen.clone();
                    let child = ioloop::spawn(async move {
                        ioloop::yield_now().await;
                        let seen3 = seen2.clone();
                        ioloop::spawn(async move {
                            seen3
                                .lock()
                                .unwrap()
                                .push(("grandchild", ioloop::sim::tag()))
                        })
                        .await
                        .unwrap();
                        seen2.lock().unwrap().push(("child", ioloop::sim::tag()));
                    });
                    child.await.unwrap();
                    seen.lock()
                        .unwrap()
                        .push(("host again", ioloop::sim::tag()));
                })
            }));
        }
        // The spawner's own tag is back once `with_tag` returns.
        assert_eq!(ioloop::sim::tag(), 0);
        for host in hosts {
            host.await.unwrap();
        }
        let mut seen = seen.lock().unwrap().clone();
        seen.sort();
        seen
    });
    let mut expected = Vec::new();
    for host in [7, 9] {
        for what in ["host", "child", "grandchild", "host again"] {
            expected.push((what, host));
        }
    }
    expected.sort();
    assert_eq!(seen, expected);
}
