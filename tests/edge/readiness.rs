//! The reactor through `Registration`: parked readers and writers are woken
//! by real readiness, hang-up wakes both directions, a stale event for a
//! reused slot wakes nobody, `clear_readiness` keeps a newer event, and a
//! registration outliving its runtime fails instead of hanging, and any
//! number of tasks may wait on one source.
//!
//! Every source is one end of a Unix socket pair. The other end is a plain
//! blocking `std` socket, driven from the test thread or a peer thread;
//! "parked" is announced over a channel from inside the poll that returned
//! `Pending`, so the peer acts only once the waker is in place.

use std::cell::Cell;
use std::fmt;
use std::future::poll_fn;
use std::io::{self, Read, Write};
use std::net::Shutdown;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::UnixStream as StdUnixStream;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, mpsc};
use std::task::{Context, Poll, Wake, Waker};
use std::thread;
use std::time::Duration;

use ioloop::io::Registration;
use ioloop::time::{sleep, timeout};
use ioloop::{Handle, Metrics, Runtime, yield_now};
use mio::event::Source;
use mio::net::UnixStream;
use mio::unix::SourceFd;
use mio::{Interest, Registry, Token};

/// Safety net for waits that should end long before it; never a measure.
const SAFETY: Duration = Duration::from_secs(10);

/// A connected pair: the non-blocking end to register, the blocking peer.
fn pair() -> io::Result<(UnixStream, StdUnixStream)> {
    let (ours, peer) = StdUnixStream::pair()?;
    ours.set_nonblocking(true)?;
    peer.set_read_timeout(Some(SAFETY))?;
    peer.set_write_timeout(Some(SAFETY))?;
    Ok((UnixStream::from_std(ours), peer))
}

/// Writes to `s` until the socket buffer is full; returns the byte count.
fn fill(mut s: &UnixStream) -> io::Result<usize> {
    let chunk = [0xAB; 64 * 1024];
    let mut filled = 0;
    loop {
        match s.write(&chunk) {
            Ok(n) => filled += n,
            Err(err) if err.kind() == io::ErrorKind::WouldBlock => return Ok(filled),
            Err(err) => return Err(err),
        }
    }
}

fn channel_error(err: impl fmt::Display) -> io::Error {
    io::Error::other(format!("the test's own channel failed: {err}"))
}

/// The runtime's counters as of the last completed tick.
async fn fresh_metrics() -> Metrics {
    yield_now().await;
    Handle::current().metrics()
}

/// Lets the loop tick until `done` holds for its counters, or the safety net
/// runs out.
async fn until(done: impl Fn(&Metrics) -> bool) -> io::Result<Metrics> {
    Ok(timeout(SAFETY, async {
        loop {
            let m = fresh_metrics().await;
            if done(&m) {
                return m;
            }
            sleep(Duration::from_millis(1)).await;
        }
    })
    .await?)
}

/// A waker that counts its wakes.
#[derive(Default)]
struct CountingWaker(AtomicUsize);

impl CountingWaker {
    fn wakes(&self) -> usize {
        self.0.load(Ordering::SeqCst)
    }
}

impl Wake for CountingWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }
    fn wake_by_ref(self: &Arc<Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// Parks `waker` on `reg`'s read side: spends the optimistic readiness a
/// new registration starts with (the read would block), then polls again.
fn park_reader(reg: &Registration<UnixStream>, waker: &Waker) -> io::Result<()> {
    let mut cx = Context::from_waker(waker);
    let mut buf = [0; 64];
    match reg.poll_read_io(&mut cx, |mut s| s.read(&mut buf)) {
        Poll::Pending => Ok(()),
        Poll::Ready(r) => Err(io::Error::other(format!(
            "expected an empty socket, the read gave {r:?}"
        ))),
    }
}

#[test]
fn a_parked_reader_is_woken_by_data() -> io::Result<()> {
    let (ours, mut peer) = pair()?;
    let (parked_tx, parked_rx) = mpsc::channel::<()>();
    let peer_thread = thread::spawn(move || -> io::Result<StdUnixStream> {
        parked_rx.recv_timeout(SAFETY).map_err(channel_error)?;
        peer.write_all(b"hello")?;
        Ok(peer)
    });

    let got = ioloop::block_on(async {
        let reg = Registration::new(ours)?;
        let reader = ioloop::spawn(async move {
            let mut parked_tx = Some(parked_tx);
            let mut buf = [0; 64];
            let n = poll_fn(|cx| {
                let r = reg.poll_read_io(cx, |mut s| s.read(&mut buf));
                if r.is_pending() {
                    // The waker is in place: let the peer write.
                    parked_tx.take().map(|tx| tx.send(()));
                }
                r
            })
            .await?;
            assert!(parked_tx.is_none(), "the read never had to wait");
            io::Result::Ok(buf[..n].to_vec())
        });
        timeout(SAFETY, reader).await?.expect("reader task failed")
    })?;

    assert_eq!(got, b"hello");
    let _peer = peer_thread.join().expect("peer thread panicked")?;
    Ok(())
}

#[test]
fn a_parked_writer_is_woken_when_the_peer_drains() -> io::Result<()> {
    let (ours, mut peer) = pair()?;
    let (parked_tx, parked_rx) = mpsc::channel::<usize>();
    let peer_thread = thread::spawn(move || -> io::Result<Vec<u8>> {
        let filled = parked_rx.recv_timeout(SAFETY).map_err(channel_error)?;
        // Everything that filled the buffer, then what the woken writer adds.
        let mut all = vec![0; filled + 4];
        peer.read_exact(&mut all)?;
        Ok(all)
    });

    let (filled, written) = ioloop::block_on(async {
        let reg = Registration::new(ours)?;
        let filled = fill(reg.get_ref())?;
        assert!(filled > 0);
        let writer = ioloop::spawn(async move {
            let mut parked_tx = Some(parked_tx);
            let n = poll_fn(|cx| {
                let r = reg.poll_write_io(cx, |mut s| s.write(b"tail"));
                if r.is_pending() {
                    parked_tx.take().map(|tx| tx.send(filled));
                }
                r
            })
            .await?;
            assert!(parked_tx.is_none(), "the write never had to wait");
            io::Result::Ok(n)
        });
        let n = timeout(SAFETY, writer)
            .await?
            .expect("writer task failed")?;
        io::Result::Ok((filled, n))
    })?;

    assert_eq!(written, 4);
    let all = peer_thread.join().expect("peer thread panicked")?;
    assert_eq!(all.len(), filled + 4);
    assert!(all[..filled].iter().all(|&b| b == 0xAB));
    assert_eq!(&all[filled..], b"tail");
    Ok(())
}

/// Hang-up wakes a parked reader and a parked writer of the same source.
///
/// What each then sees is Linux's `AF_UNIX` behaviour: the peer closes with
/// our unread bytes still in its receive queue, so the kernel sets
/// `ECONNRESET` on our socket (reported once, by whichever call comes first)
/// and shuts both directions. The reader's read hits the pending error or
/// end of file; the writer's write hits the pending error or `EPIPE`. Today
/// the reader runs first (the reactor takes the reader's waker before the
/// writer's, and woken tasks run in wake order), so it gets the reset and
/// the writer `EPIPE`; the test does not depend on that order.
#[test]
fn hang_up_wakes_both_the_reader_and_the_writer() -> io::Result<()> {
    let (ours, peer) = pair()?;
    let (parked_tx, parked_rx) = mpsc::channel::<&'static str>();
    let peer_thread = thread::spawn(move || -> io::Result<Vec<&'static str>> {
        let mut parked = vec![
            parked_rx.recv_timeout(SAFETY).map_err(channel_error)?,
            parked_rx.recv_timeout(SAFETY).map_err(channel_error)?,
        ];
        drop(peer);
        parked.sort();
        Ok(parked)
    });

    let (read, write) = ioloop::block_on(async {
        let reg = Arc::new(Registration::new(ours)?);
        fill(reg.get_ref())?;

        let (r, tx) = (reg.clone(), parked_tx.clone());
        let reader = ioloop::spawn(async move {
            let mut tx = Some(tx);
            let mut buf = [0; 64];
            poll_fn(|cx| {
                let res = r.poll_read_io(cx, |mut s| s.read(&mut buf));
                if res.is_pending() {
                    tx.take().map(|tx| tx.send("reader"));
                }
                res
            })
            .await
        });
        let (w, tx) = (reg.clone(), parked_tx);
        let writer = ioloop::spawn(async move {
            let mut tx = Some(tx);
            poll_fn(|cx| {
                let res = w.poll_write_io(cx, |mut s| s.write(b"more"));
                if res.is_pending() {
                    tx.take().map(|tx| tx.send("writer"));
                }
                res
            })
            .await
        });
        let read = timeout(SAFETY, reader).await?.expect("reader task failed");
        let write = timeout(SAFETY, writer).await?.expect("writer task failed");

        // Closed directions stay closed: both polls are ready for good.
        let mut cx = Context::from_waker(Waker::noop());
        let r = reg.poll_read_ready(&mut cx);
        assert!(
            matches!(&r, Poll::Ready(Ok(ev)) if ev.is_read_closed()),
            "{r:?}"
        );
        let w = reg.poll_write_ready(&mut cx);
        assert!(
            matches!(&w, Poll::Ready(Ok(ev)) if ev.is_write_closed()),
            "{w:?}"
        );
        // Once the one-off reset is consumed: end of file, and a broken pipe.
        let mut buf = [0; 64];
        let again = reg.poll_read_io(&mut cx, |mut s| s.read(&mut buf));
        assert!(matches!(again, Poll::Ready(Ok(0))), "{again:?}");
        let again = reg.poll_write_io(&mut cx, |mut s| s.write(b"more"));
        assert!(
            matches!(&again, Poll::Ready(Err(e)) if e.kind() == io::ErrorKind::BrokenPipe),
            "{again:?}"
        );
        io::Result::Ok((read, write))
    })?;

    let parked = peer_thread.join().expect("peer thread panicked")?;
    assert_eq!(
        parked,
        ["reader", "writer"],
        "both parked before the hang-up"
    );

    use io::ErrorKind::{BrokenPipe, ConnectionReset};
    let read_kind = read.as_ref().map_err(io::Error::kind);
    let write_kind = write.as_ref().map_err(io::Error::kind);
    assert!(
        matches!(read_kind, Ok(0) | Err(ConnectionReset)),
        "reader: {read:?}"
    );
    assert!(
        matches!(write_kind, Err(BrokenPipe | ConnectionReset)),
        "writer: {write:?}"
    );
    // The reset is reported once, to exactly one of them.
    let resets = [read_kind.err(), write_kind.err()]
        .into_iter()
        .filter(|k| *k == Some(ConnectionReset))
        .count();
    assert_eq!(resets, 1, "reader: {read:?}, writer: {write:?}");
    Ok(())
}

/// The peer shutting down only its write side wakes the reader, with end of
/// file, and leaves our write side working.
#[test]
fn a_half_close_wakes_the_reader_with_eof_and_writing_goes_on() -> io::Result<()> {
    let (ours, mut peer) = pair()?;
    let (parked_tx, parked_rx) = mpsc::channel::<()>();
    let peer_thread = thread::spawn(move || -> io::Result<Vec<u8>> {
        parked_rx.recv_timeout(SAFETY).map_err(channel_error)?;
        peer.shutdown(Shutdown::Write)?;
        let mut got = Vec::new();
        peer.read_to_end(&mut got)?;
        Ok(got)
    });

    ioloop::block_on(async {
        let reg = Arc::new(Registration::new(ours)?);
        let r = reg.clone();
        let reader = ioloop::spawn(async move {
            let mut parked_tx = Some(parked_tx);
            let mut buf = [0; 64];
            poll_fn(|cx| {
                let res = r.poll_read_io(cx, |mut s| s.read(&mut buf));
                if res.is_pending() {
                    parked_tx.take().map(|tx| tx.send(()));
                }
                res
            })
            .await
        });
        let n = timeout(SAFETY, reader)
            .await?
            .expect("reader task failed")?;
        assert_eq!(n, 0, "end of file");

        let mut cx = Context::from_waker(Waker::noop());
        let Poll::Ready(ev) = reg.poll_read_ready(&mut cx)? else {
            panic!("a closed read side is ready for good");
        };
        assert!(ev.is_read_closed());
        assert!(!ev.is_write_closed(), "{ev:?}");

        let n = poll_fn(|cx| reg.poll_write_io(cx, |mut s| s.write(b"bye"))).await?;
        assert_eq!(n, 3);
        io::Result::Ok(())
        // `reg` drops here, closing our end: the peer's read ends.
    })?;

    assert_eq!(peer_thread.join().expect("peer thread panicked")?, b"bye");
    Ok(())
}

/// A source whose `deregister` does nothing, so its epoll registration
/// outlives its `Registration`: what happens for real when a `dup` of the fd
/// (or a forked child) keeps the file open after the registration is gone.
#[derive(Debug)]
struct NoDeregister(RawFd);

impl Source for NoDeregister {
    fn register(
        &mut self,
        registry: &Registry,
        token: Token,
        interest: Interest,
    ) -> io::Result<()> {
        SourceFd(&self.0).register(registry, token, interest)
    }

    fn reregister(
        &mut self,
        registry: &Registry,
        token: Token,
        interest: Interest,
    ) -> io::Result<()> {
        SourceFd(&self.0).reregister(registry, token, interest)
    }

    fn deregister(&mut self, _: &Registry) -> io::Result<()> {
        Ok(())
    }
}

/// The raw `mio::Token` of a registration, read from its `Debug` output
/// (the token is not public API; the test only uses it to prove the slot
/// really was reused).
fn token_of<S: Source + fmt::Debug>(reg: &Registration<S>) -> usize {
    let dbg = format!("{reg:?}");
    let start = dbg
        .find("Token(")
        .expect("Registration's Debug shows its token")
        + 6;
    let len = dbg[start..].find(')').expect("closing parenthesis");
    dbg[start..start + len]
        .parse()
        .expect("a token is a number")
}

#[test]
fn a_stale_event_for_a_reused_slot_wakes_nobody() -> io::Result<()> {
    // The old socket stays open for the whole test, so its epoll entry does.
    let (old_ours, mut old_peer) = StdUnixStream::pair()?;
    old_ours.set_nonblocking(true)?;
    let (new_ours, mut new_peer) = pair()?;

    ioloop::block_on(async {
        let old = Registration::new(NoDeregister(old_ours.as_raw_fd()))?;
        // Its first (writable) edge is dispatched while it is still live.
        let m = fresh_metrics().await;
        assert_eq!((m.io_sources, m.stale_io_events), (1, 0));
        let old_token = token_of(&old);
        drop(old);

        let new = Registration::new(new_ours)?;
        let new_token = token_of(&new);
        let key_mask = (1usize << (usize::BITS / 2)) - 1;
        assert_eq!(
            old_token & key_mask,
            new_token & key_mask,
            "the new registration did not reuse the old slot"
        );
        assert_ne!(old_token, new_token, "a reused slot kept its generation");
        let m = fresh_metrics().await;
        assert_eq!((m.io_sources, m.stale_io_events), (1, 0));

        let wakes = Arc::new(CountingWaker::default());
        let waker = Waker::from(wakes.clone());
        park_reader(&new, &waker)?;

        // The old fd becomes readable: epoll reports it under the old token.
        old_peer.write_all(b"stale")?;
        let m = until(|m| m.stale_io_events >= 1).await?;
        assert_eq!(m.stale_io_events, 1);
        assert_eq!(
            wakes.wakes(),
            0,
            "the stale event woke the slot's new owner"
        );
        let mut cx = Context::from_waker(&waker);
        assert!(new.poll_read_ready(&mut cx).is_pending());

        // The counting waker does count: a real event for the new source
        // wakes it once.
        new_peer.write_all(b"fresh")?;
        timeout(SAFETY, async {
            while wakes.wakes() == 0 {
                sleep(Duration::from_millis(1)).await;
            }
        })
        .await?;
        assert_eq!(wakes.wakes(), 1);
        let mut buf = [0; 16];
        let n = poll_fn(|cx| new.poll_read_io(cx, |mut s| s.read(&mut buf))).await?;
        assert_eq!(&buf[..n], b"fresh");
        io::Result::Ok(())
    })?;

    // The old socket never lost its byte to anyone.
    drop(old_peer);
    let mut left = Vec::new();
    old_ours.set_nonblocking(false)?;
    (&old_ours).read_to_end(&mut left)?;
    assert_eq!(left, b"stale");
    Ok(())
}

#[test]
fn clear_readiness_keeps_an_event_that_arrived_after_it_was_read() -> io::Result<()> {
    let (ours, mut peer) = pair()?;
    ioloop::block_on(async {
        let reg = Registration::new(ours)?;
        let mut cx = Context::from_waker(Waker::noop());
        let mut buf = [0; 16];
        // Let the registration's own first edge in before taking a baseline.
        let base = fresh_metrics().await.io_events;

        let Poll::Ready(old) = reg.poll_read_ready(&mut cx)? else {
            panic!("a new registration starts out readable");
        };
        let e = reg.get_ref().read(&mut buf).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::WouldBlock);

        // Before `old` is handed back, data arrives and the loop records it.
        peer.write_all(b"x")?;
        until(|m| m.io_events > base).await?;

        reg.clear_readiness(old);
        let r = reg.poll_read_ready(&mut cx);
        assert!(
            matches!(&r, Poll::Ready(Ok(ev)) if ev.is_readable()),
            "the newer event was cleared: {r:?}"
        );
        let n = reg.get_ref().read(&mut buf)?;
        assert_eq!(&buf[..n], b"x");

        // With no newer event, clearing does clear.
        let e = reg.get_ref().read(&mut buf).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::WouldBlock);
        let Poll::Ready(current) = reg.poll_read_ready(&mut cx)? else {
            panic!("the readable bit was dropped before it was cleared");
        };
        reg.clear_readiness(current);
        assert!(reg.poll_read_ready(&mut cx).is_pending());
        io::Result::Ok(())
    })
}

#[test]
fn a_registration_outliving_its_runtime_fails_instead_of_hanging() -> io::Result<()> {
    let rt = Runtime::new()?;
    let handle = rt.handle().clone();
    let (a, _a_peer) = pair()?;
    let (b, _b_peer) = pair()?;
    let (c, _c_peer) = pair()?;

    // One registered on the loop thread, one from outside it.
    let inside = rt.block_on(async { Registration::new(a) })?;
    let outside = Registration::with_handle(b, &handle)?;

    // A waiter that is not a task (a task would be dropped with the
    // runtime): it must be woken, not left parked forever.
    let wakes = Arc::new(CountingWaker::default());
    let waker = Waker::from(wakes.clone());
    park_reader(&outside, &waker)?;
    assert_eq!(handle.metrics().io_sources, 2);

    drop(rt);
    assert_eq!(wakes.wakes(), 1, "the parked waiter was not woken");

    let mut cx = Context::from_waker(&waker);
    for reg in [&inside, &outside] {
        assert!(matches!(reg.poll_read_ready(&mut cx), Poll::Ready(Err(_))));
        assert!(matches!(reg.poll_write_ready(&mut cx), Poll::Ready(Err(_))));
        let mut buf = [0; 8];
        let r = reg.poll_read_io(&mut cx, |mut s| s.read(&mut buf));
        assert!(matches!(r, Poll::Ready(Err(_))), "{r:?}");
    }
    // No new registrations either.
    let err = Registration::with_handle(c, &handle).unwrap_err();
    assert!(err.to_string().contains("shut down"), "{err}");

    // Dropping them afterwards is fine and frees their entries.
    drop(inside);
    drop(outside);
    assert_eq!(handle.metrics().io_sources, 0);
    Ok(())
}

/// Item "many waiters" of issue 13 (and item 7 of the correctness issue,
/// where a second waiter displaced the first): every task waiting to read
/// one source is woken by its readiness, however many there are.
#[test]
fn every_task_waiting_to_read_one_source_is_woken_by_its_readiness() -> io::Result<()> {
    ioloop::block_on(async {
        let (ours, mut peer) = pair()?;
        let reg = Arc::new(Registration::new(ours)?);
        // Registrations start out ready: spend that first.
        let first_event = reg.readable().await?;
        reg.clear_readiness(first_event);
        let waiters: Vec<_> = (0..5)
            .map(|_| {
                let reg = reg.clone();
                ioloop::spawn(async move { reg.readable().await.map(|e| e.is_readable()) })
            })
            .collect();
        yield_now().await; // all five park
        assert!(waiters.iter().all(|w| !w.is_finished()));
        peer.write_all(b"x")?;
        for waiter in waiters {
            assert!(timeout(SAFETY, waiter).await?.unwrap()?);
        }
        Ok(())
    })
}

/// A `readable()` waiter beside a task reading the same source: the event
/// wakes both, the reader gets the bytes, the waiter its readiness.
#[test]
fn a_readable_waiter_beside_a_reader_is_woken_too() -> io::Result<()> {
    ioloop::block_on(async {
        let (ours, mut peer) = pair()?;
        let reg = Arc::new(Registration::new(ours)?);
        let first_event = reg.readable().await?;
        reg.clear_readiness(first_event);
        let reader = ioloop::spawn({
            let reg = reg.clone();
            async move {
                let mut buf = [0u8; 8];
                poll_fn(|cx| reg.poll_read_io(cx, |mut s| s.read(&mut buf))).await
            }
        });
        let watcher = ioloop::spawn({
            let reg = reg.clone();
            async move { reg.readable().await.map(|e| e.is_readable()) }
        });
        yield_now().await; // both park
        peer.write_all(b"hi")?;
        assert_eq!(timeout(SAFETY, reader).await?.unwrap()?, 2);
        assert!(timeout(SAFETY, watcher).await?.unwrap()?);
        Ok(())
    })
}

/// Tasks waiting through a poll function (no future to hold a place of its
/// own) share the source's other waiters: ten of them on one source are
/// all woken by its readiness.
#[test]
fn several_poll_function_callers_on_one_source_are_all_woken() -> io::Result<()> {
    poll_function_crowd(10)
}

/// More poll-function callers than the 65 kept: they take turns being
/// woken (each new one wakes the oldest, who registers again), and all of
/// them see the readiness when it comes. Correct, if busy until then.
#[test]
fn a_crowd_of_poll_function_callers_beyond_the_kept_ones_is_all_woken() -> io::Result<()> {
    poll_function_crowd(100)
}

fn poll_function_crowd(n: usize) -> io::Result<()> {
    ioloop::block_on(async {
        let (ours, mut peer) = pair()?;
        let reg = Arc::new(Registration::new(ours)?);
        let first_event = reg.readable().await?;
        reg.clear_readiness(first_event);
        let waiters: Vec<_> = (0..n)
            .map(|_| {
                let reg = reg.clone();
                ioloop::spawn(async move {
                    poll_fn(|cx| reg.poll_read_ready(cx))
                        .await
                        .map(|e| e.is_readable())
                })
            })
            .collect();
        yield_now().await;
        assert!(waiters.iter().all(|w| !w.is_finished()));
        peer.write_all(b"x")?;
        for waiter in waiters {
            assert!(timeout(SAFETY, waiter).await?.unwrap()?);
        }
        Ok(())
    })
}

/// Polls `fut` once.
async fn poll_once<F: std::future::Future>(fut: F) -> Poll<F::Output> {
    let mut fut = std::pin::pin!(fut);
    poll_fn(|cx| Poll::Ready(fut.as_mut().poll(cx))).await
}

/// A decision (issue 28): a new stream starts out ready, before any event,
/// saving its first read a trip through the poller (tokio's start not
/// ready). `readable()` and `poll_read_ready` on a fresh TCP or Unix stream
/// return at once; the `try_read` that follows says `WouldBlock`, never a
/// wrong answer, and clears the readiness, so the next `readable()` waits
/// for the data.
#[test]
fn a_new_stream_starts_ready_and_its_first_try_read_says_would_block() -> io::Result<()> {
    use ioloop::net::{TcpListener, TcpStream, UnixStream as Stream};
    ioloop::block_on(async {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let client = TcpStream::connect(listener.local_addr()?).await?;
        let (server, _) = listener.accept().await?;
        let (a, b) = Stream::pair()?;
        let mut buf = [0u8; 8];

        // TCP: ready at once, nothing there, then a real wait.
        assert!(matches!(
            poll_once(server.readable()).await,
            Poll::Ready(Ok(()))
        ));
        assert!(matches!(
            poll_fn(|cx| Poll::Ready(server.poll_read_ready(cx))).await,
            Poll::Ready(Ok(()))
        ));
        let err = server.try_read(&mut buf).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::WouldBlock);
        assert!(poll_once(server.readable()).await.is_pending());
        assert_eq!(client.try_write(b"ping")?, 4);
        timeout(SAFETY, server.readable()).await??;
        assert_eq!(server.try_read(&mut buf)?, 4);
        assert_eq!(&buf[..4], b"ping");

        // Unix: the same.
        assert!(matches!(poll_once(a.readable()).await, Poll::Ready(Ok(()))));
        let err = a.try_read(&mut buf).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::WouldBlock);
        assert!(poll_once(a.readable()).await.is_pending());
        assert_eq!(b.try_write(b"pong")?, 4);
        timeout(SAFETY, a.readable()).await??;
        assert_eq!(a.try_read(&mut buf)?, 4);
        assert_eq!(&buf[..4], b"pong");
        Ok(())
    })
}

/// An I/O call that says `Interrupted` the first time it is made and
/// returns 7 after, counting its calls in `calls` (from 0 again).
fn interrupted_once(calls: &Cell<usize>) -> impl FnMut(&UnixStream) -> io::Result<usize> + '_ {
    calls.set(0);
    move |_| {
        calls.set(calls.get() + 1);
        if calls.get() == 1 {
            Err(io::Error::from(io::ErrorKind::Interrupted))
        } else {
            Ok(7)
        }
    }
}

/// `EINTR` is retried in one place for the `try_*` pattern too: a call
/// that says `Interrupted` is made again, never handed to the caller, for
/// `try_read_io`, `try_write_io` and `try_write_stream` alike.
#[test]
fn the_try_calls_retry_an_interrupted_call() -> io::Result<()> {
    let (ours, _peer) = pair()?;
    ioloop::block_on(async {
        let reg = Registration::new(ours)?;
        let calls = Cell::new(0);
        assert_eq!(reg.try_read_io(interrupted_once(&calls))?, 7);
        assert_eq!(calls.get(), 2);
        assert_eq!(reg.try_write_io(interrupted_once(&calls))?, 7);
        assert_eq!(calls.get(), 2);
        assert_eq!(reg.try_write_stream(7, interrupted_once(&calls))?, 7);
        assert_eq!(calls.get(), 2);
        Ok(())
    })
}

/// The waiting calls retry `EINTR` as the `try_*` ones do: a call that
/// says `Interrupted` is made again in the same poll, and its caller gets
/// the second call's result, for `poll_read_io`, `poll_write_io`,
/// `poll_read_stream` and `poll_write_stream` alike.
#[test]
fn the_poll_calls_retry_an_interrupted_call() -> io::Result<()> {
    let (ours, mut peer) = pair()?;
    // Readable too: each call below runs under a readiness it has.
    peer.write_all(b"x")?;
    ioloop::block_on(async {
        let reg = Registration::new(ours)?;
        let calls = Cell::new(0);
        let n = poll_fn(|cx| reg.poll_read_io(cx, interrupted_once(&calls))).await?;
        assert_eq!((n, calls.get()), (7, 2));
        let n = poll_fn(|cx| reg.poll_write_io(cx, interrupted_once(&calls))).await?;
        assert_eq!((n, calls.get()), (7, 2));
        let n = poll_fn(|cx| reg.poll_read_stream(cx, 7, interrupted_once(&calls))).await?;
        assert_eq!((n, calls.get()), (7, 2));
        let n = poll_fn(|cx| reg.poll_write_stream(cx, 7, interrupted_once(&calls))).await?;
        assert_eq!((n, calls.get()), (7, 2));
        Ok(())
    })
}

/// A `Waiter` shows its registration's token and whether it holds a
/// place among the direction's waiters: not before its first wait, and
/// from then on.
#[test]
fn a_waiter_shows_its_token_and_whether_it_is_parked() -> io::Result<()> {
    let (ours, _peer) = pair()?;
    ioloop::block_on(async {
        let reg = Registration::new(ours)?;
        let shown = format!("{reg:?}");
        let token = shown.split("token: ").nth(1).expect(&shown);
        let token = token.strip_suffix(" }").expect(&shown);
        let mut waiter = reg.read_waiter();
        let expected = |parked| format!("Waiter {{ token: {token}, parked: {parked} }}");
        assert_eq!(format!("{waiter:?}"), expected(false));
        // A new registration is taken as ready until a call says otherwise.
        let mut buf = [0; 1];
        let empty = reg.try_read_io(|mut s| s.read(&mut buf));
        assert_eq!(empty.unwrap_err().kind(), io::ErrorKind::WouldBlock);
        let ready = poll_fn(|cx| Poll::Ready(waiter.poll_ready(cx))).await;
        assert!(ready.is_pending());
        assert_eq!(format!("{waiter:?}"), expected(true));
        Ok(())
    })
}

/// A `ReadyEvent` shows each readiness bit by name, and its tick: here a
/// new socket's writability, with nothing read, closed or failed.
#[test]
fn a_ready_event_shows_each_bit_and_its_tick() -> io::Result<()> {
    let (ours, _peer) = pair()?;
    ioloop::block_on(async {
        let reg = Registration::new(ours)?;
        let event = poll_fn(|cx| reg.poll_write_ready(cx)).await?;
        let shown = format!("{event:?}");
        let fields = "ReadyEvent { readable: false, writable: true, read_closed: false, \
                      write_closed: false, error: false, priority: false, tick: ";
        assert!(shown.starts_with(fields), "{shown}");
        let tick = shown[fields.len()..].strip_suffix(" }").expect(&shown);
        assert!(tick.parse::<u32>().is_ok(), "{shown}");
        Ok(())
    })
}

/// `try_write_stream` clears write readiness after a short write, as
/// `poll_write_stream` does: the send buffer is full, so the next write
/// waits for an edge instead of making a send that can only say `EAGAIN`;
/// a full write keeps it.
#[test]
fn try_write_stream_clears_readiness_after_a_short_write_only() -> io::Result<()> {
    let (ours, _peer) = pair()?;
    ioloop::block_on(async {
        let reg = Registration::new(ours)?;
        let ready = || poll_fn(|cx| Poll::Ready(reg.poll_write_ready(cx).is_ready()));
        assert_eq!(reg.try_write_stream(1, |mut s| s.write(b"x"))?, 1);
        assert!(ready().await, "a full write cleared readiness");
        let big = vec![0; 8 << 20];
        let n = reg.try_write_stream(big.len(), |mut s| s.write(&big))?;
        assert!(n > 0 && n < big.len(), "{n}");
        assert!(!ready().await, "a short write left readiness set");
        Ok(())
    })
}
