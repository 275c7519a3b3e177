//! An idle runtime sleeps in the poller and burns no CPU.
//!
//! One test in this file on purpose: it measures the whole process's CPU
//! time, which other tests running in parallel would pollute.

use std::time::Duration;
use testkit::util;

#[test]
fn an_idle_second_costs_under_50ms_of_cpu() -> std::io::Result<()> {
    let rt = ioloop::Runtime::new()?;
    let before = util::process_cpu_time();
    rt.block_on(async {
        // Things that must not make the loop spin: a registered socket with
        // nothing to read, and a timer an hour away.
        let (a, _b) = mio::net::UnixStream::pair()?;
        let _a = ioloop::io::Registration::new(a)?;
        let _far = ioloop::spawn(ioloop::time::sleep(Duration::from_secs(3600)));
        ioloop::time::sleep(Duration::from_secs(1)).await;
        Ok::<_, std::io::Error>(())
    })?;
    let used = util::process_cpu_time() - before;
    let ticks = rt.handle().metrics().ticks;
    assert!(
        used < Duration::from_millis(50),
        "used {used:?} in {ticks} ticks"
    );
    // A spinning loop would tick thousands of times; a sleeping one a few.
    assert!(ticks < 20, "{ticks} ticks");
    Ok(())
}
