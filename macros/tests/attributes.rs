//! `#[ioloop::main]` and `#[ioloop::test]` as users write them: the body
//! runs on a runtime of its own, keeps the meaning it has in an `async fn`,
//! and the function keeps its other attributes. (What they refuse is in
//! `macros/tests/compile_fail.md`, run as doc tests.)

use std::error::Error;
use std::fmt;
use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use ioloop::Handle;

#[derive(Debug)]
struct Odd(u32);

impl fmt::Display for Odd {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} is odd", self.0)
    }
}

impl Error for Odd {}

/// `#[ioloop::main]` on functions not called `main`, so a test can call
/// them.
#[ioloop::main]
async fn answer() -> u32 {
    ioloop::spawn(async { 6 * 7 }).await.unwrap()
}

/// The returns and `?` rely on the declared return type, as in any `async
/// fn`: the `Box<Odd>` coerces to `Box<dyn Error>`, and a `ParseIntError`
/// or a `JoinError` converts into it.
#[ioloop::main]
async fn sum_of_halves() -> Result<u32, Box<dyn Error>> {
    let mut sum = 0;
    for text in ["84", "10", "7"] {
        let n: u32 = text.parse()?;
        if n % 2 == 1 {
            return Err(Box::new(Odd(n)));
        }
        sum += ioloop::spawn(async move { n / 2 }).await?;
    }
    Ok(sum)
}

#[test]
fn main_runs_the_body_and_keeps_the_declared_return_type() {
    assert_eq!(answer(), 42);
    assert_eq!(sum_of_halves().unwrap_err().to_string(), "7 is odd");
}

#[ioloop::test]
async fn a_test_runs_on_a_runtime_it_can_spawn_on_and_sleep_in() -> io::Result<()> {
    let task = ioloop::spawn(async { 6 * 7 });
    ioloop::time::sleep(Duration::from_millis(1)).await;
    assert_eq!(task.await?, 42);
    Ok(())
}

#[ioloop::test]
#[should_panic(expected = "the body's panic")]
async fn a_panic_in_the_body_fails_the_test_and_should_panic_is_kept() {
    ioloop::yield_now().await;
    panic!("the body's panic");
}

/// The settings reach the runtime's `Builder`: with one blocking thread,
/// blocking jobs run one at a time.
#[ioloop::test(max_blocking_threads = 1, event_interval = 16)]
async fn settings_configure_the_runtime() {
    let running = Arc::new(AtomicUsize::new(0));
    let peak = Arc::new(AtomicUsize::new(0));
    let jobs: Vec<_> = (0..4)
        .map(|_| {
            let (running, peak) = (running.clone(), peak.clone());
            ioloop::spawn_blocking(move || {
                let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                peak.fetch_max(now, Ordering::SeqCst);
                std::thread::sleep(Duration::from_millis(2));
                running.fetch_sub(1, Ordering::SeqCst);
            })
        })
        .collect();
    for job in jobs {
        job.await.unwrap();
    }
    assert_eq!(peak.load(Ordering::SeqCst), 1);
    assert_eq!(Handle::current().metrics().blocking_threads, 1);
}

/// `start_paused = true` reaches the `Builder`: the clock moves only when
/// the runtime has nothing else to do, straight to the next deadline.
#[ioloop::test(start_paused = true, max_blocking_threads = 1)]
async fn start_paused_runs_the_test_on_a_paused_clock() {
    let start = ioloop::time::Instant::now();
    ioloop::time::sleep(Duration::from_secs(3600)).await;
    assert_eq!(start.elapsed(), Duration::from_secs(3600));
    ioloop::time::advance(Duration::from_secs(1)).await;
    assert_eq!(start.elapsed(), Duration::from_secs(3601));
}

/// `start_paused = false` is the default, written out: the real clock.
#[ioloop::test(start_paused = false)]
async fn start_paused_false_keeps_the_real_clock() {
    let before = std::time::Instant::now();
    let now = ioloop::time::Instant::now().into_std();
    assert!(before <= now && now <= std::time::Instant::now());
}
