//! `compat::hyper::serve` (the `hyper` feature) under connection churn:
//! every way a connection can end (a normal close, the client closing or
//! resetting mid-request, a service error, a service panic, the graceful
//! stop, the connection task aborted after the grace period) gives back
//! everything the server held for it, while the server keeps running.
//!
//! The clients are plain HTTP/1 over ioloop's `TcpStream` on 127.0.0.1,
//! each request on a connection of its own, on the same loop as the
//! server. A connection has ended on the server's side when its task has
//! left the runtime (`live_tasks`), which the test waits for before it
//! measures; the wait's deadline is only a safety net.

use std::io;
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures_util::io::{AsyncReadExt, AsyncWriteExt};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper::{Request, Response};
use ioloop::compat::hyper::Server;
use ioloop::net::{TcpListener, TcpStream};
use testkit::account::{self, Held};
use testkit::util;

/// Far longer than any of these tests takes; never what is measured.
const SAFETY: Duration = Duration::from_secs(120);

/// What the panicking service panics with: the quiet hook drops exactly
/// these reports, and passes every other panic (a failed assertion) on.
const PANIC: &str = "churn: the service panics";

/// Heap a server may still hold after a round of connections, for caches
/// it keeps at their high-water mark (hyper's date header, the runtime's
/// task slab, the stop list's slots). A leak of one connection record per
/// connection is megabytes over a round.
const SLACK: isize = 256 * 1024;

/// The test service: `/panic` panics, `/error` fails, `/hang` never
/// answers, anything else answers `ok`.
async fn service(req: Request<Incoming>) -> Result<Response<Full<Bytes>>, io::Error> {
    match req.uri().path() {
        "/panic" => panic!("{PANIC}"),
        "/error" => Err(io::Error::other("churn: the service fails")),
        "/hang" => std::future::pending().await,
        _ => Ok(Response::new(Full::new(Bytes::from_static(b"ok")))),
    }
}

/// Silences the reports of the service's own panics (2,000 backtraces
/// otherwise) until dropped; any other panic is reported as usual.
struct QuietPanics;

impl QuietPanics {
    fn new() -> Self {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if util::panic_text(info.payload()) != PANIC {
                previous(info);
            }
        }));
        QuietPanics
    }
}

impl Drop for QuietPanics {
    fn drop(&mut self) {
        // Back to the default hook (which the test harness's capture goes
        // through), dropping ours; a failing test keeps it (the hook
        // cannot change while a thread panics), which only filters this
        // file's own panics.
        if !std::thread::panicking() {
            drop(std::panic::take_hook());
        }
    }
}

/// How a client ends its connection.
#[derive(Clone, Copy, Debug)]
enum Ending {
    /// A request answered, then the server closes (`connection: close`).
    ServerCloses,
    /// A request answered on a keep-alive connection, then the client
    /// closes it.
    ClientCloses,
    /// Half a request head, then the client's end of the write half.
    ClientClosesMidRequest,
    /// Half a request head, then a reset (`SO_LINGER` 0).
    ClientResets,
    /// The service returns an error.
    ServiceError,
    /// The service panics.
    ServicePanics,
}

/// One client connection to `addr`, ended as `ending` says.
async fn client(addr: std::net::SocketAddr, ending: Ending) -> io::Result<()> {
    let mut stream = TcpStream::connect(addr).await?;
    let head: &[u8] = match ending {
        Ending::ServerCloses => b"GET / HTTP/1.1\r\nhost: t\r\nconnection: close\r\n\r\n",
        Ending::ClientCloses => b"GET / HTTP/1.1\r\nhost: t\r\n\r\n",
        Ending::ClientClosesMidRequest | Ending::ClientResets => b"GET / HTTP/1.1\r\nho",
        Ending::ServiceError => b"GET /error HTTP/1.1\r\nhost: t\r\n\r\n",
        Ending::ServicePanics => b"GET /panic HTTP/1.1\r\nhost: t\r\n\r\n",
    };
    stream.write_all(head).await?;
    let mut got = Vec::new();
    match ending {
        Ending::ClientCloses => {
            let mut buf = [0; 512];
            while !got.ends_with(b"ok") {
                let n = stream.read(&mut buf).await?;
                assert_ne!(n, 0, "the server closed a keep-alive connection");
                got.extend_from_slice(&buf[..n]);
            }
            assert!(got.starts_with(b"HTTP/1.1 200"));
            return Ok(());
        }
        Ending::ClientResets => {
            stream.set_linger(Some(Duration::ZERO))?;
            return Ok(());
        }
        Ending::ClientClosesMidRequest => stream.shutdown(std::net::Shutdown::Write)?,
        _ => {}
    }
    // The server ends the connection: read to its end (a reset counts).
    match stream.read_to_end(&mut got).await {
        Ok(_) => {}
        Err(err) if err.kind() == io::ErrorKind::ConnectionReset => {}
        Err(err) => return Err(err),
    }
    if let Ending::ServerCloses = ending {
        assert!(got.starts_with(b"HTTP/1.1 200"), "{got:?}");
    } else {
        assert!(!got.starts_with(b"HTTP/1.1 200"), "{ending:?}: {got:?}");
    }
    Ok(())
}

/// Waits until the number of live tasks on the runtime passes `until`.
async fn live_tasks(what: &str, until: impl Fn(u64) -> bool) {
    let deadline = Instant::now() + SAFETY;
    while !until(ioloop::Handle::current().metrics().live_tasks) {
        assert!(Instant::now() < deadline, "{what} never happened");
        ioloop::time::sleep(Duration::from_millis(1)).await;
    }
}

/// Waits until the runtime holds at most `tasks` live tasks (the
/// connections have ended on the server's side), then gives the server a
/// few turns to reap them from its set.
async fn settle(tasks: u64) {
    live_tasks("the connections' end", |n| n <= tasks).await;
    for _ in 0..4 {
        ioloop::yield_now().await;
    }
}

/// A server on 127.0.0.1 in a task of its own, until `stop` is dropped or
/// sent to.
async fn start(
    grace: Duration,
) -> io::Result<(
    std::net::SocketAddr,
    async_channel::Sender<()>,
    ioloop::task::JoinHandle<io::Result<()>>,
)> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let (stop, stopped) = async_channel::bounded::<()>(1);
    let server = ioloop::spawn_local(async move {
        let shutdown = async move {
            let _ = stopped.recv().await;
        };
        Server::new()
            .grace_period(grace)
            .serve(listener, service_fn(service), shutdown)
            .await
    });
    // The server's first poll: it is accepting from here on.
    ioloop::yield_now().await;
    Ok((addr, stop, server))
}

/// 2,000 requests whose service panics, each on a connection of its own,
/// then 500 of each other way a connection ends: the heap after each
/// round is where it was before it, with the server still running.
#[test]
fn serve_releases_every_connection_however_it_ends() -> io::Result<()> {
    let _serial = account::serial();
    let _quiet = QuietPanics::new();
    util::within(SAFETY, || {
        account::runtime()?.block_on(async {
            let (addr, stop, server) = start(Duration::from_secs(30)).await?;
            let base = ioloop::Handle::current().metrics().live_tasks;
            let rounds = [
                (Ending::ServicePanics, 2_000),
                (Ending::ServerCloses, 500),
                (Ending::ClientCloses, 500),
                (Ending::ClientClosesMidRequest, 500),
                (Ending::ClientResets, 500),
                (Ending::ServiceError, 500),
            ];
            for (ending, n) in rounds {
                // Warm: what the server keeps at its high-water mark.
                for _ in 0..20 {
                    client(addr, ending).await?;
                }
                settle(base).await;
                let before = Held::now();
                for _ in 0..n {
                    client(addr, ending).await?;
                }
                settle(base).await;
                assert!(!server.is_finished(), "the server stopped");
                before.assert_back(&format!("{n} connections ended by {ending:?}"), SLACK);
            }
            drop(stop);
            server.await??;
            Ok(())
        })
    })
}

/// Connections open when the server stops: idle ones close at the stop,
/// ones whose request never completes are aborted after the grace period;
/// once `serve` returns, everything it held is back.
#[test]
fn serve_releases_the_connections_a_stop_ends_or_aborts() -> io::Result<()> {
    let _serial = account::serial();
    util::within(SAFETY, || {
        account::runtime()?.block_on(async {
            let round = || async {
                let (addr, stop, server) = start(Duration::from_millis(50)).await?;
                let mut clients = Vec::new();
                for i in 0..200 {
                    let mut stream = TcpStream::connect(addr).await?;
                    if i % 2 == 0 {
                        stream
                            .write_all(b"GET /hang HTTP/1.1\r\nhost: t\r\n\r\n")
                            .await?;
                    }
                    clients.push(stream);
                }
                live_tasks("200 connections accepted", |n| n >= 201).await;
                stop.send(()).await.expect("the server is running");
                server.await??;
                // The server is gone: every connection reads to its end.
                for mut stream in clients {
                    let mut rest = Vec::new();
                    match stream.read_to_end(&mut rest).await {
                        Ok(_) => {}
                        Err(err) if err.kind() == io::ErrorKind::ConnectionReset => {}
                        Err(err) => return Err(err),
                    }
                }
                io::Result::Ok(())
            };
            round().await?;
            settle(0).await;
            let before = Held::now();
            for _ in 0..5 {
                round().await?;
            }
            settle(0).await;
            before.assert_back("5 servers stopped with 200 connections open", SLACK);
            Ok(())
        })
    })
}
