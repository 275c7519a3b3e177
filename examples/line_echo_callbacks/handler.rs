//! The line echo protocol as callbacks: the lesson's `LineEchoServer`,
//! written against `ioloop::callbacks`, byte for byte the protocol of
//! `examples/line_echo/handler.rs`.
//!
//! Shared by `main.rs` and by the tests (tests/servers/line_echo_callbacks.rs
//! includes this file), so the tests exercise exactly what the example runs.

use std::io;
use std::net::SocketAddr;
use std::time::Duration;

use ioloop::callbacks::{self, Connection, Disconnect, Handler};
use ioloop::net::TcpListener;

/// The server's settings: the same as line_echo's.
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

/// Accepts connections forever, one [`LineEcho`] each. `on_event` hears of
/// each connection (`None`) and of how it ended.
pub async fn serve(
    listener: TcpListener,
    config: Config,
    on_event: impl Fn(SocketAddr, Option<&Disconnect>) + Clone + Send + 'static,
) -> io::Result<()> {
    // The layer's inbuf limit is the line limit: a partial line longer
    // than `max_line` is what makes the inbuf overflow.
    let limits = callbacks::Config {
        max_inbuf: config.max_line,
        idle_timeout: Some(config.idle_timeout),
        ..callbacks::Config::default()
    };
    callbacks::serve_with(listener, limits, move || {
        LineEcho::new(config.max_line, on_event.clone())
    })
    .await
}

/// One connection's handler: the lesson's `LineEchoServer`, with the
/// state the lesson kept on `Connection` in its own fields.
pub struct LineEcho<E> {
    max_line: usize,
    on_event: E,
    /// How many bytes at the front of the inbuf are known to hold no
    /// `\n`: the next search starts there, so a line that arrives a byte at
    /// a time costs O(n), not the O(n²) of the lesson's
    /// `conn.inbuf.find(b"\n")` from the start on every event.
    scanned: usize,
    /// The reply being built, reused: no allocation per line.
    reply: Vec<u8>,
}

impl<E> LineEcho<E> {
    pub fn new(max_line: usize, on_event: E) -> Self {
        LineEcho {
            max_line,
            on_event,
            scanned: 0,
            reply: Vec::new(),
        }
    }

    /// Queues `[echo] <line>\n`.
    fn echo(&mut self, conn: &mut Connection, line_len: usize, consumed: usize) {
        self.reply.clear();
        self.reply.extend_from_slice(b"[echo] ");
        self.reply.extend_from_slice(&conn.inbuf()[..line_len]);
        self.reply.push(b'\n');
        conn.consume(consumed);
        conn.queue_send(&self.reply);
    }
}

impl<E: Fn(SocketAddr, Option<&Disconnect>)> Handler for LineEcho<E> {
    fn on_connect(&mut self, conn: &mut Connection) {
        (self.on_event)(conn.peer_addr(), None);
        conn.queue_send(b"Hello!\n");
    }

    fn on_data(&mut self, conn: &mut Connection) {
        while let Some(at) = conn.inbuf()[self.scanned..]
            .iter()
            .position(|&b| b == b'\n')
        {
            let end = self.scanned + at;
            let line_len = match conn.inbuf()[..end].last() {
                Some(b'\r') => end - 1,
                _ => end,
            };
            self.echo(conn, line_len, end + 1);
            self.scanned = 0;
        }
        // A partial line (at most `max_line` bytes, or `on_inbuf_full`
        // comes next) waits in the inbuf for the rest of it.
        self.scanned = conn.inbuf().len();
    }

    fn on_inbuf_full(&mut self, conn: &mut Connection) {
        // Nothing consumed: the layer closes the connection once this is sent.
        conn.queue_send(format!("ERR line longer than {} bytes\n", self.max_line).as_bytes());
    }

    fn on_eof(&mut self, conn: &mut Connection) {
        // A last line the client ended without `\n` is still a line, as
        // `read_line` returns it: as it is, a `\r` included.
        let rest = conn.inbuf().len();
        if rest > 0 {
            self.echo(conn, rest, rest);
        }
    }

    fn on_disconnect(&mut self, conn: &Connection, reason: Disconnect) {
        (self.on_event)(conn.peer_addr(), Some(&reason));
    }
}
