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
