//! Runtimes and their guards, made and dropped over and over.

use std::io;

use testkit::account::{self, Held};

/// 1,000 runtimes, each with a task and a blocking job, built and dropped:
/// no thread, descriptor or heap byte is left behind.
#[test]
fn runtimes_built_and_dropped_leave_nothing() -> io::Result<()> {
    let _serial = account::serial();
    let one = || -> io::Result<()> {
        let rt = ioloop::Runtime::new()?;
        let n = rt.block_on(async {
            let task = ioloop::spawn(async { 1 });
            let job = ioloop::spawn_blocking(|| 2);
            task.await.unwrap() + job.await.unwrap()
        });
        assert_eq!(n, 3);
        Ok(())
    };
    // Warm: the first runtime sets up what lives for the process (the
    // logger, thread-locals of this thread).
    for _ in 0..10 {
        one()?;
    }
    let before = Held::now();
    for _ in 0..1_000 {
        one()?;
    }
    // A blocking thread exits on its own after the runtime drops; give the
    // last ones a moment (a safety net, not what is measured).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while account::runtime_threads() > before.threads && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    before.assert_back("1,000 runtimes", 16 * 1024);
    Ok(())
}
