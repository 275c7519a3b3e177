//! A `line_echo` client for simulations: sends lines of random length
//! (up to 3,000 bytes, so the network cuts them into many reads), checks
//! each echo byte for byte, and rides out faults: a connection that
//! breaks or goes silent is made again and the unanswered line sent again.
//!
//! Shared by `main.rs` and by tests/sim (which include this file), so the
//! tests run exactly the client the example runs.

use std::io;
use std::time::Duration;

use ioloop::io::{StreamReader, StreamWriter};
use ioloop::net::TcpStream;
use ioloop::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use ioloop::sim::Rng;
use ioloop::time::timeout;

/// How long a client waits for a step (a connect and its greeting, an
/// echo) before it takes the connection for lost, in virtual time.
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

/// The `i`th line a client with `rng` sends: up to 3,000 printable bytes,
/// so the network cuts many of them into several reads.
pub fn line(rng: &mut Rng, i: usize) -> Vec<u8> {
    let len = rng.below(3_000) as usize;
    let mut line = format!("{i}:").into_bytes();
    line.extend((0..len).map(|_| b'!' + rng.below(94) as u8));
    line
}

/// Sends `lines` lines to a `line_echo` server and checks each echo is
/// exactly `[echo] ` and the line: a lost, duplicated or reordered byte
/// fails with `InvalidData`. A connection that breaks or goes silent is
/// made again, and the line that got no echo sent again.
pub async fn line_client(server: &str, lines: usize, seed: u64) -> io::Result<Seen> {
    let mut rng = Rng::new(seed);
    let mut seen = Seen::default();
    let mut conn: Option<Conn> = None;
    let mut i = 0;
    while i < lines {
        let line = line(&mut Rng::new(rng.next_u64()), i);
        let step = async {
            if conn.is_none() {
                conn = Some(connect(server).await?);
            }
            let (reader, writer) = conn.as_mut().expect("connected");
            writer.write(&line);
            writer.write(b"\n");
            writer.drain().await?;
            match reader.read_line().await? {
                Some(echo) => io::Result::Ok(Some(echo.to_vec())),
                None => Ok(None),
            }
        };
        match timeout(PATIENCE, step).await {
            Ok(Ok(Some(echo))) => {
                let mut expected = b"[echo] ".to_vec();
                expected.extend_from_slice(&line);
                if echo != expected {
                    let msg = format!(
                        "line {i}: sent {} bytes, the echo was {} bytes, first difference at {:?}",
                        line.len(),
                        echo.len(),
                        echo.iter().zip(&expected).position(|(a, b)| a != b),
                    );
                    return Err(io::Error::new(io::ErrorKind::InvalidData, msg));
                }
                seen.echoed += 1;
                i += 1;
                // A moment's thought before the next line: runs last long
                // enough for the faults to meet them.
                ioloop::time::sleep(Duration::from_millis(rng.range(0..50))).await;
            }
            // End of stream, a reset, a broken pipe, a refusal, silence:
            // the line goes again on a new connection.
            Ok(Ok(None)) | Ok(Err(_)) | Err(_) => {
                conn = None;
                seen.reconnects += 1;
                if seen.reconnects > RECONNECTS {
                    return Err(io::Error::other(format!(
                        "gave up after {RECONNECTS} reconnects"
                    )));
                }
                ioloop::time::sleep(Duration::from_millis(rng.range(1..200))).await;
            }
        }
    }
    Ok(seen)
}
