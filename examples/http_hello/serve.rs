//! The hello server's connections on ioloop: read into the shared
//! [`Connection`], send every reply it queued in one write, repeat.
//!
//! Shared by `main.rs` and by tests/servers/http_hello.rs, which runs it
//! in-process against real sockets.

use std::io;
use std::time::Duration;

use ioloop::io::AsyncReadExt;
use ioloop::io::StreamWriter;
use ioloop::net::{TcpListener, TcpStream};

use crate::http::{Connection, Next};

/// How long a closing connection waits for the client to close its side;
/// see [`linger`].
const LINGER: Duration = Duration::from_secs(2);

/// Accepts connections forever, one task each.
///
/// # Errors
///
/// Only errors of the listener itself; ioloop's `accept` skips failed
/// connections and backs off when out of file descriptors.
pub async fn serve(listener: TcpListener) -> io::Result<()> {
    loop {
        let (stream, peer) = listener.accept().await?;
        // Detached: the task owns its connection; nothing awaits it.
        drop(ioloop::spawn(async move {
            if let Err(err) = handle(stream).await
                && !is_disconnect(&err)
            {
                eprintln!("{peer}: {err}");
            }
        }));
    }
}

/// Serves one connection until the client leaves or a reply closes it.
pub async fn handle(stream: TcpStream) -> io::Result<()> {
    // Replies are one write per batch of requests: Nagle would only hold a
    // batch back while the previous one is unacknowledged.
    stream.set_nodelay(true)?;
    let mut conn = Connection::default();
    let mut out = Vec::new();
    let mut reader = &stream;
    let mut writer = StreamWriter::new(&stream);
    loop {
        let n = reader.read(conn.spare()).await?;
        if n == 0 {
            return Ok(());
        }
        let next = conn.received(n, &mut out);
        // One write for everything this read answered, pipelined or not:
        // the same batching as the tokio twin.
        writer.write(&out);
        out.clear();
        if next == Next::Close {
            writer.close().await?;
            linger(&stream).await;
            return Ok(());
        }
        writer.drain().await?;
    }
}

/// After the last reply, with the write side shut: reads and drops
/// whatever the client still sends until it closes, for up to [`LINGER`].
/// Closing a socket with unread bytes makes the kernel send a reset, which
/// can destroy the reply before the client reads it (a 400 after an
/// oversized head, or requests pipelined behind `Connection: close`).
async fn linger(stream: &TcpStream) {
    let mut reader = stream;
    // On the heap, and only now: an array here would sit in every
    // connection's future, its whole life.
    let mut sink = vec![0u8; 4096];
    let discard = async { while let Ok(1..) = reader.read(&mut sink).await {} };
    // Elapsed: the client kept the connection open; close it anyway.
    let _ = ioloop::time::timeout(LINGER, discard).await;
}

/// A client that went away mid-conversation: routine under a load
/// generator, which closes its connections when its time is up.
pub fn is_disconnect(err: &io::Error) -> bool {
    matches!(
        err.kind(),
        io::ErrorKind::ConnectionReset
            | io::ErrorKind::BrokenPipe
            | io::ErrorKind::ConnectionAborted
    )
}
