//! `ctrl_c()` completes on a SIGINT raised after it started listening, and
//! afterwards SIGINT no longer kills the process (the default action is not
//! restored, as the module docs say).
//!
//! It raises SIGINT at its own process, which must not reach any other
//! test: no other test in this binary raises or listens for SIGINT (see
//! main.rs).

use std::future::poll_fn;
use std::io;
use std::pin::pin;
use std::task::Poll;
use std::time::Duration;
use testkit::{signal_raise, util};

#[test]
fn ctrl_c_completes_on_sigint_and_leaves_it_handled() -> io::Result<()> {
    util::within(Duration::from_secs(10), || {
        ioloop::block_on(async {
            let mut ctrl_c = pin!(ioloop::signal::ctrl_c());
            // The first poll installs the listener; only then is raising
            // SIGINT safe for the test runner.
            let first = poll_fn(|cx| Poll::Ready(ctrl_c.as_mut().poll(cx))).await;
            assert!(
                first.is_pending(),
                "ctrl_c completed before any SIGINT: {first:?}"
            );
            signal_raise::raise(libc::SIGINT)?;
            ctrl_c.await?;

            // No listener is left, and the handler stays installed: this
            // SIGINT is swallowed. Were the default action back, it would
            // kill the test process here.
            signal_raise::raise(libc::SIGINT)?;
            // A new listener still hears the next one.
            let mut again = pin!(ioloop::signal::ctrl_c());
            let first = poll_fn(|cx| Poll::Ready(again.as_mut().poll(cx))).await;
            assert!(
                first.is_pending(),
                "the swallowed SIGINT reached a new listener"
            );
            signal_raise::raise(libc::SIGINT)?;
            again.await
        })
    })
}
