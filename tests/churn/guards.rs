//! `Runtime::enter` guards, made and dropped over and over, in order and
//! out of it.

use std::io;
use std::panic::{AssertUnwindSafe, catch_unwind};

use testkit::account::{self, Held};
use testkit::util;

/// Item 2 of issue 28: `let (g1, g2) = (rt1.enter(), rt2.enter());
/// drop(g1); drop(g2);` left rt1 current: a later `spawn` outside any
/// runtime succeeded, and rt1's epoll fd and eventfd stayed open after rt1
/// was dropped. Now the out-of-order drop panics, as tokio's does, and
/// leaves no runtime current.
#[test]
fn enter_guards_dropped_out_of_order_panic_and_leave_no_runtime_current() -> io::Result<()> {
    let _serial = account::serial();
    let fds = account::open_fds();
    let rt1 = ioloop::Runtime::new()?;
    let rt2 = ioloop::Runtime::new()?;
    let panic = catch_unwind(AssertUnwindSafe(|| {
        let (g1, g2) = (rt1.enter(), rt2.enter());
        drop(g1);
        drop(g2);
    }))
    .expect_err("dropping the outer guard first panics");
    let message = util::panic_text(&*panic);
    assert!(message.contains("dropped out of order"), "{message}");
    assert!(ioloop::Handle::try_current().is_none());
    let spawned = catch_unwind(|| drop(ioloop::spawn(async {})));
    assert!(spawned.is_err(), "spawn outside any runtime must panic");
    drop(rt1);
    drop(rt2);
    assert_eq!(account::open_fds(), fds, "both runtimes' fds are closed");
    Ok(())
}

/// 100,000 guards made and dropped, alone and in nested pairs of two
/// runtimes, then the runtimes dropped: heap, descriptors and threads are
/// back where they were, and no runtime is left current.
#[test]
fn enter_guards_made_and_dropped_leave_nothing() -> io::Result<()> {
    let _serial = account::serial();
    let churn = |n: usize| -> io::Result<()> {
        // No stall detector: its thread's first waits can allocate what
        // lives for the process (parking_lot's table of parked threads),
        // by timing; guards are what is measured here.
        let build = || ioloop::Runtime::builder().slow_poll_threshold(None).build();
        let (rt1, rt2) = (build()?, build()?);
        for i in 0..n {
            if i % 2 == 0 {
                let _g = rt1.enter();
            } else {
                let _outer = rt2.enter();
                let _inner = rt1.enter();
            }
        }
        assert!(ioloop::Handle::try_current().is_none());
        Ok(())
    };
    // Warm: this thread's slots, the logger.
    churn(10)?;
    let before = Held::now();
    churn(100_000)?;
    // The slack is for the test harness, which records the other tests'
    // results meanwhile (the figures are the whole process's); a guard
    // that kept a single byte would show 100,000 times over.
    before.assert_back("100,000 enter guards", 16 * 1024);
    Ok(())
}
