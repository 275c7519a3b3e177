//! The line echo protocol as async fn handlers: the lesson's
//! `LineEchoServer`, written as `await` code instead of callbacks.
//!
//! `on_connect` became the greeting at the top of [`converse`],
//! `on_data`'s inbuf-scanning loop became `reader.read_line().await`,
//! `queue_send` became `writer.write`, and the outbuf's WRITE-interest dance
//! became `writer.drain().await`. `last_seen` became a `timeout` around the
//! read, and `on_disconnect` is the [`End`] each connection reports.
//!
//! Shared by `main.rs` and by the tests (testkit/src/lib.rs includes this
//! file), so the tests exercise exactly what the example runs.

use std::future::{Future, poll_fn};
use std::io;
use std::net::SocketAddr;
use std::pin::pin;
use std::task::Poll;
use std::time::Duration;

use futures_util::io::AsyncReadExt;
use ioloop::io::{StreamReader, StreamWriter};
use ioloop::net::{TcpListener, TcpStream};
use ioloop::time::timeout;

use crate::stop::{Listener, Stop};

/// The server's settings.
#[derive(Clone, Copy, Debug)]
pub struct Config {
    /// Longest accepted line, in bytes before the `\n`.
    pub max_line: usize,
    /// A connection silent this long is closed: nothing received for at
    /// least this long (a line trickling in slowly is not silence).
    pub idle_timeout: Duration,
    /// A poll running longer than this is logged while it runs (the
    /// runtime's stall detector); `None` turns the detector off.
    pub slow_poll_threshold: Option<Duration>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            max_line: 65_536,
            idle_timeout: Duration::from_secs(30),
            slow_poll_threshold: Some(Duration::from_millis(100)),
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
/// completes; then stops accepting (the listener is dropped) and tells
/// every connection to finish its current line and close. Returns at once:
/// the connection tasks finish on the runtime (see `server.rs`).
///
/// `on_event` hears of each connection (`None`) and of how it ended.
pub async fn serve(
    listener: TcpListener,
    config: Config,
    on_event: impl Fn(SocketAddr, Option<&End>) + Clone + Send + 'static,
    shutdown: impl Future<Output = ()>,
) -> io::Result<()> {
    let stop = Stop::default();
    let mut shutdown = pin!(shutdown);
    loop {
        let accepted = first(listener.accept(), shutdown.as_mut()).await;
        let (stream, peer) = match accepted {
            Either::Left(accepted) => accepted?,
            Either::Right(()) => break,
        };
        on_event(peer, None);
        let (on_event, listener) = (on_event.clone(), stop.listener());
        // Detached: the task owns its connection; nothing awaits it.
        drop(ioloop::spawn(async move {
            let end = handle(stream, config, listener).await;
            on_event(peer, Some(&end));
        }));
    }
    drop(listener);
    stop.stop();
    Ok(())
}

/// Serves one connection: greet, then echo each line until the client
/// leaves, goes silent, sends a line that is too long, or the server stops.
///
/// A client that goes away before sending a single byte (a port probe such
/// as `nc -z`: connect, then close) ends normally, as [`End::Closed`], even
/// though its kernel answers the unread greeting with a reset.
pub async fn handle(stream: TcpStream, config: Config, mut stop: Listener) -> End {
    let mut heard = false;
    match converse(&stream, config, &mut stop, &mut heard).await {
        Ok(end) => end,
        Err(err) if !heard && is_disconnect(&err) => End::Closed,
        Err(err) => End::Failed(err),
    }
}

/// A peer that left: reset, broken pipe, aborted.
fn is_disconnect(err: &io::Error) -> bool {
    matches!(
        err.kind(),
        io::ErrorKind::ConnectionReset
            | io::ErrorKind::BrokenPipe
            | io::ErrorKind::ConnectionAborted
    )
}

/// The conversation; `heard` is set once the client has sent a byte.
async fn converse(
    stream: &TcpStream,
    config: Config,
    stop: &mut Listener,
    heard: &mut bool,
) -> io::Result<End> {
    let mut reader = StreamReader::new(stream);
    reader.set_max_line_length(config.max_line);
    let mut writer = StreamWriter::new(stream);
    writer.write(b"Hello!\n");
    writer.drain().await?;
    // One reply buffer per connection, reused: no allocation per line.
    let mut reply = Vec::new();
    // The lesson's `last_seen`: how much of a partial line had arrived when
    // the current idle timeout was armed.
    let mut seen = 0;
    loop {
        // Between lines, the stop notice ends the connection; in the middle
        // of one (bytes already in the inbuf), the line is finished first.
        let between_lines = reader.buffer().is_empty();
        if between_lines && stop.is_stopped() {
            close(&mut writer, stream).await?;
            return Ok(End::Stopped);
        }
        let read = timeout(config.idle_timeout, reader.read_line());
        let read = if between_lines {
            match first(read, stop.wait()).await {
                Either::Left(read) => read,
                // `read_line` is cancel-safe: whatever arrived stays in
                // the inbuf, and the loop decides again.
                Either::Right(()) => continue,
            }
        } else {
            read.await
        };
        let line = match read {
            Err(_elapsed) => None,
            Ok(Ok(Some(line))) => {
                *heard = true;
                Some(line)
            }
            Ok(Ok(None)) => {
                writer.close().await?;
                return Ok(End::Closed);
            }
            Ok(Err(err)) if err.kind() == io::ErrorKind::InvalidData => {
                writer
                    .write(format!("ERR line longer than {} bytes\n", config.max_line).as_bytes());
                close(&mut writer, stream).await?;
                return Ok(End::LineTooLong);
            }
            Ok(Err(err)) => {
                // Part of a line counts as having said something.
                *heard |= !reader.buffer().is_empty();
                return Err(err);
            }
        };
        let Some(line) = line else {
            // The idle timeout passed. If part of a line arrived meanwhile,
            // the client is not silent: wait on.
            if reader.buffer().len() > seen {
                seen = reader.buffer().len();
                continue;
            }
            writer.close().await?;
            return Ok(End::Idle);
        };
        seen = 0;
        reply.clear();
        reply.extend_from_slice(b"[echo] ");
        reply.extend_from_slice(line);
        reply.push(b'\n');
        writer.write(&reply);
        writer.drain().await?;
    }
}

/// Closes our side (the client reads end of stream after our last line),
/// then reads and drops what the client is still sending, for a moment.
///
/// Closing a socket with unread input makes the kernel answer with a reset,
/// and a reset can destroy our last reply (the `ERR` line) before the
/// client has read it. So, as HTTP servers do, linger: up to 64 KiB or one
/// second, whichever comes first.
async fn close(writer: &mut StreamWriter<&TcpStream>, stream: &TcpStream) -> io::Result<()> {
    const LINGER: Duration = Duration::from_secs(1);
    const LINGER_BYTES: usize = 64 * 1024;
    writer.close().await?;
    // On the heap, and only now: a 4 KiB array here would sit in every
    // connection's future, its whole life (it made an idle connection
    // cost 5 KB instead of 1).
    let mut scratch = vec![0u8; 4096];
    let mut dropped = 0;
    let drain_input = async {
        while dropped < LINGER_BYTES {
            match (&mut &*stream).read(&mut scratch).await {
                Ok(0) | Err(_) => break,
                Ok(n) => dropped += n,
            }
        }
    };
    // Elapsed is the normal end for a client that keeps sending.
    let _ = timeout(LINGER, drain_input).await;
    Ok(())
}

/// Which of two futures finished first.
pub enum Either<A, B> {
    Left(A),
    Right(B),
}

/// Runs two futures until one finishes, polling `a` first; the other is
/// dropped. Both must be cancel-safe for that to lose nothing.
pub async fn first<A: Future, B: Future>(a: A, b: B) -> Either<A::Output, B::Output> {
    let (mut a, mut b) = (pin!(a), pin!(b));
    poll_fn(|cx| {
        if let Poll::Ready(out) = a.as_mut().poll(cx) {
            return Poll::Ready(Either::Left(out));
        }
        b.as_mut().poll(cx).map(Either::Right)
    })
    .await
}
