//! The raw mio loop the benchmarks measure ioloop against
//! (examples/mio_reference): its plain echo does `tcp_echo`'s work and its
//! line mode speaks `line_echo`'s protocol, byte for byte, or the
//! comparison (BENCHMARKS.md, "like for like") would mean nothing.

#[path = "../../examples/mio_reference/conn.rs"]
mod conn;
#[path = "../../examples/mio_reference/server.rs"]
mod server;

use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use conn::Protocol;
use testkit::line_client::{self, Client};

/// Safety net for blocking reads; never what a test measures.
const SAFETY: Duration = Duration::from_secs(20);

/// The server on its own thread, serving until the test's process ends.
fn start(protocol: Protocol) -> SocketAddr {
    let listener = mio::net::TcpListener::bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || server::serve(listener, protocol));
    addr
}

fn connect(addr: SocketAddr) -> io::Result<TcpStream> {
    let stream = TcpStream::connect(addr)?;
    stream.set_read_timeout(Some(SAFETY))?;
    Ok(stream)
}

#[test]
fn the_plain_echo_sends_back_every_byte_with_no_greeting() -> io::Result<()> {
    let addr = start(Protocol::Plain);
    let mut c = connect(addr)?;
    for message in [&b"x"[..], b"hello\n", b"no newline", &[0u8, 255, 10, 13]] {
        c.write_all(message)?;
        let mut back = vec![0; message.len()];
        c.read_exact(&mut back)?;
        assert_eq!(back, message);
    }
    // The end: the server echoes what it has, then closes.
    c.write_all(b"last")?;
    c.shutdown(Shutdown::Write)?;
    let mut rest = Vec::new();
    c.read_to_end(&mut rest)?;
    assert_eq!(rest, b"last");
    Ok(())
}

/// 8 MiB sent before any is read back: the kernel refuses echoes, reading
/// pauses, and the writable edge resumes it. Every byte comes back, in
/// order, and the server stays responsive to another client throughout.
#[test]
fn the_plain_echo_loses_nothing_when_the_kernel_refuses_echoes() -> io::Result<()> {
    let addr = start(Protocol::Plain);
    let c = connect(addr)?;
    let total = 8 << 20;
    let mut writer = c.try_clone()?;
    let sender = std::thread::spawn(move || -> io::Result<()> {
        let chunk: Vec<u8> = (0..64 * 1024).map(|i| (i % 251) as u8).collect();
        for _ in 0..total / chunk.len() {
            writer.write_all(&chunk)?;
        }
        writer.shutdown(Shutdown::Write)
    });
    // Read nothing until the echoes have filled both directions' buffers.
    std::thread::sleep(Duration::from_millis(200));
    let mut other = connect(addr)?;
    other.write_all(b"ping")?;
    let mut pong = [0; 4];
    other.read_exact(&mut pong)?;
    assert_eq!(&pong, b"ping", "another connection waited on a full one");

    let mut reader = c;
    let mut got = 0usize;
    let mut buf = vec![0; 64 * 1024];
    loop {
        let n = reader.read(&mut buf)?;
        if n == 0 {
            break;
        }
        for (i, byte) in buf[..n].iter().enumerate() {
            assert_eq!(
                *byte,
                ((got + i) % (64 * 1024) % 251) as u8,
                "byte {}",
                got + i
            );
        }
        got += n;
    }
    sender.join().unwrap()?;
    assert_eq!(got, total);
    Ok(())
}

#[test]
fn the_line_mode_speaks_line_echo_s_protocol() -> io::Result<()> {
    let addr = start(Protocol::Line {
        max_line: 1024,
        idle: None,
    });
    let mut c = Client::connect(addr, SAFETY)?;
    line_client::check_echoes(&mut c)?;
    // The line limit, at the limit and one byte over: as line_echo.
    line_client::check_line_limit_of_1024(&mut c)?;
    // Many clients at once, as the load generator drives it.
    assert_eq!(line_client::many_clients(addr, 20, 50)?, 20 * 50);
    Ok(())
}

/// The idle timeout: a silent client is closed, never before its timeout;
/// one that sends part of a line now and then is not, whatever the
/// deadlines' heap held for its key before.
#[test]
fn the_line_mode_closes_a_silent_client_after_its_idle_timeout() -> io::Result<()> {
    let idle = Duration::from_secs(1);
    let addr = start(Protocol::Line {
        max_line: 1024,
        idle: Some(idle),
    });
    // Connections come and go first, so keys are reused with deadlines of
    // their earlier owners still in the heap.
    for _ in 0..3 {
        drop(Client::connect(addr, SAFETY)?);
    }
    let began = Instant::now();
    let mut silent = Client::connect(addr, SAFETY)?;
    let mut talker = Client::connect(addr, SAFETY)?;
    // The talker sends a byte every 20 ms, never silent for its timeout
    // (unless this thread stalls for 980 ms).
    let mut bytes = 0;
    while began.elapsed() < idle * 3 / 2 {
        talker.send(b"x")?;
        bytes += 1;
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(silent.rest()?.is_empty(), "a silent client was sent bytes");
    assert!(began.elapsed() >= idle, "closed before its idle timeout");
    talker.send(b"\n")?;
    assert_eq!(talker.line()?, format!("[echo] {}", "x".repeat(bytes)));
    Ok(())
}

#[test]
fn the_http_mode_answers_pipelined_requests_with_hello() -> io::Result<()> {
    let addr = start(Protocol::Http);
    let mut c = connect(addr)?;
    let request = "GET / HTTP/1.1\r\nHost: test\r\n\r\n";
    c.write_all(request.repeat(3).as_bytes())?;
    let mut got = Vec::new();
    let mut buf = [0; 4096];
    while got.windows(13).filter(|w| w == b"Hello, World!").count() < 3 {
        let n = c.read(&mut buf)?;
        assert!(n > 0, "closed after {:?}", String::from_utf8_lossy(&got));
        got.extend_from_slice(&buf[..n]);
    }
    let text = String::from_utf8(got).expect("a text response");
    assert_eq!(text.matches("HTTP/1.1 200 OK\r\n").count(), 3, "{text}");
    assert!(text.ends_with("Hello, World!"), "{text}");
    Ok(())
}
