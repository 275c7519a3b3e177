//! The `http_hello` servers against real clients on 127.0.0.1: every
//! scenario runs on the ioloop server (examples/http_hello/serve.rs) and
//! on its tokio twin (examples/http_hello_tokio/serve.rs), which proves
//! the twins speak the same HTTP, byte for byte.

use crate::http;
#[path = "../../examples/http_hello/serve.rs"]
mod ioloop_serve;
#[path = "../../examples/http_hello_tokio/serve.rs"]
mod tokio_serve;

use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::sync::{Arc, mpsc};
use std::time::Duration;

use futures_util::future::{Either, select};
use http::{BAD_REQUEST, OK, OK_CLOSE, OK_KEEP_ALIVE_1_0};
use testkit::util;

/// Safety net for blocking reads; never what a test measures.
const SAFETY: Duration = Duration::from_secs(20);
const GET: &[u8] = b"GET / HTTP/1.1\r\nHost: test\r\n\r\n";
const HEAD_ONLY: usize = OK.len() - b"Hello, World!".len();

#[derive(Clone, Copy)]
enum Runtime {
    Ioloop,
    Tokio,
}

/// A hello server on its own thread and runtime, stopped on drop.
struct Server {
    addr: SocketAddr,
    stop: Arc<util::parking::Signal>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Server {
    fn start(runtime: Runtime) -> Server {
        let stop = util::signal();
        let (tx, rx) = mpsc::channel();
        let s = stop.clone();
        let thread = std::thread::spawn(move || match runtime {
            Runtime::Ioloop => ioloop::block_on(async move {
                let listener = ioloop::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
                tx.send(listener.local_addr().unwrap()).unwrap();
                let serve = std::pin::pin!(ioloop_serve::serve(listener));
                if let Either::Left((result, _)) = select(serve, std::pin::pin!(s.wait())).await {
                    panic!("the server stopped by itself: {result:?}");
                }
            }),
            Runtime::Tokio => {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .unwrap();
                rt.block_on(async move {
                    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
                    tx.send(listener.local_addr().unwrap()).unwrap();
                    tokio::select! {
                        result = tokio_serve::serve(listener) => {
                            panic!("the server stopped by itself: {result:?}")
                        }
                        () = s.wait() => {}
                    }
                });
            }
        });
        let addr = rx.recv_timeout(SAFETY).expect("server started");
        Server {
            addr,
            stop,
            thread: Some(thread),
        }
    }

    fn connect(&self) -> io::Result<TcpStream> {
        let stream = TcpStream::connect(self.addr)?;
        stream.set_read_timeout(Some(SAFETY))?;
        Ok(stream)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.set();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Reads exactly `expected.len()` bytes and checks they are `expected`.
fn expect(stream: &mut TcpStream, expected: &[u8]) -> io::Result<()> {
    let mut got = vec![0; expected.len()];
    stream.read_exact(&mut got)?;
    assert_eq!(
        String::from_utf8_lossy(&got),
        String::from_utf8_lossy(expected)
    );
    Ok(())
}

/// Reads until the server closes and checks that was `expected`, exactly.
fn expect_then_close(stream: &mut TcpStream, expected: &[u8]) -> io::Result<()> {
    let mut got = Vec::new();
    stream.read_to_end(&mut got)?;
    assert_eq!(
        String::from_utf8_lossy(&got),
        String::from_utf8_lossy(expected)
    );
    Ok(())
}

fn simple_get(rt: Runtime) -> io::Result<()> {
    let server = Server::start(rt);
    let mut c = server.connect()?;
    c.write_all(GET)?;
    expect(
        &mut c,
        b"HTTP/1.1 200 OK\r\nContent-Length: 13\r\nContent-Type: text/plain\r\n\r\nHello, World!",
    )
}

fn keep_alive_serves_many_requests_on_one_connection(rt: Runtime) -> io::Result<()> {
    let server = Server::start(rt);
    let mut c = server.connect()?;
    for _ in 0..10 {
        c.write_all(GET)?;
        expect(&mut c, OK)?;
    }
    c.write_all(b"GET / HTTP/1.1\r\nConnection: close\r\n\r\n")?;
    expect_then_close(&mut c, OK_CLOSE)
}

fn a_hundred_pipelined_requests_are_answered_in_order(rt: Runtime) -> io::Result<()> {
    let server = Server::start(rt);
    let mut c = server.connect()?;
    // Every third a HEAD, whose reply has no body: the order shows.
    let (mut requests, mut expected) = (Vec::new(), Vec::new());
    for i in 0..100 {
        let method = if i % 3 == 0 { "HEAD" } else { "GET" };
        write!(requests, "{method} /{i} HTTP/1.1\r\nHost: test\r\n\r\n")?;
        expected.extend_from_slice(if i % 3 == 0 { &OK[..HEAD_ONLY] } else { OK });
    }
    requests.extend_from_slice(b"GET / HTTP/1.1\r\nConnection: close\r\n\r\n");
    expected.extend_from_slice(OK_CLOSE);
    c.write_all(&requests)?;
    expect_then_close(&mut c, &expected)
}

fn a_request_split_byte_by_byte_is_answered_once(rt: Runtime) -> io::Result<()> {
    let server = Server::start(rt);
    let mut c = server.connect()?;
    // Each byte its own segment, so the server sees many partial heads.
    c.set_nodelay(true)?;
    let request = b"POST /slow HTTP/1.1\r\nHost: test\r\nContent-Length: 5\r\n\r\nhello";
    for &b in request {
        c.write_all(&[b])?;
    }
    expect(&mut c, OK)?;
    c.write_all(b"GET / HTTP/1.1\r\nConnection: close\r\n\r\n")?;
    expect_then_close(&mut c, OK_CLOSE)
}

fn a_body_is_skipped_not_parsed(rt: Runtime) -> io::Result<()> {
    let server = Server::start(rt);
    let mut c = server.connect()?;
    // The body looks like two requests; counted by Content-Length, it is
    // one body, sent in pieces across writes.
    let body = b"GET /a HTTP/1.1\r\n\r\nGET /b HTTP/1.1\r\n\r\n";
    write!(
        c,
        "POST / HTTP/1.1\r\nContent-Length: {}\r\n\r\n",
        body.len()
    )?;
    c.write_all(&body[..10])?;
    c.write_all(&body[10..])?;
    c.write_all(b"GET / HTTP/1.1\r\nConnection: close\r\n\r\n")?;
    expect_then_close(&mut c, &[OK, OK_CLOSE].concat())
}

fn connection_close_is_honoured(rt: Runtime) -> io::Result<()> {
    let server = Server::start(rt);
    let mut c = server.connect()?;
    c.write_all(b"GET / HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n")?;
    expect_then_close(&mut c, OK_CLOSE)
}

fn http_1_0_closes_unless_asked_to_keep_alive(rt: Runtime) -> io::Result<()> {
    let server = Server::start(rt);
    let mut c = server.connect()?;
    c.write_all(b"GET / HTTP/1.0\r\n\r\n")?;
    expect_then_close(&mut c, OK_CLOSE)?;
    let mut c = server.connect()?;
    for _ in 0..3 {
        c.write_all(b"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")?;
        expect(&mut c, OK_KEEP_ALIVE_1_0)?;
    }
    c.write_all(b"GET / HTTP/1.0\r\n\r\n")?;
    expect_then_close(&mut c, OK_CLOSE)
}

fn a_malformed_request_gets_400_and_close(rt: Runtime) -> io::Result<()> {
    let server = Server::start(rt);
    let mut c = server.connect()?;
    c.write_all(b"GET / HTTP/1.1\r\n\r\nNOT HTTP AT ALL\r\n\r\nGET / HTTP/1.1\r\n\r\n")?;
    // The good request before it is answered; nothing after it is.
    expect_then_close(&mut c, &[OK, BAD_REQUEST].concat())
}

fn oversized_headers_get_400_and_close(rt: Runtime) -> io::Result<()> {
    let server = Server::start(rt);
    let mut c = server.connect()?;
    let mut request = b"GET / HTTP/1.1\r\n".to_vec();
    for i in 0..1000 {
        write!(request, "X-Padding-{i}: {}\r\n", "p".repeat(20))?;
    }
    request.extend_from_slice(b"\r\n");
    assert!(request.len() > 4 * http::MAX_HEAD);
    // The server answers before reading it all, then reads the rest and
    // drops it (so closing sends no reset that could eat the 400).
    c.write_all(&request)?;
    c.shutdown(Shutdown::Write)?;
    expect_then_close(&mut c, BAD_REQUEST)
}

fn many_clients_at_once_each_get_their_replies(rt: Runtime) -> io::Result<()> {
    let server = Server::start(rt);
    let clients: Vec<_> = (0..20)
        .map(|_| {
            let mut c = server.connect()?;
            Ok(std::thread::spawn(move || -> io::Result<()> {
                for _ in 0..20 {
                    c.write_all(GET)?;
                    expect(&mut c, OK)?;
                }
                Ok(())
            }))
        })
        .collect::<io::Result<_>>()?;
    for client in clients {
        client.join().unwrap()?;
    }
    Ok(())
}

/// Each scenario as a test on each runtime: `on_ioloop::simple_get`, ...
macro_rules! on_both {
    ($($scenario:ident),* $(,)?) => {
        mod on_ioloop {
            $(#[test]
            fn $scenario() -> std::io::Result<()> {
                super::$scenario(super::Runtime::Ioloop)
            })*
        }
        mod on_tokio {
            $(#[test]
            fn $scenario() -> std::io::Result<()> {
                super::$scenario(super::Runtime::Tokio)
            })*
        }
    };
}

on_both!(
    simple_get,
    keep_alive_serves_many_requests_on_one_connection,
    a_hundred_pipelined_requests_are_answered_in_order,
    a_request_split_byte_by_byte_is_answered_once,
    a_body_is_skipped_not_parsed,
    connection_close_is_honoured,
    http_1_0_closes_unless_asked_to_keep_alive,
    a_malformed_request_gets_400_and_close,
    oversized_headers_get_400_and_close,
    many_clients_at_once_each_get_their_replies,
);
