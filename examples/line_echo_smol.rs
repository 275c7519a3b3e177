//! The smol twin of `line_echo` (issue 31), for the idle-connection row of
//! the comparison: the same protocol as `line_echo_tokio`, written the way
//! a smol user would, on one thread: a `LocalExecutor` run by
//! `smol::block_on` (which also drives smol's reactor and timers), a
//! detached task per connection, `BufReader` and `read_until` for lines,
//! `write_all` for replies, and one `Timer` per connection, set again for
//! each read, for idle clients.
//!
//! ```sh
//! cargo run -p testkit --example line_echo_smol -- --port 9101
//! nc 127.0.0.1 9101        # type lines; each comes back as "[echo] ..."
//! ```
//!
//! Greets with `Hello!`, answers each line `X` with `[echo] X` (a `\r`
//! before the `\n` dropped), refuses a line over `--max-line` bytes
//! (default 65536) with an `ERR` line and a close, and closes a connection
//! silent for `--idle-timeout` seconds (default 30). `--port` defaults to
//! 9101. Connects and disconnects are logged to stderr. Unlike the other
//! twins it has no graceful stop: Ctrl-C or SIGTERM ends it at once.

#[path = "common/args.rs"]
mod args;

use std::io;
use std::net::Ipv4Addr;
use std::time::Duration;

use smol::future::FutureExt;
use smol::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use smol::net::{TcpListener, TcpStream};
use smol::{LocalExecutor, Timer};

const USAGE: &str = "usage: line_echo_smol [--port 9101] [--max-line 65536] [--idle-timeout 30]";

/// The server's settings.
#[derive(Clone, Copy)]
struct Config {
    /// Longest accepted line, in bytes before the `\n`.
    max_line: usize,
    /// A connection silent this long is closed.
    idle_timeout: Duration,
}

/// Why a connection ended (other than by an error).
enum End {
    Closed,
    Idle,
    LineTooLong,
}

fn main() -> io::Result<()> {
    let args = args::Args::parse(USAGE);
    let config = Config {
        max_line: args.get("max-line", 65_536),
        idle_timeout: Duration::from_secs_f64(args.get("idle-timeout", 30.0)),
    };
    let executor = LocalExecutor::new();
    smol::block_on(executor.run(serve(&executor, args.get("port", 9101), config)))
}

/// Accepts connections on 127.0.0.1:`port`, one task each, forever.
async fn serve(executor: &LocalExecutor<'_>, port: u16, config: Config) -> io::Result<()> {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, port)).await?;
    eprintln!("line_echo_smol listening on {}", listener.local_addr()?);
    loop {
        let (stream, peer) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(err) => {
                // EMFILE and the like: retrying at once would spin.
                eprintln!("accept: {err}");
                Timer::after(Duration::from_millis(100)).await;
                continue;
            }
        };
        log(format!("connected: {peer}"));
        let connection = async move {
            let why = match converse(stream, config).await {
                Ok(End::Closed) => String::new(),
                Ok(End::Idle) => format!(" (idle for {:?})", config.idle_timeout),
                Ok(End::LineTooLong) => format!(" (line over {} bytes)", config.max_line),
                Err(err) => format!(" ({err})"),
            };
            log(format!("disconnected: {peer}{why}"));
        };
        executor.spawn(connection).detach();
    }
}

/// Serves one connection: greet, then echo each line until the client
/// leaves, goes silent, or sends a line that is too long.
async fn converse(stream: TcpStream, config: Config) -> io::Result<End> {
    // smol's streams are shared handles: one clone reads, the other writes.
    let (mut reader, mut writer) = (BufReader::new(stream.clone()), stream);
    writer.write_all(b"Hello!\n").await?;
    // Both reused for every line: no allocation per line.
    let (mut line, mut reply) = (Vec::new(), Vec::new());
    let mut idle = Timer::never();
    loop {
        // `take` bounds what `read_until` adds to the longest line and its
        // `\n`, so an endless line costs that much memory, not more.
        let limit = (config.max_line + 1 - line.len()) as u64;
        idle.set_after(config.idle_timeout);
        let read = async { Some((&mut reader).take(limit).read_until(b'\n', &mut line).await) };
        let timeout = async {
            (&mut idle).await;
            None
        };
        let Some(read) = read.or(timeout).await else {
            writer.close().await?;
            return Ok(End::Idle);
        };
        let eof = read? == 0;
        let text = match line.strip_suffix(b"\n") {
            Some(text) => text.strip_suffix(b"\r").unwrap_or(text),
            None if line.len() > config.max_line => {
                let err = format!("ERR line longer than {} bytes\n", config.max_line);
                writer.write_all(err.as_bytes()).await?;
                writer.close().await?;
                return Ok(End::LineTooLong);
            }
            None if eof && line.is_empty() => {
                writer.close().await?;
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

/// One write per line: stderr is unbuffered.
fn log(line: String) {
    let _ = io::Write::write_all(&mut io::stderr(), format!("{line}\n").as_bytes());
}
