//! Spawn a few tasks that sleep for different times, and join them.
//!
//! Run it with `cargo run --example tasks`. The tasks finish in the order of
//! their sleeps, not the order they were spawned, and the whole run takes
//! about as long as the longest sleep: they wait concurrently, on one
//! thread, in one loop.

use std::time::{Duration, Instant};

#[ioloop::main]
async fn main() {
    let start = Instant::now();
    let sleeps = [300, 100, 400, 200, 50];
    let tasks: Vec<_> = sleeps
        .iter()
        .enumerate()
        .map(|(i, &ms)| {
            ioloop::spawn(async move {
                ioloop::time::sleep(Duration::from_millis(ms)).await;
                println!("task {i} woke after {ms} ms (at {:?})", start.elapsed());
                ms
            })
        })
        .collect();
    let mut total = 0;
    for task in tasks {
        total += task.await.expect("no task panics here");
    }
    println!(
        "slept {total} ms in all, in {:?} of wall time, on one thread",
        start.elapsed()
    );
}
