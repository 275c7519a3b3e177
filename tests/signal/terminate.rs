//! Graceful shutdown on SIGTERM: while the loop is busy serving, a SIGTERM
//! sent to the process (as `kill` or systemd would) reaches the task that
//! waits for it, which then stops the server.
//!
//! It sends SIGTERM to its own process, which must not reach any other
//! test: no other test in this binary raises or listens for SIGTERM (see
//! main.rs).

use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use ioloop::signal::{Signal, SignalKind};
use testkit::{signal_raise, util};

#[test]
fn a_busy_server_is_stopped_by_sigterm() -> io::Result<()> {
    util::within(Duration::from_secs(10), || {
        ioloop::block_on(async {
            // Listening before anything sends SIGTERM, so its default
            // action can never kill the test runner.
            let mut term = Signal::new(SignalKind::terminate())?;
            let rounds = Arc::new(AtomicU64::new(0));
            // A server that always has work: the loop never sleeps, so the
            // signal must be noticed by the zero-timeout polls between runs.
            let server = ioloop::spawn({
                let rounds = rounds.clone();
                async move {
                    loop {
                        rounds.fetch_add(1, Ordering::Relaxed);
                        ioloop::yield_now().await;
                    }
                }
            });
            // The signal goes out only once the server has run: sent at
            // once, it could be pending before the first poll of `recv`,
            // which would then complete before the loop ever ran the
            // server (it did, twice, on a loaded machine).
            while rounds.load(Ordering::Relaxed) == 0 {
                ioloop::yield_now().await;
            }
            let sender = std::thread::spawn(|| signal_raise::kill_self(libc::SIGTERM));
            term.recv().await?;
            sender.join().expect("the sending thread panicked")?;

            server.abort();
            let stopped = server.await.unwrap_err();
            assert!(stopped.is_cancelled(), "{stopped}");
            assert!(rounds.load(Ordering::Relaxed) > 0, "the server never ran");
            Ok(())
        })
    })
}
