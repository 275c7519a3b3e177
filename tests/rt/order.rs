//! Order: runtimes, their handles and their `enter` guards made and
//! dropped in every order and on every thread, and wakes made from inside
//! the very future being polled.

use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ioloop::task::JoinHandle;
use testkit::util::{self, within};

/// What a task's destructor saw and did, while its runtime shut down.
#[derive(Default)]
struct Seen {
    /// The destructor ran.
    dropped: AtomicBool,
    /// A runtime was current in the destructor.
    current: AtomicBool,
    /// The task the destructor spawned ran (it must not: its runtime is
    /// closed).
    spawned_ran: AtomicBool,
    /// The handle of that task.
    spawned: Mutex<Option<JoinHandle<()>>>,
}

/// Put in a task's future: on drop, spawns through the current runtime and
/// records what it found.
struct SpawnsOnDrop(Arc<Seen>);

impl Drop for SpawnsOnDrop {
    fn drop(&mut self) {
        let seen = &self.0;
        seen.dropped.store(true, Ordering::SeqCst);
        seen.current
            .store(ioloop::Handle::try_current().is_some(), Ordering::SeqCst);
        let s = seen.clone();
        let task = ioloop::spawn(async move { s.spawned_ran.store(true, Ordering::SeqCst) });
        *seen.spawned.lock().unwrap() = Some(task);
    }
}

/// A runtime holding one task (taken into its task list) whose destructor
/// spawns.
fn runtime_with_a_spawning_destructor() -> io::Result<(ioloop::Runtime, Arc<Seen>)> {
    let rt = ioloop::Runtime::new()?;
    let seen = Arc::new(Seen::default());
    let guard = SpawnsOnDrop(seen.clone());
    let _task = rt.spawn(async move {
        let _guard = guard;
        std::future::pending::<()>().await
    });
    rt.block_on(ioloop::yield_now());
    Ok((rt, seen))
}

/// Checks what `seen` recorded: the destructor ran with its own, closed
/// runtime current, so what it spawned was cancelled, never run.
async fn assert_shut_down_alone(seen: &Seen) {
    assert!(seen.dropped.load(Ordering::SeqCst));
    assert!(seen.current.load(Ordering::SeqCst));
    let task = seen.spawned.lock().unwrap().take().expect("spawned");
    let err = task.await.expect_err("spawned on a closed runtime");
    assert!(err.is_cancelled());
    assert!(!seen.spawned_ran.load(Ordering::SeqCst));
}

/// Item 11 of issue 28: a runtime dropped inside another runtime's task
/// shut down with the outer runtime current, so what its tasks'
/// destructors spawned ran on the outer runtime (10 runs of 10). Now it
/// shuts down as it does on a thread running no loop: with itself current,
/// closed, refusing the spawn; and the outer runtime is current again
/// afterwards.
#[test]
fn a_runtime_dropped_inside_another_runtimes_task_shuts_down_as_the_current_runtime()
-> io::Result<()> {
    within(Duration::from_secs(10), || {
        let (inner, seen) = runtime_with_a_spawning_destructor()?;
        let outer = ioloop::Runtime::new()?;
        outer.block_on(async move {
            ioloop::spawn(async move {
                drop(inner);
                // The outer runtime is current again.
                assert_eq!(ioloop::spawn(async { 7 }).await.unwrap(), 7);
            })
            .await
            .unwrap();
            assert_shut_down_alone(&seen).await;
            // Nothing reached the outer loop meanwhile.
            for _ in 0..3 {
                ioloop::yield_now().await;
            }
            assert!(!seen.spawned_ran.load(Ordering::SeqCst));
        });
        Ok(())
    })
}

/// The same runtime dropped on a thread running no loop: the behaviour the
/// nested drop must mirror.
#[test]
fn a_runtime_dropped_on_a_plain_thread_shuts_down_as_the_current_runtime() -> io::Result<()> {
    within(Duration::from_secs(10), || {
        let (inner, seen) = runtime_with_a_spawning_destructor()?;
        drop(inner);
        let rt = ioloop::Runtime::new()?;
        rt.block_on(assert_shut_down_alone(&seen));
        Ok(())
    })
}
