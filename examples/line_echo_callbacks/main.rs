//! The line echo server from the selectors lecture (lesson 000), as the
//! lecture wrote it at the end: a `Reactor` base class with `on_connect`,
//! `on_data` and `on_disconnect`, and a `LineEchoServer` that overrides
//! them. Here the base class is `ioloop::callbacks` and the subclass is
//! `LineEcho` in `handler.rs`; the protocol is byte for byte `line_echo`'s:
//! `Hello!` on connect, `[echo] X` for each line `X` (a trailing `\r`
//! dropped), `ERR line longer than N bytes` and a close for a line over
//! the limit, a close after a silence.
//!
//! ```sh
//! cargo run --example line_echo_callbacks -- --port 9103
//! nc 127.0.0.1 9103        # type lines; each comes back as "[echo] ..."
//! ```
//!
//! Flags: `--port` (default 9103), `--max-line` bytes (default 65536),
//! `--idle-timeout` seconds (default 30). Connects and disconnects are
//! logged to stderr; Ctrl-C stops the server (`reactor stopped`).
//!
//! # Side by side with `examples/line_echo/handler.rs`
//!
//! Both run on the same runtime, one task per connection; what differs is
//! who holds the loop. There, `converse` holds it and waits; here the
//! layer holds it (`callbacks/src/server.rs`, crate `ioloop-callbacks`)
//! and calls `LineEcho` when something happens, and `LineEcho` never
//! waits:
//!
//! | line_echo (`await`) | line_echo_callbacks (callbacks) |
//! |---|---|
//! | `writer.write(b"Hello!\n"); writer.drain().await` at the top | `on_connect`: `conn.queue_send(b"Hello!\n")` |
//! | `reader.read_line().await` returns the next line | `on_data`: find each `\n` in `conn.inbuf()`, `conn.consume` it, keep the partial rest |
//! | `writer.write(&reply); writer.drain().await` | `conn.queue_send(&reply)`; the layer sends it after `on_data` returns |
//! | `set_max_line_length`, `InvalidData` from `read_line` | `Config::max_inbuf`, `on_inbuf_full` queues the `ERR` line |
//! | one idle `Sleep` raced against each `read_line` → `End::Idle` | `Config::idle_timeout` → `Disconnect::Idle` |
//! | `Ok(None)` from `read_line` → `writer.close()` | `on_eof` (echo the unterminated rest), then the layer closes |
//! | the `End` each task reports | `on_disconnect(conn, reason)` |
//!
//! One difference in timing, not in bytes. Neither cuts off a line that
//! trickles in slowly. line_echo's idle timer runs only while it waits for
//! a line, and when it fires with more of the line arrived since it last
//! fired, it waits another timeout: a client that falls silent is closed
//! between one and two timeouts after its last byte. Here the timeout
//! counts from the last byte moved either way (the lesson's `last_seen`),
//! so a client that is slowly reading a reply is not idle either.

#[path = "../common/args.rs"]
mod args;
mod handler;

use std::future::{Future, poll_fn};
use std::io::{self, Write};
use std::net::{Ipv4Addr, SocketAddr};
use std::pin::pin;
use std::task::Poll;
use std::time::Duration;

use ioloop::callbacks::Disconnect;
use ioloop::net::TcpListener;

const USAGE: &str =
    "usage: line_echo_callbacks [--port 9103] [--max-line 65536] [--idle-timeout 30]";

fn main() -> io::Result<()> {
    let args = args::Args::parse(USAGE);
    let config = handler::Config {
        max_line: args.get("max-line", 65_536),
        idle_timeout: Duration::from_secs_f64(args.get("idle-timeout", 30.0)),
    };
    let port: u16 = args.get("port", 9103);
    ioloop::block_on(async {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, port)).await?;
        eprintln!(
            "line_echo_callbacks listening on {}",
            listener.local_addr()?
        );
        let mut serve = pin!(handler::serve(listener, config, move |peer, end| {
            log(peer, end, config)
        }));
        let mut ctrl_c = pin!(ioloop::signal::ctrl_c());
        // Whichever ends first: the server (on a listener error) or Ctrl-C.
        poll_fn(|cx| match serve.as_mut().poll(cx) {
            Poll::Ready(result) => Poll::Ready(result),
            Poll::Pending => ctrl_c.as_mut().poll(cx),
        })
        .await
    })?;
    // The runtime is gone, and with it every connection.
    eprintln!("reactor stopped");
    Ok(())
}

fn log(peer: SocketAddr, end: Option<&Disconnect>, config: handler::Config) {
    let line = match end {
        None => format!("connected: {peer}"),
        Some(Disconnect::PeerClosed) => format!("disconnected: {peer}"),
        Some(Disconnect::Idle) => {
            format!("disconnected: {peer} (idle for {:?})", config.idle_timeout)
        }
        Some(Disconnect::InbufFull) => {
            format!("disconnected: {peer} (line over {} bytes)", config.max_line)
        }
        Some(Disconnect::Closed) => format!("disconnected: {peer} (closed)"),
        Some(Disconnect::Failed(err)) => format!("disconnected: {peer} ({err})"),
    };
    // One write per line: `eprintln!` makes a write(2) per formatted piece.
    // A closed stderr is no reason to stop serving: the error is dropped.
    let _ = io::stderr().write_all(format!("{line}\n").as_bytes());
}
