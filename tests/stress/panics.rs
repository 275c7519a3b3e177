//! Panics everywhere the loop runs other people's code, by the hundred,
//! while echo traffic flows: handlers of the callback `Reactor`
//! (`ioloop::callbacks`) panicking in `on_data`, tasks panicking inside the
//! reactor's I/O path (the closure `Registration::poll_read_io` calls after
//! a readiness event), wakers panicking when an I/O event, a timer or a
//! task's completion fires them, and futures whose destructors panic while
//! the runtime shuts down with their sockets and timers in hand. The loop
//! goes on, the traffic goes on, shutdown drops everything else, and the
//! process never aborts.
//!
//! The scenario runs in a child process (the test binary again, with
//! [`CHILD`] set): an abort (a panic escaping where it cannot unwind, or a
//! second panic during unwinding) kills it with SIGABRT, which the parent
//! reports plainly instead of losing the rest of this binary's tests. The
//! child silences the panic hook (hundreds of panics are expected) and
//! counts them instead.
//!
//! tests/rt/panic.rs, tests/rt/shutdown.rs and tests/servers/callbacks_layer.rs
//! prove each kind once; this is all of them at once, many times, under
//! load.

use std::future::poll_fn;
use std::io::{self, Read, Write};
use std::net::TcpListener as StdTcpListener;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::task::Context;
use std::time::Duration;

use futures_util::{AsyncReadExt, AsyncWriteExt};
use ioloop::callbacks::{self, Connection, Handler};
use ioloop::io::Registration;
use ioloop::net::{TcpListener, TcpStream};
use ioloop::time::{sleep, timeout};
use ioloop::{Handle, JoinHandle};
use mio::net::UnixStream;
use testkit::{net_proc, util};
use util::{DropCounter, panicking_waker, poll_once_with};

const TEST: &str = "hundreds_of_panics_in_wakers_io_callbacks_and_destructors_never_abort";
const CHILD: &str = "IOLOOP_STRESS_PANICS_CHILD";
const TAG: &str = "stress-panics-child:";
/// Of each kind.
const N: usize = 100;
const ECHO_CLIENTS: usize = 20;
const SAFETY: Duration = Duration::from_secs(60);

#[test]
fn hundreds_of_panics_in_wakers_io_callbacks_and_destructors_never_abort() -> io::Result<()> {
    let _one = crate::one_at_a_time();
    if net_proc::is_child(CHILD) {
        return child();
    }
    if !util::fd_limit_at_least(16 * N as u64 + 256) {
        println!(
            "skipped: RLIMIT_NOFILE cannot be raised to {}",
            16 * N + 256
        );
        return Ok(());
    }
    util::within(SAFETY * 2, || {
        let mut child = net_proc::spawn_child(&net_proc::test_name(module_path!(), TEST), CHILD)?;
        let mut lines = net_proc::child_lines(&mut child);
        let report = net_proc::expect_line(&mut lines, TAG);
        let status = child.wait()?;
        assert!(
            status.success(),
            "the child died ({status}); it reported {report:?}"
        );
        let report = report?;
        println!("{report}");
        // Every kind fired, every count is exact: see `child`.
        let field = |name: &str| -> usize {
            report
                .split_whitespace()
                .find_map(|kv| kv.strip_prefix(name)?.strip_prefix('='))
                .and_then(|v| v.parse().ok())
                .unwrap_or_else(|| panic!("no {name} in {report:?}"))
        };
        assert_eq!(field("handler_panics"), N);
        assert_eq!(field("handler_echoes"), N);
        assert_eq!(field("io_callback_panics"), N);
        assert_eq!(field("waker_panics"), 3 * N);
        assert_eq!(field("shutdown_panics"), 3 * N);
        assert_eq!(field("destructors_run"), N);
        assert_eq!(field("sockets_closed"), N);
        Ok(())
    })
}

/// Panics in its destructor.
struct PanicOnDrop;

impl Drop for PanicOnDrop {
    fn drop(&mut self) {
        panic!("this destructor panics on purpose");
    }
}

/// A registered socket pair end and its peer, with the registration's
/// optimistic first readiness spent, so the next poll parks.
async fn parked_pair() -> io::Result<(Registration<UnixStream>, UnixStream)> {
    let (a, b) = UnixStream::pair()?;
    let a = Registration::new(a)?;
    let first = poll_fn(|cx| a.poll_read_ready(cx)).await?;
    a.clear_readiness(first);
    Ok((a, b))
}

fn child() -> io::Result<()> {
    // If the scenario hangs, the parent's watchdog fails the test; this
    // one makes sure the child does not outlive it.
    std::thread::spawn(|| {
        std::thread::sleep(SAFETY * 2);
        std::process::exit(3);
    });
    let panics = Arc::new(AtomicUsize::new(0));
    let p = panics.clone();
    std::panic::set_hook(Box::new(move |_| {
        p.fetch_add(1, Ordering::SeqCst);
    }));
    let rt = ioloop::Runtime::new()?;
    let handle = rt.handle().clone();

    let (traffic, handler_panics, handler_echoes, io_callback_panics) = rt.block_on(async {
        let baseline = Handle::current().metrics();
        let echoes = Arc::new(AtomicU64::new(0));
        let traffic = spawn_traffic(echoes.clone()).await?;

        // Handlers of the callback Reactor, half of them panicking in
        // on_data, the other half echoing, all connected at once.
        let handler_before = panics.load(Ordering::SeqCst);
        let (handler_echoes, closed) = callback_handlers().await?;
        assert_eq!(closed, N, "a panicking handler's connection stayed open");
        let handler_panics = panics.load(Ordering::SeqCst) - handler_before;

        // Tasks that panic inside the I/O callback, woken by a real event,
        // each holding a registered source and an armed timer.
        let io_before = panics.load(Ordering::SeqCst);
        let mut peers = Vec::new();
        let mut doomed = Vec::new();
        for _ in 0..N {
            let (reg, peer) = parked_pair().await?;
            peers.push(peer);
            doomed.push(ioloop::spawn(async move {
                let _timer = sleep(Duration::from_secs(3600));
                let mut buf = [0; 16];
                poll_fn(|cx| {
                    reg.poll_read_io(cx, |mut s| match s.read(&mut buf) {
                        Ok(n) if n > 0 => panic!("panics in the I/O callback"),
                        other => other,
                    })
                })
                .await
            }));
        }
        // Every one parks on its source before any data comes.
        ioloop::yield_now().await;
        for peer in &mut peers {
            peer.write_all(b"boom")?;
        }
        let mut io_callback_panics = 0;
        for task in doomed {
            let err = task.await.expect_err("the task was to panic");
            assert!(err.is_panic());
            io_callback_panics += 1;
        }

        // Wakers that panic when the loop fires them: on I/O events...
        let mut keep = Vec::new();
        for _ in 0..N {
            let (reg, mut peer) = parked_pair().await?;
            let (bad, _) = panicking_waker();
            assert!(
                reg.poll_read_ready(&mut Context::from_waker(&bad))
                    .is_pending()
            );
            peer.write_all(b"x")?;
            keep.push((reg, peer));
        }
        // ...on timers...
        let mut sleeps = Vec::new();
        for _ in 0..N {
            let mut s = sleep(Duration::from_millis(2));
            let (bad, _) = panicking_waker();
            assert!(poll_once_with(&mut s, &bad).is_pending());
            sleeps.push(s);
        }
        // ...and on a task's completion.
        let mut joins: Vec<JoinHandle<()>> = Vec::new();
        for _ in 0..N {
            let mut task = ioloop::spawn(ioloop::yield_now());
            let (bad, _) = panicking_waker();
            assert!(poll_once_with(&mut task, &bad).is_pending());
            joins.push(task);
        }
        timeout(SAFETY, async {
            while panics.load(Ordering::SeqCst) < io_before + N + 3 * N
                || !joins.iter().all(|j| j.is_finished())
            {
                sleep(Duration::from_millis(1)).await;
            }
        })
        .await?;

        // The loop went on: the traffic still flows, and the panicking
        // tasks left no source or timer behind.
        let before = echoes.load(Ordering::SeqCst);
        timeout(SAFETY, async {
            while echoes.load(Ordering::SeqCst) < before + 100 {
                sleep(Duration::from_millis(1)).await;
            }
        })
        .await?;
        drop((keep, sleeps, peers));
        let expected = baseline.io_sources + traffic.sources;
        timeout(SAFETY, async {
            while Handle::current().metrics().io_sources != expected {
                sleep(Duration::from_millis(1)).await;
            }
        })
        .await?;
        // The traffic is left running: shutdown cancels it mid-flight.
        io::Result::Ok((traffic, handler_panics, handler_echoes, io_callback_panics))
    })?;
    let before_shutdown = panics.load(Ordering::SeqCst);

    // Shutdown with panics waiting in it: futures whose destructors panic,
    // each also holding a socket, an armed timer and a destructor that
    // must still run; wakers that panic when shutdown wakes them, parked
    // on sources and timers that outlive the runtime.
    let std_listener = StdTcpListener::bind("127.0.0.1:0")?;
    let addr = std_listener.local_addr()?;
    let drops = Arc::new(AtomicUsize::new(0));
    let mut far_ends = Vec::new();
    let (outliving_sources, outliving_timers) = rt.block_on(async {
        for _ in 0..N {
            let stream = TcpStream::connect(addr).await?;
            far_ends.push(std_listener.accept()?.0);
            let (guard, counter) = (PanicOnDrop, DropCounter(drops.clone()));
            drop(ioloop::spawn(async move {
                let _held = (guard, counter, stream, sleep(Duration::from_secs(3600)));
                std::future::pending::<()>().await;
            }));
        }
        let mut sources = Vec::new();
        let mut timers = Vec::new();
        for _ in 0..N {
            let (reg, peer) = parked_pair().await?;
            let (bad, _) = panicking_waker();
            assert!(
                reg.poll_read_ready(&mut Context::from_waker(&bad))
                    .is_pending()
            );
            sources.push((reg, peer));
            let mut s = sleep(Duration::from_secs(3600));
            let (bad, _) = panicking_waker();
            assert!(poll_once_with(&mut s, &bad).is_pending());
            timers.push(s);
        }
        ioloop::yield_now().await;
        io::Result::Ok((sources, timers))
    })?;
    drop(rt);
    let shutdown_panics = panics.load(Ordering::SeqCst) - before_shutdown;
    drop((outliving_sources, outliving_timers, traffic, handle));

    // Each socket the panicking futures held was closed: its far end reads
    // end of file.
    let mut sockets_closed = 0;
    for mut far in far_ends {
        far.set_read_timeout(Some(SAFETY))?;
        let mut rest = Vec::new();
        far.read_to_end(&mut rest)?;
        sockets_closed += 1;
    }
    println!(
        "{TAG} handler_panics={handler_panics} handler_echoes={handler_echoes} \
         io_callback_panics={io_callback_panics} waker_panics={} \
         shutdown_panics={shutdown_panics} destructors_run={} sockets_closed={sockets_closed}",
        before_shutdown - handler_panics - io_callback_panics,
        drops.load(Ordering::SeqCst),
    );
    Ok(())
}

/// A callback handler that echoes lines, and panics on the line `panic`.
struct EchoOrPanic;

impl Handler for EchoOrPanic {
    fn on_data(&mut self, conn: &mut Connection) {
        while let Some(end) = conn.inbuf().iter().position(|&b| b == b'\n') {
            let line = conn.inbuf()[..end].to_vec();
            conn.consume(end + 1);
            if line == b"panic" {
                panic!("panics in on_data");
            }
            conn.queue_send(&[b"[echo] ", &line[..], b"\n"].concat());
        }
    }
}

/// Serves `EchoOrPanic` and connects `2 * N` clients at once: half ask it
/// to panic (their connection must close), half for an echo (which must
/// come). Returns (echoes received, doomed connections closed).
async fn callback_handlers() -> io::Result<(usize, usize)> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let server = ioloop::spawn(callbacks::serve(listener, || EchoOrPanic));
    let clients: Vec<_> = (0..2 * N)
        .map(|i| {
            ioloop::spawn(async move {
                let mut stream = TcpStream::connect(addr).await?;
                if i % 2 == 0 {
                    stream.write_all(b"panic\n").await?;
                    // The task died and dropped the socket: end of file, or
                    // a reset; never a reply.
                    let mut rest = Vec::new();
                    let _ = stream.read_to_end(&mut rest).await;
                    assert!(rest.is_empty(), "a reply from a panicked handler");
                    io::Result::Ok((0, 1))
                } else {
                    let line = format!("client {i}\n");
                    stream.write_all(line.as_bytes()).await?;
                    let mut echo = vec![0; line.len() + 7];
                    stream.read_exact(&mut echo).await?;
                    assert_eq!(echo, format!("[echo] {line}").as_bytes());
                    io::Result::Ok((1, 0))
                }
            })
        })
        .collect();
    let (mut echoes, mut closed) = (0, 0);
    for client in clients {
        let (e, c) = timeout(SAFETY, client).await?.expect("a client panicked")?;
        echoes += e;
        closed += c;
    }
    server.abort();
    Ok((echoes, closed))
}

/// What the echo traffic registered, to tell its sources from leftovers.
struct Traffic {
    sources: u64,
}

/// An echo server and `ECHO_CLIENTS` clients doing round trips for as
/// long as the runtime runs, counting them in `echoes`.
async fn spawn_traffic(echoes: Arc<AtomicU64>) -> io::Result<Traffic> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    drop(ioloop::spawn(async move {
        loop {
            let (mut stream, _) = listener.accept().await?;
            drop(ioloop::spawn(async move {
                let mut buf = [0; 64];
                loop {
                    let n = stream.read(&mut buf).await?;
                    if n == 0 {
                        return io::Result::Ok(());
                    }
                    stream.write_all(&buf[..n]).await?;
                }
            }));
        }
        #[allow(unreachable_code)]
        io::Result::Ok(())
    }));
    for i in 0..ECHO_CLIENTS {
        let mut stream = TcpStream::connect(addr).await?;
        let echoes = echoes.clone();
        drop(ioloop::spawn(async move {
            let msg = format!("client {i}");
            let mut buf = vec![0; msg.len()];
            loop {
                stream.write_all(msg.as_bytes()).await?;
                stream.read_exact(&mut buf).await?;
                assert_eq!(buf, msg.as_bytes());
                echoes.fetch_add(1, Ordering::SeqCst);
            }
            #[allow(unreachable_code)]
            io::Result::Ok(())
        }));
    }
    // The listener, and both ends of each client's connection.
    Ok(Traffic {
        sources: 1 + 2 * ECHO_CLIENTS as u64,
    })
}
