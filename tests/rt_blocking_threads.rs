//! Idle blocking-pool threads really exit: counted as the OS sees them, in
//! /proc/self/task. One test in this file, so no other test's threads come
//! and go while it counts.

use std::sync::{Arc, Barrier};
use std::time::Duration;

fn os_threads() -> usize {
    std::fs::read_dir("/proc/self/task").unwrap().count()
}

#[test]
fn idle_threads_leave_the_process_after_the_keep_alive() {
    let rt = ioloop::Runtime::builder()
        .thread_keep_alive(Duration::from_millis(100))
        .build()
        .unwrap();
    let before = os_threads();
    rt.block_on(async {
        // Nine jobs meet at `all_in`, and none leaves before the last has
        // counted the threads at `counted`: all nine are alive while it
        // counts, however slowly the machine runs (under valgrind, the
        // keep-alive can pass before the loop would get to count).
        let all_in = Arc::new(Barrier::new(8 + 1));
        let counted = Arc::new(Barrier::new(8 + 1));
        let jobs: Vec<_> = (0..8)
            .map(|_| {
                let (a, c) = (all_in.clone(), counted.clone());
                ioloop::spawn_blocking(move || {
                    a.wait();
                    c.wait();
                })
            })
            .collect();
        let (a, c) = (all_in.clone(), counted.clone());
        let during = ioloop::spawn_blocking(move || {
            a.wait();
            let n = os_threads();
            c.wait();
            n
        })
        .await
        .unwrap();
        assert_eq!(during, before + 9);
        for job in jobs {
            job.await.unwrap();
        }
        let gone = async {
            while os_threads() > before {
                ioloop::time::sleep(Duration::from_millis(20)).await;
            }
        };
        ioloop::time::timeout(Duration::from_secs(20), gone)
            .await
            .expect("idle pool threads never exited");
    });
    assert_eq!(os_threads(), before);
}
