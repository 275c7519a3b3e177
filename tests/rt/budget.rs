//! The cooperative budget: a task whose I/O is always ready is still made
//! to yield, so it cannot starve other tasks or timers.

use std::future::poll_fn;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use ioloop::io::Registration;

#[test]
fn a_task_whose_io_is_always_ready_still_lets_a_timer_fire() -> std::io::Result<()> {
    ioloop::block_on(async {
        // An idle socket pair: our end is writable forever, so every
        // readiness check succeeds without waiting.
        let (a, _b) = mio::net::UnixStream::pair()?;
        let a = Registration::new(a)?;
        let fired = Arc::new(AtomicBool::new(false));
        let f = fired.clone();
        let timer = ioloop::spawn(async move {
            ioloop::time::sleep(Duration::from_millis(5)).await;
            f.store(true, Ordering::SeqCst);
        });
        let start = Instant::now();
        let mut checks = 0u64;
        // Never awaits anything but readiness that is always there.
        while !fired.load(Ordering::SeqCst) {
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "starved: the timer task never ran ({checks} checks)"
            );
            let event = poll_fn(|cx| a.poll_write_ready(cx)).await?;
            assert!(event.is_writable());
            checks += 1;
        }
        timer.await.unwrap();
        // It yielded whenever its budget ran out, not after every check.
        assert!(checks > 128, "{checks}");
        Ok(())
    })
}

/// 1,000 tasks that have all finished, and one more queued behind them.
/// Returns the set and the queued task's flag.
async fn finished_set() -> (ioloop::task::JoinSet<usize>, Arc<AtomicBool>) {
    let mut set = ioloop::task::JoinSet::new();
    for i in 0..1_000 {
        set.spawn(async move { i });
    }
    // Every task runs in the next tick: after one yield they have all
    // finished (a yield waits behind them).
    ioloop::yield_now().await;
    let ran = Arc::new(AtomicBool::new(false));
    let r = ran.clone();
    drop(ioloop::spawn(
        async move { r.store(true, Ordering::SeqCst) },
    ));
    (set, ran)
}

/// tokio's `join_set_coop`: draining a set of finished tasks spends the
/// task's budget, one unit a result, so a loop over `join_next` yields
/// when it runs out and the other tasks get a turn before it ends.
#[test]
fn join_next_spends_budget_so_a_drain_lets_other_tasks_run() {
    ioloop::block_on(async {
        let (mut set, ran) = finished_set().await;
        let (mut results, mut after_other_ran) = (0, 0);
        while let Some(result) = set.join_next().await {
            result.unwrap();
            results += 1;
            if ran.load(Ordering::SeqCst) {
                after_other_ran += 1;
            }
        }
        assert_eq!(results, 1_000);
        assert!(
            after_other_ran > 0,
            "the drain never yielded: the other task ran only after it"
        );
        // Polled by hand: a poll with no budget left is `Pending`, and the
        // next result comes after a yield.
        let (mut set, _) = finished_set().await;
        let (mut results, mut pendings) = (0, 0);
        loop {
            let polled = poll_fn(|cx| std::task::Poll::Ready(set.poll_join_next(cx))).await;
            match polled {
                std::task::Poll::Ready(Some(result)) => {
                    result.unwrap();
                    results += 1;
                }
                std::task::Poll::Ready(None) => break,
                std::task::Poll::Pending => {
                    pendings += 1;
                    ioloop::yield_now().await;
                }
            }
        }
        assert_eq!(results, 1_000);
        assert!(pendings >= 1000 / 128, "{pendings}");
    });
}

/// The same for handles awaited one after another: each output taken
/// spends a unit of budget, as in tokio.
#[test]
fn awaiting_finished_join_handles_spends_budget() {
    ioloop::block_on(async {
        let handles: Vec<_> = (0..1_000)
            .map(|i| ioloop::spawn(async move { i }))
            .collect();
        ioloop::yield_now().await;
        let ran = Arc::new(AtomicBool::new(false));
        let r = ran.clone();
        drop(ioloop::spawn(
            async move { r.store(true, Ordering::SeqCst) },
        ));
        let mut after_other_ran = 0;
        for (i, handle) in handles.into_iter().enumerate() {
            assert_eq!(handle.await.unwrap(), i);
            if ran.load(Ordering::SeqCst) {
                after_other_ran += 1;
            }
        }
        assert!(after_other_ran > 0, "awaiting 1,000 handles never yielded");
        // A handle still pending spends nothing: the budget is given back.
        let pending = ioloop::spawn(std::future::pending::<()>());
        let mut pending = std::pin::pin!(pending);
        for _ in 0..1_000 {
            let polled = poll_fn(|cx| std::task::Poll::Ready(pending.as_mut().poll(cx))).await;
            assert!(polled.is_pending());
        }
        let spent = poll_fn(|cx| std::task::Poll::Ready(ioloop::task::poll_budget(cx))).await;
        assert!(
            spent.is_ready(),
            "polls of a pending handle spent the budget"
        );
        pending.abort();
    });
}

/// The budget counts ioloop's own work only (the guide's "Other crates'
/// futures"): a loop over another crate's future that is always ready
/// (here a channel that always holds a message) never yields, however
/// long it runs, until it spends budget itself with `consume_budget`.
#[test]
fn a_loop_over_another_crates_always_ready_future_yields_only_through_consume_budget() {
    ioloop::block_on(async {
        let (tx, rx) = async_channel::unbounded();
        for i in 0..10_000u32 {
            tx.try_send(i).unwrap();
        }
        let ran = Arc::new(AtomicBool::new(false));
        let r = ran.clone();
        let other = ioloop::spawn(async move { r.store(true, Ordering::SeqCst) });
        for i in 0..10_000u32 {
            assert_eq!(rx.recv().await.unwrap(), i);
            assert!(
                !ran.load(Ordering::SeqCst),
                "the loop yielded at message {i}"
            );
        }
        let mut spent = 0;
        while !ran.load(Ordering::SeqCst) {
            ioloop::task::consume_budget().await;
            spent += 1;
            assert!(spent <= 129, "consume_budget never yielded");
        }
        other.await.unwrap();
    });
}

/// An elapsing timeout spends budget as any completed sleep does, though
/// its inner future spent none: a loop of `timeout(ZERO, pending)` yields
/// within one budget.
#[test]
fn a_loop_of_timeouts_that_elapse_yields() {
    ioloop::block_on(async {
        let ran = Arc::new(AtomicBool::new(false));
        let r = ran.clone();
        let other = ioloop::spawn(async move { r.store(true, Ordering::SeqCst) });
        let mut elapsed = 0;
        while !ran.load(Ordering::SeqCst) {
            let timed = ioloop::time::timeout(Duration::ZERO, std::future::pending::<()>());
            assert!(
                timed.await.is_err(),
                "a zero timeout around `pending` returned"
            );
            elapsed += 1;
            assert!(
                elapsed <= 129,
                "{elapsed} timeouts elapsed and never yielded"
            );
        }
        assert!(elapsed >= 1, "the loop yielded before any timeout elapsed");
        other.await.unwrap();
    });
}
