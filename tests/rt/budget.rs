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
