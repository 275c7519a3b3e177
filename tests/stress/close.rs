//! Closing under waiters, at scale: a stream shut down while other tasks
//! are parked reading and writing it wakes them with end of file and an
//! error, never a hang; and a descriptor number reused at once by a new
//! socket (and its reactor slot with it) never receives a wake-up meant
//! for the old one.
//!
//! In safe Rust a stream cannot be closed while another task borrows it;
//! `shutdown(Both)` is the close that can happen under a parked task, so
//! that is what the first test does. The second closes sources outright
//! (dropping their registrations) with events for them on the way.
//!
//! The tests run one at a time, like every test of this binary (main.rs):
//! the second counts on descriptor numbers being reused, which another
//! test opening sockets in parallel would disturb.

use std::fmt;
use std::future::{Future, poll_fn};
use std::io::{self, Read, Write};
use std::net::Shutdown;
use std::os::fd::AsRawFd;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use futures_util::{AsyncReadExt, AsyncWriteExt};
use ioloop::io::Registration;
use ioloop::net::{TcpListener, TcpStream};
use ioloop::time::timeout;
use ioloop::{Handle, yield_now};
use mio::event::Source;
use mio::net::UnixStream;
use testkit::util;
use util::CountingWaker;

const SAFETY: Duration = Duration::from_secs(60);
/// Streams shut down at once, each under a parked reader and writer.
const STREAMS: usize = 200;
/// Close-and-reuse rounds.
const ROUNDS: usize = 2_000;

/// Sets a flag the first time the inner future returns `Pending`: "this
/// task is parked", announced from inside the poll that parked it.
struct Announce<F> {
    inner: F,
    parked: Arc<AtomicBool>,
}

impl<F: Future + Unpin> Future for Announce<F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let poll = Pin::new(&mut self.inner).poll(cx);
        if poll.is_pending() {
            self.parked.store(true, Ordering::SeqCst);
        }
        poll
    }
}

#[test]
fn shutting_down_streams_under_parked_readers_and_writers_wakes_them_all() -> io::Result<()> {
    let _one = crate::one_at_a_time();
    if !util::fd_limit_at_least(2 * STREAMS as u64 + 256) {
        println!(
            "skipped: RLIMIT_NOFILE cannot be raised to {}",
            2 * STREAMS + 256
        );
        return Ok(());
    }
    util::within(SAFETY * 2, || {
        ioloop::block_on(async {
            let listener = TcpListener::bind("127.0.0.1:0").await?;
            let addr = listener.local_addr()?;
            let mut pairs = Vec::new();
            for _ in 0..STREAMS {
                let ours = TcpStream::connect(addr).await?;
                let (theirs, _) = listener.accept().await?;
                // Small buffers, so a writer parks after a few KiB rather
                // than megabytes per connection.
                socket2::SockRef::from(&ours).set_send_buffer_size(16 * 1024)?;
                socket2::SockRef::from(&theirs).set_recv_buffer_size(16 * 1024)?;
                pairs.push((Arc::new(ours), theirs));
            }
            let sources = Handle::current().metrics().io_sources;

            let mut waiters = Vec::new();
            for (ours, _) in &pairs {
                let (reader_parked, writer_parked) = Default::default();
                let s = ours.clone();
                let reader = ioloop::spawn(Announce {
                    parked: Arc::clone(&reader_parked),
                    inner: Box::pin(async move {
                        let mut buf = [0; 64];
                        (&*s).read(&mut buf).await
                    }),
                });
                let s = ours.clone();
                let writer = ioloop::spawn(Announce {
                    parked: Arc::clone(&writer_parked),
                    inner: Box::pin(async move {
                        let chunk = vec![7u8; 64 * 1024];
                        loop {
                            (&*s).write_all(&chunk).await?;
                        }
                        #[allow(unreachable_code)]
                        io::Result::Ok(())
                    }),
                });
                waiters.push((reader, writer, reader_parked, writer_parked));
            }
            // Every reader and writer parked on its stream...
            timeout(SAFETY, async {
                while !waiters
                    .iter()
                    .all(|(_, _, r, w)| r.load(Ordering::SeqCst) && w.load(Ordering::SeqCst))
                {
                    yield_now().await;
                }
            })
            .await?;
            // ...then every stream shut down under them, at once.
            let closed = Instant::now();
            for (ours, _) in &pairs {
                ours.shutdown(Shutdown::Both)?;
            }
            for (i, (reader, writer, _, _)) in waiters.into_iter().enumerate() {
                let read = timeout(SAFETY, reader).await?.expect("a reader panicked");
                assert_eq!(
                    read?, 0,
                    "stream {i}: the parked reader did not get end of file"
                );
                let written = timeout(SAFETY, writer).await?.expect("a writer panicked");
                let err = written.expect_err("a write after shutdown succeeded");
                assert_eq!(err.kind(), io::ErrorKind::BrokenPipe, "stream {i}: {err}");
            }
            let woken_in = closed.elapsed();
            // The far ends see end of file after the bytes that got through.
            for (i, (_, theirs)) in pairs.iter_mut().enumerate() {
                let mut rest = Vec::new();
                timeout(SAFETY, theirs.read_to_end(&mut rest)).await??;
                assert!(rest.iter().all(|&b| b == 7), "stream {i}");
            }
            drop(pairs);
            assert_eq!(
                Handle::current().metrics().io_sources,
                sources - 2 * STREAMS as u64
            );
            println!(
                "{STREAMS} streams shut down; all {} waiters woken in {woken_in:?}",
                2 * STREAMS
            );
            io::Result::Ok(())
        })
    })
}

/// Spends a new registration's optimistic readiness, then parks `waker`
/// on its read side.
fn park_reader(reg: &Registration<UnixStream>, waker: &Waker) -> io::Result<()> {
    let mut cx = Context::from_waker(waker);
    let mut buf = [0; 64];
    match reg.poll_read_io(&mut cx, |mut s| s.read(&mut buf)) {
        Poll::Pending => Ok(()),
        Poll::Ready(r) => Err(io::Error::other(format!("expected an empty socket: {r:?}"))),
    }
}

/// The reactor slot of a registration, from its `Debug` output (the token
/// is not public; this only proves the slot really was reused).
fn slot_of<S: Source + fmt::Debug>(reg: &Registration<S>) -> usize {
    let dbg = format!("{reg:?}");
    let start = dbg.find("Token(").expect("Debug shows the token") + 6;
    let len = dbg[start..].find(')').expect("closing parenthesis");
    let token: usize = dbg[start..start + len].parse().expect("a number");
    token & ((1 << (usize::BITS / 2)) - 1)
}

#[test]
fn a_reused_fd_and_slot_never_receive_the_closed_sources_wakeups() -> io::Result<()> {
    let _one = crate::one_at_a_time();
    util::within(SAFETY * 2, || {
        ioloop::block_on(async {
            // Load: pairs of tasks playing ping-pong over socket pairs on
            // the same loop throughout, each waiting for the other's
            // message through the poller, so poll batches carry their
            // events too.
            let pings = Arc::new(AtomicUsize::new(0));
            for _ in 0..4 {
                let (a, b) = UnixStream::pair()?;
                let (a, b) = (Registration::new(a)?, Registration::new(b)?);
                for (reg, serve) in [(a, true), (b, false)] {
                    let pings = pings.clone();
                    drop(ioloop::spawn(async move {
                        let mut buf = [0; 4];
                        if serve {
                            poll_fn(|cx| reg.poll_write_io(cx, |mut s| s.write(b"ping"))).await?;
                        }
                        loop {
                            poll_fn(|cx| reg.poll_read_io(cx, |mut s| s.read(&mut buf))).await?;
                            poll_fn(|cx| reg.poll_write_io(cx, |mut s| s.write(b"ping"))).await?;
                            pings.fetch_add(1, Ordering::Relaxed);
                        }
                        #[allow(unreachable_code)]
                        io::Result::Ok(())
                    }));
                }
            }
            let before = Handle::current().metrics();
            let (mut fd_reused, mut slot_reused) = (0, 0);
            for round in 0..ROUNDS {
                let (old, mut old_peer) = UnixStream::pair()?;
                let old_fd = old.as_raw_fd();
                let old = Registration::new(old)?;
                let old_slot = slot_of(&old);
                let old_wakes = Arc::new(CountingWaker::default());
                park_reader(&old, &Waker::from(old_wakes.clone()))?;
                // An event for the old source is on its way...
                old_peer.write_all(b"old")?;
                // ...when it is closed, before the loop has polled.
                drop(old);

                let (new, mut new_peer) = UnixStream::pair()?;
                fd_reused += usize::from(new.as_raw_fd() == old_fd);
                let new = Registration::new(new)?;
                slot_reused += usize::from(slot_of(&new) == old_slot);
                let new_wakes = Arc::new(CountingWaker::default());
                park_reader(&new, &Waker::from(new_wakes.clone()))?;
                // More from the old peer, and its hang-up, after the reuse.
                let _ = old_peer.write(b"more");
                drop(old_peer);
                yield_now().await;
                yield_now().await;
                assert_eq!(old_wakes.wakes.load(Ordering::SeqCst), 0, "round {round}");
                assert_eq!(new_wakes.wakes.load(Ordering::SeqCst), 0, "round {round}");

                // The new source's own event does reach it.
                new_peer.write_all(b"new")?;
                let mut yields = 0;
                while new_wakes.wakes.load(Ordering::SeqCst) == 0 {
                    yields += 1;
                    assert!(
                        yields < 100_000,
                        "round {round}: the new source was never woken"
                    );
                    yield_now().await;
                }
                assert_eq!(new_wakes.wakes.load(Ordering::SeqCst), 1, "round {round}");
                let mut buf = [0; 16];
                let n = poll_fn(|cx| new.poll_read_io(cx, |mut s| s.read(&mut buf))).await?;
                assert_eq!(&buf[..n], b"new", "round {round}");
                assert_eq!(old_wakes.wakes.load(Ordering::SeqCst), 0, "round {round}");
            }
            let after = Handle::current().metrics();
            // Closing deregisters first, so no event for a closed source
            // even reaches the dispatch.
            assert_eq!(after.stale_io_events, before.stale_io_events);
            // The scenario really was a reuse, nearly every round.
            assert!(
                fd_reused > ROUNDS * 9 / 10,
                "fd reused in {fd_reused} of {ROUNDS}"
            );
            assert!(
                slot_reused > ROUNDS * 9 / 10,
                "slot reused in {slot_reused} of {ROUNDS}"
            );
            assert!(pings.load(Ordering::Relaxed) > 0);
            println!(
                "{ROUNDS} rounds: fd reused {fd_reused}, slot reused {slot_reused}, {} pings alongside",
                pings.load(Ordering::Relaxed)
            );
            io::Result::Ok(())
        })
    })
}
