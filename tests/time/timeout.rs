//! `timeout` and `timeout_at`: the inner future finishing first wins, the
//! deadline passing first gives `Elapsed`, which is an `io::Error` of kind
//! `TimedOut`.

use std::future::{Future, pending, ready};
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use ioloop::time::Instant;

use ioloop::time::{Elapsed, sleep, timeout, timeout_at};
use ioloop::{Handle, yield_now};
use testkit::{time_poll, util};
use time_poll::poll_once;

/// Safety net for waits that should end long before it; never a measure.
/// The tests on a paused clock (`start_paused`) check deadlines exactly;
/// those whose inner future is always busy stay on the real clock: a ready
/// task holds a paused clock still, so their deadline would never come.
const SAFETY: Duration = Duration::from_secs(10);

/// Armed timers as of the last completed tick.
async fn live_timers() -> u64 {
    yield_now().await;
    Handle::current().metrics().live_timers
}

/// A future that never finishes and records when it is dropped.
struct Pending(Arc<AtomicBool>);

impl Future for Pending {
    type Output = ();
    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
        Poll::Pending
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

#[ioloop::test(start_paused = true)]
async fn the_inner_future_finishing_first_wins() -> io::Result<()> {
    let started = Instant::now();
    let out = timeout(SAFETY, async {
        sleep(Duration::from_millis(10)).await;
        "done"
    })
    .await;
    assert_eq!(out, Ok("done"));
    assert_eq!(started.elapsed(), Duration::from_millis(10));
    // The deadline's timer went with the `Timeout`.
    assert_eq!(live_timers().await, 0);
    Ok(())
}

#[ioloop::test(start_paused = true)]
async fn the_deadline_passing_first_gives_elapsed_and_drops_the_future() -> io::Result<()> {
    let dropped = Arc::new(AtomicBool::new(false));
    let deadline = Instant::now() + Duration::from_millis(20);
    // The safety net is the outer timeout; the inner one is under test.
    let out = timeout(SAFETY, timeout_at(deadline, Pending(dropped.clone()))).await?;
    let _: Elapsed = out.expect_err("a pending future beat its deadline");
    assert_eq!(
        Instant::now(),
        deadline,
        "the timeout fired off its deadline"
    );
    assert!(dropped.load(Ordering::SeqCst), "the inner future was kept");
    assert_eq!(live_timers().await, 0);
    Ok(())
}

#[ioloop::test(start_paused = true)]
async fn the_deadline_passing_first_with_a_duration() -> io::Result<()> {
    let started = Instant::now();
    let out = timeout(SAFETY, timeout(Duration::from_millis(15), pending::<()>())).await?;
    assert!(out.is_err());
    assert_eq!(started.elapsed(), Duration::from_millis(15));
    Ok(())
}

#[ioloop::test(start_paused = true)]
async fn elapsed_converts_to_timed_out_and_works_with_question_mark() -> io::Result<()> {
    fn as_io(r: Result<(), Elapsed>) -> io::Result<()> {
        r?;
        Ok(())
    }
    let err = timeout(Duration::from_millis(1), pending::<()>())
        .await
        .unwrap_err();
    assert_eq!(err.to_string(), "deadline has elapsed");
    let io: io::Error = err.into();
    assert_eq!(io.kind(), io::ErrorKind::TimedOut);
    assert_eq!(as_io(Err(err)).unwrap_err().kind(), io::ErrorKind::TimedOut);
    // And it is a real `std::error::Error`, reachable through the io one.
    let inner = io.get_ref().expect("the Elapsed is kept as the source");
    assert!(inner.is::<Elapsed>());
    Ok(())
}

#[ioloop::test]
async fn a_zero_duration_with_a_ready_future_is_ok() -> io::Result<()> {
    assert_eq!(timeout(Duration::ZERO, ready(5)).await, Ok(5));
    assert_eq!(timeout_at(Instant::now(), async { 6 }).await, Ok(6));
    // A deadline long past: the future is still polled first.
    let past = Instant::now() - Duration::from_millis(1);
    let mut t = timeout_at(past, ready(7));
    assert_eq!(poll_once(&mut t), Poll::Ready(Ok(7)));
    Ok(())
}

#[ioloop::test]
async fn a_zero_duration_with_a_pending_future_elapses_on_the_first_poll() -> io::Result<()> {
    let mut t = timeout(Duration::ZERO, pending::<()>());
    assert!(matches!(poll_once(&mut t), Poll::Ready(Err(_))));
    assert_eq!(live_timers().await, 0);
    Ok(())
}

#[ioloop::test]
async fn into_inner_gives_the_future_back_unharmed() -> io::Result<()> {
    let t = timeout(Duration::from_secs(3600), async { 9 });
    assert_eq!(t.into_inner().await, 9);
    Ok(())
}

/// Wraps a future and notes when each of its polls began.
struct PollTimes<F> {
    inner: Pin<Box<F>>,
    started: Vec<Instant>,
}

impl<F: Future> Future for PollTimes<F> {
    type Output = F::Output;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        self.started.push(Instant::now());
        self.inner.as_mut().poll(cx)
    }
}

/// Runs `future` under a `timeout` of `limit` on a fresh runtime, on a
/// watched thread (a `timeout` cannot be the safety net of a test about
/// `timeout`), and checks that it elapsed at the first poll past the
/// deadline: the inner future is polled once at most after it.
fn assert_elapses_promptly<F>(limit: Duration, future: F)
where
    F: Future + Send + 'static,
{
    let late_polls = util::within(SAFETY, move || {
        ioloop::block_on(async move {
            let deadline = Instant::now() + limit;
            let mut timed = timeout_at(
                deadline,
                PollTimes {
                    inner: Box::pin(future),
                    started: Vec::new(),
                },
            );
            let out = (&mut timed).await;
            assert!(out.is_err(), "the inner future finished");
            let started = &timed.get_ref().started;
            started.iter().filter(|&&at| at >= deadline).count()
        })
    });
    assert!(late_polls <= 1, "{late_polls} polls after the deadline");
}

/// Item 1 of the correctness issue: the inner future spent the budget on
/// every poll, then the elapsed sleep asked for budget too, and never got
/// it: this hung forever.
#[test]
fn timeout_elapses_when_the_inner_future_spends_the_whole_budget() {
    assert_elapses_promptly(Duration::from_millis(10), async {
        loop {
            ioloop::task::consume_budget().await;
        }
    });
}

#[test]
fn timeout_elapses_around_a_copy_from_a_reader_that_is_always_ready() {
    assert_elapses_promptly(Duration::from_millis(10), async {
        let mut reader = ioloop::io::StreamReader::new(futures_util::io::repeat(b'x'));
        futures_util::io::copy(&mut reader, &mut futures_util::io::sink()).await
    });
}

/// A peer floods a socket: the reader always has data, yet its timeout
/// fires at the first poll past the deadline.
#[test]
fn timeout_elapses_around_a_read_loop_on_a_flooded_socket() -> io::Result<()> {
    use futures_util::AsyncReadExt;
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    let addr = listener.local_addr()?;
    let flooder = std::thread::spawn(move || {
        use std::io::Write;
        let (mut peer, _) = listener.accept().expect("accept");
        let chunk = [b'y'; 64 * 1024];
        // Until the reader hangs up.
        while peer.write_all(&chunk).is_ok() {}
    });
    assert_elapses_promptly(Duration::from_millis(100), async move {
        let mut stream = ioloop::net::TcpStream::connect(addr).await?;
        let mut buf = vec![0u8; 16 * 1024];
        loop {
            if stream.read(&mut buf).await? == 0 {
                return Ok::<_, io::Error>(());
            }
        }
    });
    flooder.join().expect("flooder");
    Ok(())
}
