//! The line echo protocol as async fn handlers: the lesson's
//! `LineEchoServer`, written as `await` code instead of callbacks.
//!
//! `on_connect` became the greeting at the top of [`handle`], `on_data`'s
//! inbuf-scanning loop became `reader.read_line().await`, `queue_send`
//! became `writer.write`, and the outbuf's WRITE-interest dance became
//! `writer.drain().await`. `last_seen` became a `timeout` around the read.
//!
//! Shared by `main.rs` and by the tests (tests/line_echo.rs includes this
//! file), so the tests exercise exactly what the example runs.

use std::io;
use std::net::SocketAddr;
use std::time::Duration;

use ioloop::io::{StreamReader, StreamWriter};
use ioloop::net::{TcpListener, TcpStream};
use ioloop::time::timeout;

/// The server's settings.
#[derive(Clone, Copy, Debug)]
pub struct Config {
    /// Longest accepted line, in bytes before the `\n`.
    pub max_line: usize,
    /// A connection silent this long is closed.
    pub idle_timeout: Duration,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            max_line: 65_536,
            idle_timeout: Duration::from_secs(30),
        }
    }
}

/// Why a connection ended.
#[derive(Debug)]
pub enum End {
    /// The client closed its side.
    Closed,
    /// The client was silent for `idle_timeout`.
    Idle,
    /// The client sent a line over `max_line`; it got an `ERR` line.
    LineTooLong,
    /// The connection failed (reset, broken pipe, ...).
    Failed(io::Error),
}

/// Accepts connections forever, one task per connection. `on_end` is told
/// how each connection ended (the example logs it; tests count it).
pub async fn serve(
    listener: TcpListener,
    config: Config,
    on_event: impl Fn(SocketAddr, Option<&End>) + Clone + Send + 'static,
) -> io::Result<()> {
    loop {
        let (stream, peer) = listener.accept().await?;
        on_event(peer, None);
        let on_event = on_event.clone();
        // Detached: the task owns its connection; nothing awaits it.
        drop(ioloop::spawn(async move {
            let end = handle(stream, config).await;
            on_event(peer, Some(&end));
        }));
    }
}

/// Serves one connection: greet, then echo each line until the client
/// leaves, goes silent, or sends a line that is too long.
pub async fn handle(stream: TcpStream, config: Config) -> End {
    match converse(&stream, config).await {
        Ok(end) => end,
        Err(err) => End::Failed(err),
    }
}

async fn converse(stream: &TcpStream, config: Config) -> io::Result<End> {
    let mut reader = StreamReader::new(stream);
    reader.set_max_line_length(config.max_line);
    let mut writer = StreamWriter::new(stream);
    writer.write(b"Hello!\n");
    writer.drain().await?;
    // One reply buffer per connection, reused: no allocation per line.
    let mut reply = Vec::new();
    loop {
        let line = match timeout(config.idle_timeout, reader.read_line()).await {
            Err(_elapsed) => {
                writer.close().await?;
                return Ok(End::Idle);
            }
            Ok(Ok(Some(line))) => line,
            Ok(Ok(None)) => {
                writer.close().await?;
                return Ok(End::Closed);
            }
            Ok(Err(err)) if err.kind() == io::ErrorKind::InvalidData => {
                writer
                    .write(format!("ERR line longer than {} bytes\n", config.max_line).as_bytes());
                writer.close().await?;
                return Ok(End::LineTooLong);
            }
            Ok(Err(err)) => return Err(err),
        };
        reply.clear();
        reply.extend_from_slice(b"[echo] ");
        reply.extend_from_slice(line);
        reply.push(b'\n');
        writer.write(&reply);
        writer.drain().await?;
    }
}
