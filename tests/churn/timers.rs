//! Timers made and dropped over and over: the timer tables follow the live
//! timers down as well as up, whether the sleeps were polled and dropped on
//! the loop or reset and dropped on another thread.

use std::io;
use std::time::Duration;

use ioloop::Handle;
use ioloop::time::{Instant, Sleep, sleep};
use testkit::account::{self, Held};
use testkit::time_poll::poll_once;
use testkit::util::within;

/// Sleeps alive at once in each round: enough that the tables grow well
/// past the size below which they are never shrunk.
const BATCH: usize = 10_000;
/// Sleeps in all, per test.
const TOTAL: usize = 100_000;
/// What the heap may hold over its figure before the rounds: a few tables'
/// worth of small slack, far below one round's timers (a round arms 10,000,
/// some 480 KB of heap entries and slots).
const SLACK: isize = 32 * 1024;

/// Lets the loop go idle, which is when it gives back what a burst of
/// timers left behind, and returns how many timers are armed.
async fn settle() -> u64 {
    // Twice: the first sleep's tick takes in and runs whatever other
    // threads handed the loop; the loop then goes idle waiting on it, and
    // again on the second.
    for _ in 0..2 {
        sleep(Duration::from_millis(1)).await;
    }
    ioloop::yield_now().await;
    Handle::current().metrics().live_timers
}

/// Armed sleeps: `n` of them, a minute or so out, each polled once.
fn armed(n: usize) -> Vec<Sleep> {
    (0..n)
        .map(|i| {
            let mut s = sleep(Duration::from_secs(60 + (i % 7) as u64));
            assert!(poll_once(&mut s).is_pending());
            s
        })
        .collect()
}

/// 100,000 sleeps made, polled once (armed) and dropped, 10,000 alive at a
/// time: the heap comes back to what it held before.
#[test]
fn a_hundred_thousand_sleeps_polled_once_and_dropped_leave_nothing() -> io::Result<()> {
    let _serial = account::serial();
    within(Duration::from_secs(120), || {
        let rt = account::runtime()?;
        rt.block_on(async {
            // Warm: the tables' first growth, the metrics, the thread-locals.
            drop(armed(BATCH));
            assert_eq!(settle().await, 0);
            let before = Held::now();
            for _ in 0..TOTAL / BATCH {
                drop(armed(BATCH));
            }
            assert_eq!(settle().await, 0);
            before.assert_back("100,000 sleeps polled once and dropped", SLACK);
        });
        Ok(())
    })
}

/// 100,000 armed sleeps, each reset earlier from another thread (which
/// hands the loop a move), half of them dropped there (which hands it a
/// removal) and half back on the loop: nothing waits in the heap for the
/// deadlines, and the heap comes back to what it held before.
#[test]
fn a_hundred_thousand_sleeps_reset_from_another_thread_and_dropped_leave_nothing() -> io::Result<()>
{
    let _serial = account::serial();
    within(Duration::from_secs(120), || {
        let rt = account::runtime()?;
        rt.block_on(async {
            let round = || async {
                let sleeps = armed(BATCH);
                let back = std::thread::spawn(move || {
                    let deadline = Instant::now() + Duration::from_secs(30);
                    let mut back = Vec::with_capacity(sleeps.len() / 2);
                    for (i, mut s) in sleeps.into_iter().enumerate() {
                        s.reset(deadline);
                        if i % 2 == 0 {
                            back.push(s);
                        }
                    }
                    back
                })
                .join()
                .expect("the resetting thread panicked");
                drop(back);
                assert_eq!(settle().await, 0, "timers left armed after a round");
            };
            // The first round sets the high-water mark: the slot table may
            // keep it while a live timer sits at its end (slots cannot
            // move; see `Timers::shrink_if_sparse`), but no round adds to it.
            round().await;
            let before = Held::now();
            for _ in 0..TOTAL / BATCH {
                round().await;
            }
            before.assert_back(
                "100,000 sleeps reset from another thread and dropped",
                SLACK,
            );
        });
        Ok(())
    })
}

/// A sleep whose timer fired while nobody polled it, moved later
/// (`reset`), then polled: it takes a fresh timer on its own loop and
/// leaves the fired one, whose key is stale, alone. 10,000 rounds of it
/// make no allocation of their own (nothing is handed to a loop to
/// remove, as a timer left in another runtime's heap would be); a few,
/// once, as the heap of fired entries grows before it is swept.
#[test]
fn a_sleep_armed_again_on_its_loop_after_it_fired_allocates_nothing() -> io::Result<()> {
    let _serial = account::serial();
    within(Duration::from_secs(120), || {
        let rt = ioloop::Runtime::builder().start_paused(true).build()?;
        rt.block_on(async {
            let mut again = Box::pin(sleep(Duration::from_millis(1)));
            let mut round = async || {
                assert!(poll_once(&mut again).is_pending());
                // The timer fires; the sleep is not polled.
                ioloop::time::advance(Duration::from_millis(2)).await;
                again
                    .as_mut()
                    .reset(Instant::now() + Duration::from_millis(1));
            };
            // Warm: the first timers, and the tables' first growth.
            for _ in 0..2 {
                round().await;
            }
            let before = account::allocations_made();
            for _ in 0..10_000 {
                round().await;
            }
            let made = account::allocations_made() - before;
            assert!(made <= 16, "{made} allocations in 10,000 rounds");
        });
        Ok(())
    })
}
