//! The line echo protocol on tokio (issue 5's twin of
//! examples/line_echo/handler.rs), written the way a tokio user would:
//! a `BufReader` and `read_until` for lines, `write_all` for replies,
//! one `time::Sleep` per connection, reset for each read, for idle
//! clients, a `watch` channel as the stop notice
//! and a `JoinSet` holding the connection tasks.
//!
//! The same protocol and shape as the ioloop version: greet with `Hello!`,
//! answer each line `X` with `[echo] X` (a `\r` before the `\n` dropped),
//! refuse a line over `max_line` with an `ERR` line and a close, close a
//! connection silent for `idle_timeout`, and on stop let each connection
//! finish its current line.
//!
//! Shared by `main.rs` and by the tests (testkit/src/lib.rs includes it).

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::pin;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinSet;
use tokio::time::{Instant, sleep, timeout};

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
    /// The server is stopping; the connection finished its line first.
    Stopped,
    /// The connection failed (reset, broken pipe, ...).
    Failed(io::Error),
}

/// Accepts connections, one task per connection, until `shutdown`
/// completes; then stops accepting, tells every connection to finish its
/// current line and close, and waits up to `grace` for them. Returns how
/// many were still busy then (they are aborted).
///
/// `on_event` hears of each connection (`None`) and of how it ended.
pub async fn serve(
    listener: TcpListener,
    config: Config,
    on_event: impl Fn(SocketAddr, Option<&End>) + Clone + Send + 'static,
    shutdown: impl Future<Output = ()>,
    grace: Duration,
) -> usize {
    let (stop, stop_rx) = watch::channel(false);
    // Shared by every connection, as on ioloop.
    let config = Arc::new(config);
    let mut connections = JoinSet::new();
    let mut shutdown = pin!(shutdown);
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let (stream, peer) = match accepted {
                    Ok(accepted) => accepted,
                    Err(err) => {
                        // tokio hands every accept error to the caller,
                        // EMFILE included; retrying at once would spin.
                        eprintln!("accept: {err}");
                        tokio::time::sleep(Duration::from_millis(100)).await;
                        continue;
                    }
                };
                on_event(peer, None);
                let (on_event, stop) = (on_event.clone(), stop_rx.clone());
                connections.spawn(connection(stream, peer, config.clone(), stop, on_event));
            }
            // Reap finished connections, so the set holds live ones only.
            Some(_) = connections.join_next() => {}
            () = &mut shutdown => break,
        }
    }
    drop(listener);
    // Cannot fail: `stop_rx` is still alive.
    let _ = stop.send(true);
    let all_done = async { while connections.join_next().await.is_some() {} };
    // Elapsed: the connections still busy are counted, and aborted on drop.
    let _ = timeout(grace, all_done).await;
    connections.len()
}

/// One connection's task: [`handle`] it, then tell `on_event` how it
/// ended. Plain functions returning `async move` blocks, which lend what
/// they own by reference, as on ioloop (its handler.rs says why: an `async
/// fn` keeps each argument twice, per connection).
#[allow(
    clippy::manual_async_fn,
    reason = "an async fn would keep each argument twice, per connection"
)]
pub fn connection(
    mut stream: TcpStream,
    peer: SocketAddr,
    config: Arc<Config>,
    mut stop: watch::Receiver<bool>,
    on_event: impl Fn(SocketAddr, Option<&End>),
) -> impl Future<Output = ()> {
    async move {
        let end = handle(&mut stream, &config, &mut stop).await;
        on_event(peer, Some(&end));
    }
}

/// Serves one connection: greet, then echo each line until the client
/// leaves, goes silent, sends a line that is too long, or the server stops.
///
/// A client that goes away before sending a single byte (a port probe)
/// ends normally, as [`End::Closed`], as on ioloop.
#[allow(
    clippy::manual_async_fn,
    reason = "an async fn would keep each argument twice, per connection"
)]
pub fn handle<'a>(
    stream: &'a mut TcpStream,
    config: &'a Config,
    stop: &'a mut watch::Receiver<bool>,
) -> impl Future<Output = End> + 'a {
    async move {
        let mut heard = false;
        match converse(stream, config, stop, &mut heard).await {
            Ok(end) => end,
            Err(err)
                if !heard
                    && matches!(
                        err.kind(),
                        io::ErrorKind::ConnectionReset
                            | io::ErrorKind::BrokenPipe
                            | io::ErrorKind::ConnectionAborted
                    ) =>
            {
                End::Closed
            }
            Err(err) => End::Failed(err),
        }
    }
}

/// The conversation; `heard` is set once the client has sent a byte.
#[allow(
    clippy::manual_async_fn,
    reason = "an async fn would keep each argument twice, per connection"
)]
fn converse<'a>(
    stream: &'a mut TcpStream,
    config: &'a Config,
    stop: &'a mut watch::Receiver<bool>,
    heard: &'a mut bool,
) -> impl Future<Output = io::Result<End>> + 'a {
    async move {
        let (reader, mut writer) = stream.split();
        let mut reader = BufReader::new(reader);
        writer.write_all(b"Hello!\n").await?;
        // Both reused for every line: no allocation per line.
        let (mut line, mut reply) = (Vec::new(), Vec::new());
        // One idle timer per connection, moved on for each read rather
        // than a `timeout` per read (the same shape as the ioloop handler).
        let mut idle = pin!(sleep(config.idle_timeout));
        loop {
            // Between lines, the stop notice ends the connection; in the middle
            // of one (bytes already read), the line is finished first.
            let between_lines = line.is_empty() && reader.buffer().is_empty();
            // A dropped sender (`has_changed` fails) means stop too, or
            // `changed()` below would return at once, forever.
            if between_lines && (*stop.borrow() || stop.has_changed().is_err()) {
                writer.shutdown().await?;
                return Ok(End::Stopped);
            }
            // The bound: `take` lets `read_until` add at most what is left of
            // `max_line + 1` bytes (the longest line and its `\n`), so an
            // endless line costs that much memory, not more.
            let mut limited = (&mut reader).take((config.max_line + 1 - line.len()) as u64);
            // A fresh idle timeout for each read: the one timer, moved on.
            idle.as_mut().reset(Instant::now() + config.idle_timeout);
            let read = tokio::select! {
                // The read first, not at random: bytes that came before the
                // stop notice are read, and their line finished.
                biased;
                read = limited.read_until(b'\n', &mut line) => read,
                () = idle.as_mut() => {
                    writer.shutdown().await?;
                    return Ok(End::Idle);
                }
                // `read_until` is cancel-safe: what it read is in `line`, and
                // the loop decides again.
                _ = stop.changed(), if between_lines => continue,
            };
            *heard |= !line.is_empty();
            let eof = read? == 0;
            let text = match line.strip_suffix(b"\n") {
                Some(text) => text.strip_suffix(b"\r").unwrap_or(text),
                None if line.len() > config.max_line => {
                    let err = format!("ERR line longer than {} bytes\n", config.max_line);
                    writer.write_all(err.as_bytes()).await?;
                    writer.shutdown().await?;
                    return Ok(End::LineTooLong);
                }
                None if eof && line.is_empty() => {
                    writer.shutdown().await?;
                    return Ok(End::Closed);
                }
                // The stream ended mid-line: that last line is echoed as it is.
                None => &line[..],
            };
            reply.clear();
            reply.extend_from_slice(b"[echo] ");
            reply.extend_from_slice(text);
            reply.push(b'\n');
            writer.write_all(&reply).await?;
            line.clear();
        }
    }
}
