//! Entering the loop: block_on, nesting, panics in the main future.

mod util;

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::Duration;

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

#[test]
fn block_on_from_two_threads_at_once_is_refused_with_a_message() {
    let rt = std::sync::Arc::new(ioloop::Runtime::new().unwrap());
    let gate = util::signal();
    let (g, r) = (gate.clone(), rt.clone());
    let first = std::thread::spawn(move || r.block_on(g.wait()));
    // Wait until the first thread's loop is running (its main future parked).
    within(Duration::from_secs(10), {
        let gate = gate.clone();
        move || {
            while !gate.has_waiter() {
                std::thread::yield_now();
            }
        }
    });
    let panic = catch_unwind(AssertUnwindSafe(|| rt.block_on(async {}))).unwrap_err();
    let message = util::panic_text(&*panic);
    assert!(
        message.contains("already running on another thread"),
        "{message}"
    );
    gate.set();
    first.join().unwrap();
}
