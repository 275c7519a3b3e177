//! The fib server and the echo server of `fib_offload`, shared with
//! tests/rt/fib_offload.rs.

use std::io;
use std::sync::Arc;

use ioloop::io::{AsyncReadExt, AsyncWriteExt};
use ioloop::net::{TcpListener, TcpStream, UdpSocket};

/// The largest `n` answered: fib(93) is the last that fits in a `u64`, and
/// naive recursion past the low 40s takes minutes anyway.
pub const MAX_N: u64 = 50;

/// Naive, exponential-time Fibonacci: deliberately slow, as in the recipe.
pub fn fib(n: u64) -> u64 {
    if n < 2 { n } else { fib(n - 1) + fib(n - 2) }
}

/// Answers each datagram `n` with `fib(n)`, computed on the blocking pool;
/// requests are served concurrently and each answered when its result is
/// ready. A request that is not a number up to [`MAX_N`] gets `error: ...`.
pub async fn fib_server(socket: UdpSocket) -> io::Result<()> {
    let socket = Arc::new(socket);
    let mut buf = [0u8; 128];
    loop {
        let (len, peer) = socket.recv_from(&mut buf).await?;
        let request = String::from_utf8_lossy(&buf[..len]).trim().to_string();
        let socket = socket.clone();
        drop(ioloop::spawn(async move {
            let answer = match request.parse::<u64>() {
                Ok(n) if n <= MAX_N => match ioloop::spawn_blocking(move || fib(n)).await {
                    Ok(value) => value.to_string(),
                    Err(err) => format!("error: {err}"),
                },
                _ => format!("error: send a number from 0 to {MAX_N}"),
            };
            // A datagram send does not wait for room in practice; if it
            // fails, the client asks again.
            if let Err(err) = socket.send_to(answer.as_bytes(), peer).await {
                eprintln!("fib: could not answer {peer}: {err}");
            }
        }));
    }
}

/// Echoes bytes on every connection, one task per connection.
pub async fn echo_server(listener: TcpListener) -> io::Result<()> {
    loop {
        let (stream, _) = listener.accept().await?;
        drop(ioloop::spawn(echo(stream)));
    }
}

async fn echo(mut stream: TcpStream) -> io::Result<()> {
    let mut buf = [0u8; 4096];
    loop {
        let n = stream.read(&mut buf).await?;
        if n == 0 {
            return Ok(());
        }
        stream.write_all(&buf[..n]).await?;
    }
}
