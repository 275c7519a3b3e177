//! The callback layer itself (`ioloop::callbacks`), on real sockets: the
//! order of the callbacks, partial writes kept in the outbuf, close after
//! the outbuf is sent, the inbuf bound, reading paused above the outbuf's
//! high-water mark, and a panicking handler.
//!
//! Each test runs server and client on one runtime: the server side is
//! `serve_connection` on an accepted stream, so awaiting its task means
//! `on_disconnect` has run.

use std::io;
use std::net::Shutdown;
use std::sync::{Arc, Mutex};

use futures_util::{AsyncReadExt, AsyncWriteExt};
use ioloop::callbacks::{Config, Connection, Disconnect, Handler, serve, serve_connection};
use ioloop::io::StreamReader;
use ioloop::net::{TcpListener, TcpStream};
use net_run::run;
use testkit::net_run;

/// What a handler saw, shared with the test.
type Log = Arc<Mutex<Vec<String>>>;

/// A connected pair: the client, and the server side's task running
/// `handler` with `config`.
async fn pair<H: Handler + Send + 'static>(
    config: Config,
    handler: H,
) -> io::Result<(TcpStream, ioloop::JoinHandle<()>)> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let client = TcpStream::connect(listener.local_addr()?).await?;
    let (stream, _) = listener.accept().await?;
    Ok((
        client,
        ioloop::spawn(serve_connection(stream, config, handler)),
    ))
}

/// Logs every callback; echoes what it gets.
struct Recorder(Log);

impl Handler for Recorder {
    fn on_connect(&mut self, _conn: &mut Connection) {
        self.0.lock().unwrap().push("connect".into());
    }
    fn on_data(&mut self, conn: &mut Connection) {
        let data = conn.inbuf().to_vec();
        conn.consume(data.len());
        conn.queue_send(&data);
        self.0.lock().unwrap().push("data".into());
    }
    fn on_eof(&mut self, conn: &mut Connection) {
        self.0
            .lock()
            .unwrap()
            .push(format!("eof, {} left", conn.inbuf().len()));
    }
    fn on_disconnect(&mut self, conn: &Connection, reason: Disconnect) {
        let outbuf = conn.outbuf().len();
        (self.0.lock().unwrap()).push(format!("disconnect {reason:?}, {outbuf} unsent"));
    }
}

#[test]
fn callbacks_come_in_order_and_end_with_the_reason() -> io::Result<()> {
    run(|| async {
        let log = Log::default();
        let (mut client, server) = pair(Config::default(), Recorder(log.clone())).await?;
        client.write_all(b"ping").await?;
        client.shutdown(Shutdown::Write)?;
        let mut echoed = Vec::new();
        client.read_to_end(&mut echoed).await?;
        server.await.unwrap();
        assert_eq!(echoed, b"ping");
        let log = log.lock().unwrap().clone();
        // "ping" may come in one read or several: one `data` each.
        let (first, last) = (&log[0], &log[log.len() - 2..]);
        assert_eq!(first, "connect");
        assert_eq!(last, ["eof, 0 left", "disconnect PeerClosed, 0 unsent"]);
        assert!(log[1..log.len() - 2].iter().all(|e| e == "data"), "{log:?}");
        Ok(())
    })
}

/// On connect, queues `len` bytes of a pattern and closes.
struct Firehose(usize);

impl Handler for Firehose {
    fn on_connect(&mut self, conn: &mut Connection) {
        let bytes: Vec<u8> = (0..self.0).map(|i| (i % 251) as u8).collect();
        conn.queue_send(&bytes);
        conn.close();
    }
    fn on_data(&mut self, _conn: &mut Connection) {}
}

#[test]
fn a_reply_larger_than_the_socket_buffers_arrives_whole_before_the_close() -> io::Result<()> {
    run(|| async {
        const LEN: usize = 8 << 20;
        let (mut client, server) = pair(Config::default(), Firehose(LEN)).await?;
        // The kernel takes a few hundred KiB at a time: the rest waits in
        // the outbuf across many partial writes, and only then comes EOF.
        let mut got = Vec::new();
        client.read_to_end(&mut got).await?;
        server.await.unwrap();
        assert_eq!(got.len(), LEN);
        assert!(got.iter().enumerate().all(|(i, &b)| b == (i % 251) as u8));
        Ok(())
    })
}

/// Answers each `\n`-terminated request with `reply_len` bytes, and logs
/// how much was still queued each time it was called.
struct Amplifier {
    reply_len: usize,
    queued_at_entry: Log,
}

impl Handler for Amplifier {
    fn on_data(&mut self, conn: &mut Connection) {
        (self.queued_at_entry.lock().unwrap()).push(conn.outbuf().len().to_string());
        let requests = conn.inbuf().iter().filter(|&&b| b == b'\n').count();
        conn.consume(conn.inbuf().len());
        for _ in 0..requests {
            conn.queue_send(&vec![b'r'; self.reply_len]);
        }
    }
}

#[test]
fn reading_pauses_while_the_outbuf_is_above_its_high_water_mark() -> io::Result<()> {
    run(|| async {
        const REQUESTS: usize = 10_000;
        const REPLY: usize = 1024;
        let config = Config {
            write_high_water: 32 * 1024,
            ..Config::default()
        };
        let queued = Log::default();
        let handler = Amplifier {
            reply_len: REPLY,
            queued_at_entry: queued.clone(),
        };
        let (mut client, server) = pair(config, handler).await?;
        // 20 KB of requests, 10 MB of replies, nothing read until all the
        // requests are sent.
        client.write_all(&b"x\n".repeat(REQUESTS)).await?;
        client.shutdown(Shutdown::Write)?;
        let mut replies = Vec::new();
        client.read_to_end(&mut replies).await?;
        server.await.unwrap();
        assert_eq!(replies.len(), REQUESTS * REPLY);
        // A read (and so `on_data`) happens only at or below the mark.
        let queued = queued.lock().unwrap();
        assert!(
            queued
                .iter()
                .all(|q| q.parse::<usize>().unwrap() <= 32 * 1024),
            "{queued:?}"
        );
        Ok(())
    })
}

/// Never consumes anything; logs the inbuf's length on overflow and at the
/// end.
struct Hoarder(Log);

impl Handler for Hoarder {
    fn on_data(&mut self, _conn: &mut Connection) {}
    fn on_inbuf_full(&mut self, conn: &mut Connection) {
        (self.0.lock().unwrap()).push(format!("full at {}", conn.inbuf().len()));
        conn.queue_send(b"too much\n");
    }
    fn on_disconnect(&mut self, conn: &Connection, reason: Disconnect) {
        (self.0.lock().unwrap()).push(format!("{reason:?} at {}", conn.inbuf().len()));
    }
}

#[test]
fn a_handler_that_never_consumes_is_closed_one_byte_past_the_limit() -> io::Result<()> {
    run(|| async {
        let log = Log::default();
        let config = Config {
            max_inbuf: 100,
            ..Config::default()
        };
        let (client, server) = pair(config, Hoarder(log.clone())).await?;
        // A megabyte offered; the server holds 101 bytes of it at most.
        let flood = ioloop::spawn(async move {
            let _ = (&client).write_all(&[b'x'; 1 << 20]).await; // cut off: expected
            client
        });
        server.await.unwrap();
        assert_eq!(*log.lock().unwrap(), ["full at 101", "InbufFull at 101"]);
        let client = flood.await.unwrap();
        let mut reader = StreamReader::new(&client);
        assert_eq!(reader.read_line().await?, Some(&b"too much"[..]));
        Ok(())
    })
}

/// Echoes lines; an overlong one is answered `too long` and skipped up
/// to its `\n`, and the connection goes on.
#[derive(Default)]
struct Skipper {
    skipping: bool,
    full_at: Log,
}

impl Handler for Skipper {
    fn on_data(&mut self, conn: &mut Connection) {
        while let Some(end) = conn.inbuf().iter().position(|&b| b == b'\n') {
            if !std::mem::take(&mut self.skipping) {
                let line = conn.inbuf()[..=end].to_vec();
                conn.queue_send(&line);
            }
            conn.consume(end + 1);
        }
        if self.skipping {
            conn.consume(conn.inbuf().len());
        }
    }
    fn on_inbuf_full(&mut self, conn: &mut Connection) {
        (self.full_at.lock().unwrap()).push(conn.inbuf().len().to_string());
        conn.consume(conn.inbuf().len());
        conn.queue_send(b"too long\n");
        self.skipping = true;
    }
}

#[test]
fn a_handler_can_skip_an_overlong_message_and_go_on() -> io::Result<()> {
    run(|| async {
        let config = Config {
            max_inbuf: 100,
            ..Config::default()
        };
        let skipper = Skipper::default();
        let full_at = skipper.full_at.clone();
        let (mut client, server) = pair(config, skipper).await?;
        client.write_all(&[b'x'; 1000]).await?;
        client.write_all(b"\nok\n").await?;
        client.shutdown(Shutdown::Write)?;
        let mut replies = String::new();
        client.read_to_string(&mut replies).await?;
        server.await.unwrap();
        assert_eq!(replies, "too long\nok\n");
        assert_eq!(*full_at.lock().unwrap(), ["101"]);
        Ok(())
    })
}

/// Panics on `boom`, echoes anything else.
struct Fragile;

impl Handler for Fragile {
    fn on_data(&mut self, conn: &mut Connection) {
        assert!(
            !conn.inbuf().starts_with(b"boom"),
            "boom, as the test asked"
        );
        let data = conn.inbuf().to_vec();
        conn.consume(data.len());
        conn.queue_send(&data);
    }
}

#[test]
fn a_panicking_handler_ends_its_own_connection_only() -> io::Result<()> {
    run(|| async {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        drop(ioloop::spawn(serve(listener, || Fragile)));
        let mut doomed = TcpStream::connect(addr).await?;
        let mut fine = TcpStream::connect(addr).await?;
        doomed.write_all(b"boom").await?;
        // The task died and dropped its socket: end of stream, or a reset.
        let mut rest = Vec::new();
        let _ = doomed.read_to_end(&mut rest).await;
        assert!(rest.is_empty());
        fine.write_all(b"still here").await?;
        let mut echo = [0; 10];
        fine.read_exact(&mut echo).await?;
        assert_eq!(&echo, b"still here");
        Ok(())
    })
}
