//! Fairness at the edges of the scheduler: tasks that never stop asking
//! for the loop (a tight loop of `yield_now`, of `sleep(Duration::ZERO)`,
//! a task draining a source that is always ready) must not delay socket
//! echoes or a 10 ms timer beyond a few tens of milliseconds.
//!
//! `yield_now` sends its task behind the next poll of the OS, and every
//! readiness check on a registration, every poll of a `Sleep` and every
//! record `StreamReader` hands out spends one unit of a cooperative budget
//! (128 per poll), after which the task is made to yield. (`sleep(ZERO)` and
//! an in-memory reader spent none at first, and starved the loop; these
//! tests found that.)
//!
//! The bounds are generous (a noisy, loaded CI machine), and never what is
//! measured: a starved echo or timer waits forever, here seconds.

use std::future::Future;
use std::io::{self, Read, Write};
use std::net::{TcpListener as StdTcpListener, TcpStream as StdTcpStream};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use ioloop::time::Instant;

use futures_util::{AsyncReadExt, AsyncWriteExt};
use ioloop::io::StreamReader;
use ioloop::net::{TcpListener, TcpStream};
use ioloop::time::sleep;
use ioloop::yield_now;
use testkit::{stress_proc, util};

/// The worst echo round trip allowed beside the spinning tasks.
const ECHO_BOUND: Duration = Duration::from_millis(250);
/// How late a 10 ms timer may fire beside a draining task.
const TIMER_BOUND: Duration = Duration::from_millis(100);
/// How long a spinning task spins before it gives up on its own: the test
/// fails, but the loop (and the process) is not stuck forever.
const GIVE_UP: Duration = Duration::from_secs(3);

/// Runs an echo server beside `SPINNERS` tasks each running `spin` in a
/// tight loop, and returns the worst round trip of a client on another
/// thread, or `None` if an echo never came back within a second.
fn worst_echo_beside<F, S>(spin: S) -> io::Result<Option<Duration>>
where
    S: Fn() -> F + Send + Clone + 'static,
    F: Future<Output = ()> + Send + 'static,
{
    const SPINNERS: usize = 4;
    util::within(Duration::from_secs(60), move || {
        let std_listener = StdTcpListener::bind("127.0.0.1:0")?;
        let addr = std_listener.local_addr()?;
        let stop = Arc::new(AtomicBool::new(false));
        let client = {
            let stop = stop.clone();
            std::thread::spawn(move || -> io::Result<Option<Duration>> {
                let mut client = StdTcpStream::connect(addr)?;
                client.set_nodelay(true)?;
                client.set_read_timeout(Some(Duration::from_secs(1)))?;
                let mut worst = Duration::ZERO;
                for i in 0..100u32 {
                    let sent = Instant::now();
                    client.write_all(&i.to_le_bytes())?;
                    let mut buf = [0; 4];
                    if client.read_exact(&mut buf).is_err() {
                        stop.store(true, Ordering::SeqCst);
                        return Ok(None);
                    }
                    assert_eq!(buf, i.to_le_bytes());
                    worst = worst.max(sent.elapsed());
                    std::thread::sleep(Duration::from_millis(2));
                }
                stop.store(true, Ordering::SeqCst);
                Ok(Some(worst))
            })
        };
        ioloop::block_on(async move {
            let listener = TcpListener::from_std(std_listener)?;
            let spinners: Vec<_> = (0..SPINNERS)
                .map(|_| {
                    let (stop, spin) = (stop.clone(), spin.clone());
                    ioloop::spawn(async move {
                        let since = Instant::now();
                        while !stop.load(Ordering::SeqCst) && since.elapsed() < GIVE_UP {
                            spin().await;
                        }
                    })
                })
                .collect();
            let (mut stream, _) = listener.accept().await?;
            let mut buf = [0; 4];
            while stream.read_exact(&mut buf).await.is_ok() {
                stream.write_all(&buf).await?;
            }
            for spinner in spinners {
                spinner.await.expect("a spinner panicked");
            }
            io::Result::Ok(())
        })?;
        client.join().expect("the client panicked")
    })
}

#[test]
fn yield_now_in_tight_loops_keeps_echo_latency_bounded() -> io::Result<()> {
    let worst = worst_echo_beside(yield_now)?;
    println!("worst echo beside four yield_now loops: {worst:?}");
    let worst = worst.expect("an echo never came back: the yielding tasks starved the socket");
    assert!(worst < ECHO_BOUND, "worst echo {worst:?}");
    Ok(())
}

#[test]
fn sleep_zero_in_tight_loops_keeps_echo_latency_bounded() -> io::Result<()> {
    let worst = worst_echo_beside(|| sleep(Duration::ZERO))?;
    println!("worst echo beside four sleep(ZERO) loops: {worst:?}");
    let worst = worst.expect("an echo never came back: the sleep(ZERO) loops starved the socket");
    assert!(worst < ECHO_BOUND, "worst echo {worst:?}");
    Ok(())
}

/// A task sleeping 10 ms, its timer armed: says how late it fired.
struct Timer {
    /// How late it fired, in nanoseconds plus one; 0 until it has.
    fired: Arc<AtomicU64>,
    armed: Instant,
}

impl Timer {
    async fn arm() -> Timer {
        let fired = Arc::new(AtomicU64::new(0));
        let f = fired.clone();
        let armed = Instant::now();
        let deadline = armed + Duration::from_millis(10);
        drop(ioloop::spawn(async move {
            ioloop::time::sleep_until(deadline).await;
            let late = Instant::now() - deadline;
            f.store(late.as_nanos() as u64 + 1, Ordering::SeqCst);
        }));
        // Let the task arm its timer before anything else runs.
        yield_now().await;
        Timer { fired, armed }
    }

    fn late(&self) -> Option<Duration> {
        match self.fired.load(Ordering::SeqCst) {
            0 => None,
            n => Some(Duration::from_nanos(n - 1)),
        }
    }

    /// Not fired yet, and not given up on.
    fn waiting(&self) -> bool {
        self.late().is_none() && self.armed.elapsed() < GIVE_UP
    }
}

#[test]
fn a_task_draining_an_always_ready_socket_lets_a_10ms_timer_fire_on_time() -> io::Result<()> {
    util::within(Duration::from_secs(60), || {
        let std_listener = StdTcpListener::bind("127.0.0.1:0")?;
        let mut feeder = StdTcpStream::connect(std_listener.local_addr()?)?;
        let (ours, _) = std_listener.accept()?;
        // The feeder writes until told to stop; the socket is full long
        // before the draining starts, and refilled faster than 16-byte
        // reads can empty it.
        let stop = Arc::new(AtomicBool::new(false));
        let fed = Arc::new(AtomicU64::new(0));
        let feeding = {
            let (stop, fed) = (stop.clone(), fed.clone());
            std::thread::spawn(move || {
                let chunk = vec![0x5A; 64 * 1024];
                while !stop.load(Ordering::SeqCst) {
                    match feeder.write(&chunk) {
                        Ok(n) => fed.fetch_add(n as u64, Ordering::SeqCst),
                        Err(_) => return,
                    };
                }
            })
        };
        while fed.load(Ordering::SeqCst) < 1024 * 1024 {
            std::thread::sleep(Duration::from_millis(1));
        }
        let queued = fed.load(Ordering::SeqCst);
        let (late, drains) = ioloop::block_on(async {
            let ours = TcpStream::from_std(ours)?;
            let mut buf = [0; 16];
            let timer = Timer::arm().await;
            let mut drains = 0u64;
            while timer.waiting() {
                let n = (&ours).read(&mut buf).await?;
                assert_eq!(n, 16, "the socket ran dry: not an always-ready source");
                drains += 1;
            }
            io::Result::Ok((timer.late(), drains))
        })?;
        stop.store(true, Ordering::SeqCst);
        feeding.join().expect("the feeder panicked");
        println!(
            "10 ms timer beside a task reading 16-byte chunks from a socket with {} queued: \
             fired {late:?} late, after {drains} reads ({} bytes)",
            stress_proc::mib(queued),
            16 * drains
        );
        let late = late.expect("the timer never fired: the draining task starved it");
        assert!(late < TIMER_BOUND, "fired {late:?} late");
        assert!(drains > 128, "{drains} reads: the budget ran out early");
        io::Result::Ok(())
    })
}

/// Always has another line.
struct Endless;

impl futures_util::AsyncRead for Endless {
    fn poll_read(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        for (i, b) in buf.iter_mut().enumerate() {
            *b = if i % 16 == 15 { b'\n' } else { b'x' };
        }
        Poll::Ready(Ok(buf.len()))
    }
}

#[test]
fn a_task_draining_an_always_ready_in_memory_reader_lets_a_10ms_timer_fire_on_time() {
    let (late, drains) = util::within(Duration::from_secs(60), || {
        ioloop::block_on(async {
            let mut reader = StreamReader::new(Endless);
            let timer = Timer::arm().await;
            let mut drains = 0u64;
            while timer.waiting() {
                let line = reader.read_line().await.expect("read_line");
                assert_eq!(line.map(<[u8]>::len), Some(15));
                drains += 1;
            }
            (timer.late(), drains)
        })
    });
    println!(
        "10 ms timer beside read_line over an in-memory reader: fired {late:?} late, after {drains} lines"
    );
    let late = late.expect("the timer never fired: the draining task starved it");
    assert!(late < TIMER_BOUND, "fired {late:?} late");
}
