//! `StreamWriter` against peers that will not read: the writer's memory
//! stays at its high-water mark, the loop sleeps while it waits, a reset
//! ends the wait with an error at once, and a peer that half-closes with
//! our output pending still gets all of it once it reads.
//!
//! The loop's CPU is read from its own thread's clock (`ThreadClock`), so
//! other tests running meanwhile do not count; the loop's tick counter
//! shows a spin even more plainly. The tests run one at a time, like every
//! test of this binary (main.rs), so the resident-memory figures are this
//! test's.

use std::io::{self, Read};
use std::net::{Shutdown, TcpListener as StdTcpListener, TcpStream as StdTcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use futures_util::AsyncReadExt;
use ioloop::io::StreamWriter;
use ioloop::net::TcpStream;
use ioloop::time::{sleep, timeout};
use ioloop::{Handle, Runtime};
use stress_proc::{ThreadClock, mib};
use testkit::{stress_proc, util};

const SAFETY: Duration = Duration::from_secs(60);
const CHUNK: usize = 64 * 1024;
/// How long the loop is watched while it should be asleep.
const WATCH: Duration = Duration::from_millis(500);
/// CPU the loop may use in `WATCH` while it waits: a spin would use all of
/// it; a sleeping loop uses microseconds.
const CPU_BOUND: Duration = Duration::from_millis(50);
/// Ticks it may run in `WATCH`: a spin runs thousands.
const TICK_BOUND: u64 = 20;

/// A connected pair: ours on the runtime running on this thread, the
/// peer a plain blocking socket.
async fn pair() -> io::Result<(TcpStream, StdTcpStream)> {
    let listener = StdTcpListener::bind("127.0.0.1:0")?;
    let ours = TcpStream::connect(listener.local_addr()?).await?;
    let (peer, _) = listener.accept()?;
    Ok((ours, peer))
}

/// What the loop thread did over `WATCH`: CPU time and ticks.
async fn watch_loop(clock: ThreadClock) -> (Duration, u64) {
    let (cpu, ticks) = (clock.cpu_time(), Handle::current().metrics().ticks);
    sleep(WATCH).await;
    (
        clock.cpu_time() - cpu,
        Handle::current().metrics().ticks - ticks,
    )
}

/// Waits until `progress` has stopped moving for 200 ms: the writer is
/// parked.
async fn until_stalled(progress: &AtomicU64) {
    let mut last = progress.load(Ordering::SeqCst);
    let mut still = 0;
    while still < 20 {
        sleep(Duration::from_millis(10)).await;
        let now = progress.load(Ordering::SeqCst);
        if now == last {
            still += 1;
        } else {
            (last, still) = (now, 0);
        }
    }
}

#[test]
fn sixty_four_mib_to_a_peer_that_never_reads_then_a_reset_ends_drain_at_once() -> io::Result<()> {
    const TOTAL: usize = 64 * 1024 * 1024;
    const HIGH: usize = 1024 * 1024;
    const LOW: usize = 256 * 1024;
    let _one = crate::one_at_a_time();
    util::within(SAFETY * 2, || {
        let rt = Runtime::new()?;
        rt.block_on(async {
            let clock = ThreadClock::current();
            let rss_before = stress_proc::rss_of(std::process::id())?;
            let (ours, peer) = pair().await?;
            let handed = Arc::new(AtomicU64::new(0));
            let buffered = Arc::new(AtomicUsize::new(0));
            let writer = {
                let (handed, buffered) = (handed.clone(), buffered.clone());
                ioloop::spawn(async move {
                    let mut writer = StreamWriter::new(&ours);
                    writer.set_write_buffer_limits(HIGH, LOW);
                    let chunk = vec![0xC3; CHUNK];
                    for _ in 0..TOTAL / CHUNK {
                        writer.write(&chunk);
                        handed.fetch_add(CHUNK as u64, Ordering::SeqCst);
                        buffered.store(writer.buffered(), Ordering::SeqCst);
                        writer.drain().await?;
                    }
                    io::Result::Ok(())
                })
            };
            until_stalled(&handed).await;
            assert!(!writer.is_finished(), "all 64 MiB went into a peer that never reads");
            // Drain stopped above the high-water mark, holding at most one
            // write more than it.
            let held = buffered.load(Ordering::SeqCst);
            assert!(held > HIGH && held <= HIGH + CHUNK, "buffered {held}");
            let rss_stalled = stress_proc::rss_of(std::process::id())?;
            let (cpu, ticks) = watch_loop(clock).await;
            assert!(cpu < CPU_BOUND, "the loop used {cpu:?} of CPU in {WATCH:?} while blocked");
            assert!(ticks < TICK_BOUND, "{ticks} ticks in {WATCH:?} while blocked");

            // The peer resets: drain fails, at once.
            socket2::SockRef::from(&peer).set_linger(Some(Duration::ZERO))?;
            let reset = Instant::now();
            drop(peer);
            let err = timeout(SAFETY, writer)
                .await?
                .expect("the writer panicked")
                .expect_err("drain succeeded after a reset");
            let failed_after = reset.elapsed();
            assert!(
                matches!(err.kind(), io::ErrorKind::ConnectionReset | io::ErrorKind::BrokenPipe),
                "{err}"
            );
            // And nothing spins afterwards.
            let (cpu_after, ticks_after) = watch_loop(clock).await;
            assert!(cpu_after < CPU_BOUND, "{cpu_after:?} of CPU after the reset");
            assert!(ticks_after < TICK_BOUND, "{ticks_after} ticks after the reset");
            println!(
                "64 MiB to a non-reader: stalled with {} handed over and {} buffered (high-water \
                 mark {}); RSS {} -> {}; blocked loop used {cpu:?} CPU / {ticks} ticks in {WATCH:?}; \
                 reset -> {err} after {failed_after:?}; then {cpu_after:?} CPU / {ticks_after} ticks",
                mib(handed.load(Ordering::SeqCst)),
                mib(held as u64),
                mib(HIGH as u64),
                mib(rss_before),
                mib(rss_stalled),
            );
            // Near the high-water mark, not near 64 MiB.
            assert!(
                rss_stalled < rss_before + 16 * 1024 * 1024,
                "RSS grew from {} to {}",
                mib(rss_before),
                mib(rss_stalled)
            );
            assert!(failed_after < Duration::from_secs(1), "drain failed {failed_after:?} after the reset");
            io::Result::Ok(())
        })
    })
}

#[test]
fn a_fin_with_four_mib_of_our_output_unread_then_the_peer_reads_it_all() -> io::Result<()> {
    const TOTAL: usize = 4 * 1024 * 1024;
    let _one = crate::one_at_a_time();
    util::within(SAFETY * 2, || {
        let rt = Runtime::new()?;
        rt.block_on(async {
            let clock = ThreadClock::current();
            let (ours, mut peer) = pair().await?;
            // Small kernel buffers: most of the 4 MiB waits in our writer.
            socket2::SockRef::from(&ours).set_send_buffer_size(64 * 1024)?;
            socket2::SockRef::from(&peer).set_recv_buffer_size(64 * 1024)?;
            let ours = Arc::new(ours);
            let pattern: Arc<Vec<u8>> = Arc::new((0..TOTAL).map(|i| (i % 251) as u8).collect());
            let sent = Arc::new(AtomicU64::new(0));
            let writer = {
                let (ours, pattern, sent) = (ours.clone(), pattern.clone(), sent.clone());
                ioloop::spawn(async move {
                    let mut writer = StreamWriter::new(&*ours);
                    writer.write(&pattern);
                    sent.store((TOTAL - writer.buffered()) as u64, Ordering::SeqCst);
                    // Drains everything (the default limits), then closes.
                    writer.close().await
                })
            };
            // A reader on our side, to see the FIN come in.
            let reader = {
                let ours = ours.clone();
                ioloop::spawn(async move {
                    let mut buf = [0; 16];
                    (&*ours).read(&mut buf).await
                })
            };
            sleep(Duration::from_millis(100)).await;
            assert!(!writer.is_finished(), "4 MiB fit in the kernel buffers");
            let pending = TOTAL as u64 - sent.load(Ordering::SeqCst);

            // The peer sends FIN, reading nothing.
            peer.shutdown(Shutdown::Write)?;
            let eof = timeout(SAFETY, reader)
                .await?
                .expect("the reader panicked")?;
            assert_eq!(eof, 0, "our reader did not see the FIN");
            // Our side is now read-closed for good, with the write still
            // blocked: nothing may spin on that.
            let (cpu, ticks) = watch_loop(clock).await;
            assert!(
                !writer.is_finished(),
                "the write finished with the peer not reading"
            );
            assert!(
                cpu < CPU_BOUND,
                "the loop used {cpu:?} of CPU in {WATCH:?} while blocked"
            );
            assert!(
                ticks < TICK_BOUND,
                "{ticks} ticks in {WATCH:?} while blocked"
            );

            // Now the peer reads: every byte arrives, in order, then EOF.
            let peer_reads = std::thread::spawn(move || {
                peer.set_read_timeout(Some(SAFETY))?;
                let mut got = Vec::with_capacity(TOTAL);
                peer.read_to_end(&mut got)?;
                io::Result::Ok(got)
            });
            timeout(SAFETY, writer)
                .await?
                .expect("the writer panicked")?;
            let got = peer_reads.join().expect("the peer panicked")?;
            assert_eq!(got.len(), TOTAL);
            assert!(got == *pattern, "the bytes arrived altered");
            println!(
                "FIN with {} of our output pending: the blocked loop used {cpu:?} CPU / {ticks} \
                 ticks in {WATCH:?}; then all {} delivered",
                mib(pending),
                mib(TOTAL as u64)
            );
            io::Result::Ok(())
        })
    })
}
