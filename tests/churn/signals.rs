//! Signal listeners and intervals made and dropped over and over: each
//! listener's pipe, reactor entry and signal-hook action go with it, and
//! each interval's timer leaves the loop's tables.
//!
//! The only signal this binary raises is SIGUSR1, and only here; a listener
//! made before the first raise and held to the end keeps a delivery that
//! arrives between two listeners from taking the default action (which
//! would end the process).

use std::io;
use std::time::Duration;

use ioloop::Handle;
use ioloop::signal::{Signal, SignalKind};
use ioloop::time::{MissedTickBehavior, interval};
use testkit::account::{self, Held};
use testkit::signal_raise::raise;
use testkit::time_poll::poll_once;
use testkit::util::within;

/// Listeners in all, per test, one at a time: far more than the fd table
/// or the reactor's slab would tolerate if each kept something.
const LISTENERS: usize = 2_000;
/// What the heap may hold over its figure before the rounds: a few tables'
/// worth of slack, far below what 2,000 listeners would keep (each a pipe
/// pair, a reactor entry and an action: some 300 bytes of heap at least).
const SLACK: isize = 32 * 1024;

/// 2,000 SIGUSR1 listeners, each made, sent the signal, received from and
/// dropped: descriptors and heap come back to what they were.
#[test]
fn two_thousand_signal_listeners_made_received_and_dropped_leave_nothing() -> io::Result<()> {
    let _serial = account::serial();
    within(Duration::from_secs(120), || {
        let rt = account::runtime()?;
        rt.block_on(async {
            let mut guard = Signal::new(SignalKind::user_defined1())?;
            // Warm: signal-hook's registry, the reactor's slab, the pipes.
            for _ in 0..16 {
                round(&mut guard).await?;
            }
            let before = Held::now();
            for _ in 0..LISTENERS {
                round(&mut guard).await?;
            }
            before.assert_back("2,000 signal listeners made and dropped", SLACK);
            drop(guard);
            Ok(())
        })
    })
}

/// 100,000 intervals, 10,000 alive at a time, each ticked once (the first
/// tick is at once) and polled again, which arms its timer for the next:
/// once dropped, no timer is left armed and the heap comes back.
#[test]
fn a_hundred_thousand_intervals_armed_and_dropped_leave_nothing() -> io::Result<()> {
    const BATCH: usize = 10_000;
    let _serial = account::serial();
    within(Duration::from_secs(120), || {
        let rt = account::runtime()?;
        rt.block_on(async {
            let batch = || async {
                let mut held = Vec::with_capacity(BATCH);
                for i in 0..BATCH {
                    let mut tick = interval(Duration::from_secs(60 + (i % 7) as u64));
                    tick.set_missed_tick_behavior(MissedTickBehavior::Delay);
                    tick.tick().await;
                    assert!(poll_once(&mut Box::pin(tick.tick())).is_pending());
                    held.push(tick);
                }
                // The count is taken once a tick: let one pass.
                ioloop::yield_now().await;
                assert!(Handle::current().metrics().live_timers >= BATCH as u64);
                drop(held);
            };
            batch().await;
            assert_eq!(settle().await, 0);
            let before = Held::now();
            for _ in 0..10 {
                batch().await;
            }
            assert_eq!(settle().await, 0);
            before.assert_back("100,000 intervals armed and dropped", SLACK);
        });
        Ok(())
    })
}

/// One listener made, sent SIGUSR1, received from and dropped; `guard`
/// heard the signal too and takes it, so it holds no backlog.
async fn round(guard: &mut Signal) -> io::Result<()> {
    let mut sig = Signal::new(SignalKind::user_defined1())?;
    raise(SignalKind::user_defined1().as_raw())?;
    sig.recv().await?;
    guard.recv().await
}

/// Lets the loop go idle, which is when it gives back what a burst of
/// timers left behind, and returns how many timers are armed.
async fn settle() -> u64 {
    for _ in 0..2 {
        ioloop::time::sleep(Duration::from_millis(1)).await;
    }
    ioloop::yield_now().await;
    Handle::current().metrics().live_timers
}
