//! Entering the loop: block_on, nesting, panics in the main future, two
//! threads taking turns.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::Duration;

use testkit::util;
use util::within;

#[test]
fn block_on_returns_the_output() {
    assert_eq!(ioloop::block_on(async { 7 }), 7);
    let rt = ioloop::Runtime::new().unwrap();
    assert_eq!(rt.block_on(async { "a" }), "a");
    // The same runtime can be entered again.
    assert_eq!(rt.block_on(async { "b" }), "b");
}

#[test]
fn block_on_inside_a_task_panics_instead_of_deadlocking() {
    let err = ioloop::block_on(async {
        ioloop::spawn(async { ioloop::block_on(async { 1 }) })
            .await
            .unwrap_err()
    });
    assert!(err.is_panic());
    let payload = err.into_panic();
    let message = util::panic_text(&*payload);
    assert!(message.contains("inside a running runtime"), "{message}");
}

#[test]
fn runtime_block_on_inside_block_on_panics_too() {
    let other = ioloop::Runtime::new().unwrap();
    let panic = catch_unwind(AssertUnwindSafe(|| {
        ioloop::block_on(async { other.block_on(async {}) });
    }))
    .unwrap_err();
    let message = util::panic_text(&*panic);
    assert!(message.contains("inside a running runtime"), "{message}");
}

#[test]
fn a_panicking_main_future_propagates_and_the_runtime_stays_usable() {
    let rt = ioloop::Runtime::new().unwrap();
    let survivor = rt.spawn(async {
        ioloop::time::sleep(Duration::from_millis(5)).await;
        "survived"
    });
    let panic = catch_unwind(AssertUnwindSafe(|| {
        rt.block_on(async { panic!("main future fails") })
    }))
    .unwrap_err();
    assert_eq!(panic.downcast_ref::<&str>(), Some(&"main future fails"));
    // The loop's state went back into the runtime; tasks carry on.
    assert_eq!(rt.block_on(survivor).unwrap(), "survived");
}

/// Starts `rt.block_on(gate.wait())` on a thread and returns once that
/// thread's loop runs (its main future parked on the gate).
fn hold_the_loop(
    rt: &std::sync::Arc<ioloop::Runtime>,
    gate: &std::sync::Arc<util::parking::Signal>,
) -> std::thread::JoinHandle<std::thread::ThreadId> {
    let (g, r) = (gate.clone(), rt.clone());
    let holder = std::thread::spawn(move || {
        r.block_on(g.wait());
        std::thread::current().id()
    });
    within(Duration::from_secs(10), {
        let gate = gate.clone();
        move || {
            while !gate.has_waiter() {
                std::thread::yield_now();
            }
        }
    });
    holder
}

/// Item 9 of the correctness issue: a second `block_on` used to panic
/// ("already running on another thread"). It waits its turn, and its
/// future makes progress meanwhile: it spawns, sleeps and awaits a task
/// through the loop running on the first thread, and it can be what
/// releases the first thread (no deadlock).
#[test]
fn block_on_on_a_second_thread_waits_its_turn_and_its_future_runs_meanwhile() {
    let rt = std::sync::Arc::new(ioloop::Runtime::new().unwrap());
    let gate = util::signal();
    let holder = hold_the_loop(&rt, &gate);
    let (g, r) = (gate.clone(), rt.clone());
    let second = within(Duration::from_secs(10), move || {
        r.block_on(async move {
            let task = ioloop::spawn(async { std::thread::current().id() });
            ioloop::time::sleep(Duration::from_millis(5)).await;
            let ran_on = task.await.unwrap();
            g.set();
            ran_on
        })
    });
    let first = holder.join().unwrap();
    // The task ran on the loop, which the first thread was running.
    assert_eq!(second, first);
}

/// ... and once the first `block_on` returns, the waiting one runs the loop
/// itself.
#[test]
fn block_on_on_a_second_thread_runs_the_loop_once_the_first_returns() {
    let rt = std::sync::Arc::new(ioloop::Runtime::new().unwrap());
    let gate = util::signal();
    let holder = hold_the_loop(&rt, &gate);
    let first_done = util::signal();
    let (done, r) = (first_done.clone(), rt.clone());
    let second = std::thread::spawn(move || {
        r.block_on(async move {
            done.wait().await;
            let task = ioloop::spawn(async { std::thread::current().id() });
            (task.await.unwrap(), std::thread::current().id())
        })
    });
    gate.set();
    holder.join().unwrap();
    first_done.set();
    let (task_thread, second_thread) =
        within(Duration::from_secs(10), move || second.join().unwrap());
    assert_eq!(task_thread, second_thread);
}

/// A future that, on its first poll, wakes itself and then parks and
/// unparks its own thread, as a synchronous library called from a poll
/// might; it is ready on its second poll, after running `then`.
fn wakes_itself_then_parks(
    then: impl FnOnce() + Unpin,
) -> impl std::future::Future<Output = &'static str> {
    let mut then = Some(then);
    let mut polled = false;
    std::future::poll_fn(move |cx| {
        if polled {
            (then.take().expect("ready once"))();
            return std::task::Poll::Ready("polled again");
        }
        polled = true;
        cx.waker().wake_by_ref();
        std::thread::current().unpark();
        std::thread::park();
        std::task::Poll::Pending
    })
}

/// Item 1 of issue 28: `Handle::block_on` kept the future's wake only as
/// the thread's park token, which the future's own `park` consumed; the
/// future was never polled again and the call hung.
#[test]
fn handle_block_on_keeps_a_wake_made_inside_its_own_future() {
    let rt = ioloop::Runtime::new().unwrap();
    let handle = rt.handle().clone();
    let got = within(Duration::from_secs(10), move || {
        handle.block_on(wakes_itself_then_parks(|| {}))
    });
    assert_eq!(got, "polled again");
}

/// Item 1 of issue 28, while another thread runs the loop: the waiting
/// `Handle::block_on` lost the wake the same way.
#[test]
fn handle_block_on_beside_a_running_loop_keeps_a_wake_made_inside_its_own_future() {
    let rt = std::sync::Arc::new(ioloop::Runtime::new().unwrap());
    let gate = util::signal();
    let holder = hold_the_loop(&rt, &gate);
    let (handle, g) = (rt.handle().clone(), gate.clone());
    let got = within(Duration::from_secs(10), move || {
        handle.block_on(wakes_itself_then_parks(move || g.set()))
    });
    assert_eq!(got, "polled again");
    holder.join().unwrap();
}

/// Item 1 of issue 28: a `Runtime::block_on` waiting its turn (another
/// thread holds the loop) lost its future's wake, and, since only that
/// future could release the loop, hung for good.
#[test]
fn runtime_block_on_waiting_its_turn_keeps_a_wake_made_inside_its_own_future() {
    let rt = std::sync::Arc::new(ioloop::Runtime::new().unwrap());
    let gate = util::signal();
    let holder = hold_the_loop(&rt, &gate);
    let (r, g) = (rt.clone(), gate.clone());
    let got = within(Duration::from_secs(10), move || {
        r.block_on(wakes_itself_then_parks(move || g.set()))
    });
    assert_eq!(got, "polled again");
    holder.join().unwrap();
}

/// The same future on the loop's own thread: its wake queues it on the
/// loop, which the thread's park token does not touch.
#[test]
fn runtime_block_on_keeps_a_wake_made_inside_its_own_future() {
    let got = within(Duration::from_secs(10), || {
        let rt = ioloop::Runtime::new().unwrap();
        rt.block_on(wakes_itself_then_parks(|| {}))
    });
    assert_eq!(got, "polled again");
}
