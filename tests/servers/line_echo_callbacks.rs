//! The `line_echo_callbacks` example's handler (the lesson's
//! `LineEchoServer` on `ioloop::callbacks`), against real clients on
//! 127.0.0.1: the scenarios of tests/servers/line_echo.rs, so the two
//! servers are held to the same protocol.

#[path = "../../examples/line_echo_callbacks/handler.rs"]
mod handler;

use std::future::{Future, poll_fn};
use std::io::{self, Write};
use std::net::{Shutdown, SocketAddr};
use std::pin::pin;
use std::sync::{Arc, Mutex, mpsc};
use std::task::Poll;
use std::time::Duration;

use handler::Config;
use ioloop::callbacks::Disconnect;
use line_client::Client;
use testkit::{line_client, util};
use util::within;

/// Safety net for blocking reads; never what a test measures.
const SAFETY: Duration = Duration::from_secs(20);

/// A callback line echo server on its own thread and runtime, stopped on
/// drop.
struct Server {
    addr: SocketAddr,
    /// Every connection event, in order: `connected`, or how it ended.
    events: Arc<Mutex<Vec<String>>>,
    stop: Arc<util::parking::Signal>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Server {
    fn start(config: Config) -> Server {
        let events = Arc::new(Mutex::new(Vec::new()));
        let stop = util::signal();
        let (tx, rx) = mpsc::channel();
        let (e, s) = (events.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            ioloop::block_on(async move {
                let listener = ioloop::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
                tx.send(listener.local_addr().unwrap()).unwrap();
                let on_event = move |_, end: Option<&Disconnect>| {
                    let event = end.map_or("connected".to_string(), |end| format!("{end:?}"));
                    e.lock().unwrap().push(event);
                };
                let mut serve = pin!(handler::serve(listener, config, on_event));
                let mut stop = pin!(s.wait());
                poll_fn(|cx| {
                    if let Poll::Ready(result) = serve.as_mut().poll(cx) {
                        result.unwrap();
                        return Poll::Ready(());
                    }
                    stop.as_mut().poll(cx)
                })
                .await;
            });
        });
        let addr = rx.recv_timeout(SAFETY).expect("server started");
        Server {
            addr,
            events,
            stop,
            thread: Some(thread),
        }
    }

    fn connect(&self) -> io::Result<Client> {
        Client::connect(self.addr, SAFETY)
    }

    /// Waits until `n` connections have ended, and returns how.
    fn ends(&self, n: usize) -> Vec<String> {
        let events = self.events.clone();
        within(SAFETY, move || {
            loop {
                let ends: Vec<String> = (events.lock().unwrap().iter())
                    .filter(|e| *e != "connected")
                    .cloned()
                    .collect();
                if ends.len() >= n {
                    return ends;
                }
                std::thread::sleep(Duration::from_millis(1));
            }
        })
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

#[test]
fn greets_and_echoes_lines() -> io::Result<()> {
    let server = Server::start(Config::default());
    let mut c = server.connect()?;
    c.send(b"hello world\n")?;
    assert_eq!(c.line()?, "[echo] hello world");
    c.send(b"crlf line\r\n\n")?;
    assert_eq!(c.line()?, "[echo] crlf line");
    assert_eq!(c.line()?, "[echo] ");
    drop(c);
    assert_eq!(server.ends(1), ["PeerClosed"]);
    assert_eq!(server.events.lock().unwrap()[0], "connected");
    Ok(())
}

#[test]
fn a_line_written_one_byte_at_a_time_comes_back_whole() -> io::Result<()> {
    let server = Server::start(Config::default());
    let mut c = server.connect()?;
    for &b in b"slowly, one byte at a time\n" {
        c.send(&[b])?;
        std::thread::sleep(Duration::from_millis(2));
    }
    assert_eq!(c.line()?, "[echo] slowly, one byte at a time");
    Ok(())
}

#[test]
fn ten_thousand_pipelined_lines_get_every_reply_in_order() -> io::Result<()> {
    let server = Server::start(Config::default());
    let mut c = server.connect()?;
    let mut batch = Vec::new();
    for i in 0..10_000 {
        writeln!(batch, "line {i}")?;
    }
    // Written from another thread: the replies must be read concurrently,
    // or both sides' socket buffers fill and everyone waits.
    let mut w = c.stream.try_clone()?;
    let writer = std::thread::spawn(move || w.write_all(&batch));
    for i in 0..10_000 {
        assert_eq!(c.line()?, format!("[echo] line {i}"));
    }
    writer.join().unwrap()?;
    Ok(())
}

#[test]
fn a_line_at_the_limit_is_echoed_and_one_byte_over_gets_err_and_close() -> io::Result<()> {
    let config = Config {
        max_line: 1024,
        ..Config::default()
    };
    let server = Server::start(config);
    let mut c = server.connect()?;
    // Then the end of the stream: the server closed after the ERR line.
    line_client::check_line_limit_of_1024(&mut c)?;
    assert_eq!(server.ends(1), ["InbufFull"]);
    Ok(())
}

#[test]
fn the_limit_counts_a_carriage_return_as_line_echo_does() -> io::Result<()> {
    let config = Config {
        max_line: 8,
        ..Config::default()
    };
    let server = Server::start(config);
    let mut c = server.connect()?;
    c.send(b"1234567\r\n")?; // 8 bytes before the `\n`
    assert_eq!(c.line()?, "[echo] 1234567");
    c.send(b"12345678\r\n")?; // 9
    assert_eq!(c.line()?, "ERR line longer than 8 bytes");
    assert!(c.rest()?.is_empty());
    Ok(())
}

#[test]
fn an_endless_line_is_cut_off_at_the_limit() -> io::Result<()> {
    let config = Config {
        max_line: 4096,
        ..Config::default()
    };
    let server = Server::start(config);
    let mut c = server.connect()?;
    // Far more than the limit, never a newline: the server must answer ERR
    // and close, not buffer it all.
    let mut w = c.stream.try_clone()?;
    let flood = std::thread::spawn(move || {
        let chunk = vec![b'x'; 64 * 1024];
        for _ in 0..64 {
            if w.write_all(&chunk).is_err() {
                break; // the server closed on us: expected
            }
        }
    });
    assert_eq!(c.line()?, "ERR line longer than 4096 bytes");
    flood.join().unwrap();
    assert_eq!(server.ends(1), ["InbufFull"]);
    Ok(())
}

#[test]
fn a_silent_connection_is_closed_after_the_idle_timeout() -> io::Result<()> {
    let config = Config {
        idle_timeout: Duration::from_millis(200),
        ..Config::default()
    };
    let server = Server::start(config);
    let mut c = server.connect()?;
    c.send(b"one\n")?;
    assert_eq!(c.line()?, "[echo] one");
    // Say nothing more: the server closes (EOF), well before SAFETY.
    assert!(c.rest()?.is_empty());
    assert_eq!(server.ends(1), ["Idle"]);
    Ok(())
}

#[test]
fn after_a_half_close_the_client_still_receives_every_reply() -> io::Result<()> {
    let server = Server::start(Config::default());
    let mut c = server.connect()?;
    c.send(b"a\nb\nc")?; // the last line unterminated: EOF ends it
    c.stream.shutdown(Shutdown::Write)?;
    assert_eq!(c.line()?, "[echo] a");
    assert_eq!(c.line()?, "[echo] b");
    assert_eq!(c.line()?, "[echo] c");
    assert!(c.rest()?.is_empty());
    assert_eq!(server.ends(1), ["PeerClosed"]);
    Ok(())
}

#[test]
fn a_reset_client_fails_alone_and_the_server_keeps_serving() -> io::Result<()> {
    let server = Server::start(Config::default());
    let mut a = server.connect()?;
    let mut b = server.connect()?;
    a.send(b"half a li")?;
    // SO_LINGER 0: close sends RST instead of FIN.
    socket2::SockRef::from(&a.stream).set_linger(Some(Duration::ZERO))?;
    drop(a);
    let ends = server.ends(1);
    assert!(ends[0].starts_with("Failed"), "{ends:?}");
    b.send(b"still here\n")?;
    assert_eq!(b.line()?, "[echo] still here");
    let mut c = server.connect()?;
    c.send(b"new client\n")?;
    assert_eq!(c.line()?, "[echo] new client");
    Ok(())
}

#[test]
fn a_thousand_concurrent_clients_each_get_their_echoes() -> io::Result<()> {
    const CLIENTS: usize = 1000;
    const LINES: usize = 5;
    if !util::fd_limit_at_least(2 * CLIENTS as u64 + 200) {
        eprintln!(
            "skipped: RLIMIT_NOFILE cannot be raised to {}",
            2 * CLIENTS + 200
        );
        return Ok(());
    }
    let server = Server::start(Config::default());
    let addr = server.addr;
    let echoed = within(Duration::from_secs(120), move || {
        line_client::many_clients(addr, CLIENTS, LINES)
    })?;
    assert_eq!(echoed, CLIENTS * LINES);
    assert_eq!(server.ends(CLIENTS).len(), CLIENTS);
    Ok(())
}
