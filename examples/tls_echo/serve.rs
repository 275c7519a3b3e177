//! `tls_echo`'s connections: accept, TLS handshake, then line_echo's
//! protocol through `StreamReader` / `StreamWriter` over the TLS stream.
//!
//! Shared by `main.rs` and by tests/servers/tls_echo.rs.

use std::fmt;
use std::io;
use std::net::SocketAddr;

use futures_rustls::TlsAcceptor;
use futures_util::io::AsyncReadExt;
use ioloop::io::{StreamReader, StreamWriter};
use ioloop::net::{TcpListener, TcpStream};

/// How a connection ended.
#[derive(Debug)]
pub enum End {
    /// The client closed its side after `lines` lines.
    Closed {
        /// Lines echoed.
        lines: usize,
    },
    /// The handshake or the conversation failed.
    Failed(io::Error),
}

impl fmt::Display for End {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            End::Closed { lines } => write!(f, "closed after {lines} line(s)"),
            End::Failed(err) => write!(f, "failed: {err}"),
        }
    }
}

/// Accepts connections forever, one task each; `on_end` hears how each
/// ended.
///
/// # Errors
///
/// Only the listener's own.
pub async fn serve(
    listener: TcpListener,
    acceptor: TlsAcceptor,
    on_end: impl Fn(SocketAddr, &End) + Clone + 'static,
) -> io::Result<()> {
    loop {
        let (stream, peer) = listener.accept().await?;
        let (acceptor, on_end) = (acceptor.clone(), on_end.clone());
        // Detached: the task owns its connection. Local: `on_end` need
        // not be `Send`.
        drop(ioloop::spawn_local(async move {
            let end = match handle(stream, acceptor).await {
                Ok(lines) => End::Closed { lines },
                Err(err) => End::Failed(err),
            };
            on_end(peer, &end);
        }));
    }
}

/// One connection: the handshake, the greeting, an echo per line until
/// the client closes; returns how many lines were echoed.
pub async fn handle(stream: TcpStream, acceptor: TlsAcceptor) -> io::Result<usize> {
    let tls = acceptor.accept(stream).await?;
    // The one change from line_echo: the stream is TLS, split in two
    // halves (futures-util's `split`), instead of `&TcpStream`.
    let (read_half, write_half) = tls.split();
    let mut reader = StreamReader::new(read_half);
    let mut writer = StreamWriter::new(write_half);
    writer.write(b"Hello!\n");
    writer.drain().await?;
    let mut reply = Vec::new();
    let mut lines = 0;
    while let Some(line) = reader.read_line().await? {
        reply.clear();
        reply.extend_from_slice(b"[echo] ");
        reply.extend_from_slice(line);
        reply.push(b'\n');
        writer.write(&reply);
        writer.drain().await?;
        lines += 1;
    }
    // TLS needs a close_notify before the TCP close: `close` sends it.
    writer.close().await?;
    Ok(lines)
}
