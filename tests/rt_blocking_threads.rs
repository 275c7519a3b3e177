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
        let barrier = Arc::new(Barrier::new(8 + 1));
        let jobs: Vec<_> = (0..8)
            .map(|_| {
                let b = barrier.clone();
                ioloop::spawn_blocking(move || {
                    b.wait();
                })
            })
            .collect();
        // All eight are running (waiting at the barrier) now.
        let b = barrier.clone();
        ioloop::spawn_blocking(move || b.wait()).await.unwrap();
        assert_eq!(os_threads(), before + 9);
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
