//! A `line_echo` client for simulations. On a 10 ms beat (one `interval`
//! per client, all started together, as rate-limited clients are), it
//! sends one to three lines of random length (up to 3,000 bytes, so the
//! network cuts them into many reads), then reads their echoes and checks
//! each byte for byte. Riding out faults, a connection that breaks or goes
//! silent is made again and the unanswered lines sent again; strict, that
//! is a failure.
//!
//! Shared by `main.rs` and by tests/sim (which include this file), so the
//! tests run exactly the client the example runs.

use std::io;
use std::time::Duration;

use ioloop::io::{StreamReader, StreamWriter};
use ioloop::net::TcpStream;
use ioloop::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use ioloop::sim::Rng;
use ioloop::time::{interval, timeout};

/// How long a client waits for a step (a connect and its greeting, a
/// round of echoes) before it takes the connection for lost, in virtual
/// time.
const PATIENCE: Duration = Duration::from_secs(5);

/// The most times a client reconnects before it gives up.
const RECONNECTS: u32 = 100;

/// What a line client saw.
#[derive(Debug, Default)]
pub struct Seen {
    /// Lines whose echo came back exact.
    pub echoed: usize,
    /// Connections lost (reset, closed, or silent past `PATIENCE`) and
    /// made again.
    pub reconnects: u32,
}

type Conn = (StreamReader<OwnedReadHalf>, StreamWriter<OwnedWriteHalf>);

/// Connects to `server` and reads `line_echo`'s greeting.
async fn connect(server: &str) -> io::Result<Conn> {
    let stream = TcpStream::connect(server).await?;
    let (read, write) = stream.into_split();
    let mut reader = StreamReader::new(read);
    let greeting = reader.read_line().await?.map(<[u8]>::to_vec);
    if greeting.as_deref() != Some(&b"Hello!"[..]) {
        return Err(io::Error::other(format!("greeting {greeting:?}")));
    }
    Ok((reader, StreamWriter::new(write)))
}

/// The `i`th line a client sends: a number, then up to 3,000 printable
/// bytes drawn from `rng`.
fn line(rng: &mut Rng, i: usize) -> Vec<u8> {
    let len = rng.below(3_000) as usize;
    let mut line = format!("{i}:").into_bytes();
    line.extend((0..len).map(|_| b'!' + rng.below(94) as u8));
    line
}

/// Sends `lines` lines to a `line_echo` server at `server` and checks
/// each echo is exactly `[echo] ` and the line: a lost, duplicated or
/// reordered byte fails with `InvalidData`. A connection that breaks or
/// goes silent is made again (unless `strict`: then it fails).
pub async fn line_client(server: &str, lines: usize, seed: u64, strict: bool) -> io::Result<Seen> {
    let mut rng = Rng::new(seed);
    let all: Vec<Vec<u8>> = (0..lines).map(|i| line(&mut rng, i)).collect();
    let mut seen = Seen::default();
    let mut conn: Option<Conn> = None;
    let mut beat = interval(Duration::from_millis(10));
    let mut next = 0;
    while next < lines {
        beat.tick().await;
        let round = &all[next..lines.min(next + 1 + rng.below(3) as usize)];
        let step = async {
            if conn.is_none() {
                conn = Some(connect(server).await?);
            }
            let (reader, writer) = conn.as_mut().expect("connected");
            for line in round {
                writer.write(line);
                writer.write(b"\n");
            }
            // No `drain` before reading: waiting for the round to be sent
            // while the server waits for its echoes to be read deadlocks
            // once both sides' buffers are full (seed 10 found it, with
            // 512-byte buffers). The socket's outbox sends the rest as
            // room comes, while this reads.
            for (k, line) in round.iter().enumerate() {
                // `read_until`, not `read_line`: a connection that ends in
                // the middle of an echo is `UnexpectedEof`, where
                // `read_line` would return the part that came as a line
                // (asyncio's `readline` does too). After a reset that a
                // send reported first, a read sees a plain end of stream
                // (seed 82 found it).
                let Some(echo) = reader.read_until(b'\n').await? else {
                    return Err(io::ErrorKind::UnexpectedEof.into());
                };
                let mut expected = b"[echo] ".to_vec();
                expected.extend_from_slice(line);
                expected.push(b'\n');
                if echo != expected {
                    let msg = format!(
                        "line {}: sent {} bytes, the echo was {} bytes, first difference at {:?}",
                        next + k,
                        line.len(),
                        echo.len(),
                        echo.iter().zip(&expected).position(|(a, b)| a != b),
                    );
                    return Err(io::Error::new(io::ErrorKind::InvalidData, msg));
                }
            }
            Ok(())
        };
        match timeout(PATIENCE, step).await {
            Ok(Ok(())) => {
                seen.echoed += round.len();
                next += round.len();
            }
            Ok(Err(err)) if err.kind() == io::ErrorKind::InvalidData => return Err(err),
            // A reset, a broken pipe, an end of stream, a refusal,
            // silence: the round goes again on a new connection.
            failed => {
                if strict {
                    let why = match failed {
                        Ok(Err(err)) => err.to_string(),
                        _ => format!("no echo within {PATIENCE:?}"),
                    };
                    return Err(io::Error::other(format!("line {next}: {why}")));
                }
                conn = None;
                seen.reconnects += 1;
                if seen.reconnects > RECONNECTS {
                    return Err(io::Error::other(format!(
                        "gave up after {RECONNECTS} reconnects"
                    )));
                }
            }
        }
    }
    Ok(seen)
}
