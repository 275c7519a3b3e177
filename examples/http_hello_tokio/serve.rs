//! The hello server's connections on tokio: read into the shared
//! [`Connection`], send every reply it queued in one `write_all`, repeat.
//! The same loop as examples/http_hello/serve.rs, in tokio's idiom.
//!
//! Shared by `main.rs` and by tests/servers/http_hello.rs, which runs both twins
//! through the same scenarios.

use std::io;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use crate::http::{Connection, Next};

/// How long a closing connection waits for the client to close its side;
/// see [`linger`].
const LINGER: Duration = Duration::from_secs(2);

/// Accepts connections forever, one task each.
pub async fn serve(listener: TcpListener) -> io::Result<()> {
    loop {
        let (stream, peer) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(err) => {
                // tokio hands every accept error to the caller, EMFILE
                // included, and retrying at once would spin: pause instead.
                eprintln!("accept: {err}");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        tokio::spawn(async move {
            if let Err(err) = handle(stream).await
                && !is_disconnect(&err)
            {
                eprintln!("{peer}: {err}");
            }
        });
    }
}

/// Serves one connection until the client leaves or a reply closes it.
pub async fn handle(mut stream: TcpStream) -> io::Result<()> {
    // Replies are one write per batch of requests: Nagle would only hold a
    // batch back while the previous one is unacknowledged.
    stream.set_nodelay(true)?;
    // The shared buffer rather than a BytesMut: both twins then read the
    // same way, and only the runtimes differ.
    let mut conn = Connection::default();
    let mut out = Vec::new();
    loop {
        let n = stream.read(conn.spare()).await?;
        if n == 0 {
            return Ok(());
        }
        let next = conn.received(n, &mut out);
        // One write for everything this read answered, pipelined or not:
        // the same batching as the ioloop twin.
        stream.write_all(&out).await?;
        out.clear();
        if next == Next::Close {
            stream.shutdown().await?;
            linger(&mut stream).await;
            return Ok(());
        }
    }
}

/// After the last reply, with the write side shut: reads and drops
/// whatever the client still sends until it closes, for up to [`LINGER`].
/// Closing a socket with unread bytes makes the kernel send a reset, which
/// can destroy the reply before the client reads it (a 400 after an
/// oversized head, or requests pipelined behind `Connection: close`).
async fn linger(stream: &mut TcpStream) {
    // On the heap, as in the ioloop twin: an array here would sit in
    // every connection's future, its whole life.
    let mut sink = vec![0u8; 4096];
    let discard = async { while let Ok(1..) = stream.read(&mut sink).await {} };
    // Elapsed: the client kept the connection open; close it anyway.
    let _ = tokio::time::timeout(LINGER, discard).await;
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
