//! The line limit at its edges, in a simulated world: a server sends
//! lines of the reader's maximum length minus one, exactly, plus one, and
//! others, ended by `\n` or `\r\n` (the `\r` counts toward the limit), cut
//! into writes of any size; the client reads them with `read_line` under
//! that limit. A line within the limit comes back whole, without its
//! ending; one past it is an `InvalidData` error and is skipped, and the
//! next read returns the line after it, however the bytes were split.

use std::io;

use ioloop::io::{AsyncWriteExt, StreamReader};
use ioloop::net::{TcpListener, TcpStream};
use ioloop::sim::{Faults, Rng, Sim, run_seeds};
use ioloop::time::sleep;
use std::time::Duration;

/// Lines per run.
const LINES: usize = 60;

/// A line: its text (no ending) and whether it ends with `\r\n`.
struct Line {
    text: Vec<u8>,
    crlf: bool,
}

impl Line {
    /// The length the reader measures against its limit: the `\r` of a
    /// `\r\n` ending counts, the `\n` does not.
    fn measured(&self) -> usize {
        self.text.len() + usize::from(self.crlf)
    }
}

/// The limit and the lines of a world, from its seed: the client and the
/// server each draw them, alike.
fn plan(seed: u64) -> (usize, Vec<Line>) {
    let mut rng = Rng::new(seed ^ 0x11e5);
    let limit = rng.range(1..200) as usize;
    let lines = (0..LINES)
        .map(|_| {
            let crlf = rng.chance(0.3);
            // Mostly at the edges, the ending's `\r` included.
            let measured = match rng.below(5) {
                0 => limit.saturating_sub(1),
                1 => limit,
                2 => limit + 1,
                3 => rng.range(0..limit as u64 * 3 + 2) as usize,
                _ => limit + rng.range(2..5_000) as usize,
            };
            let len = measured.saturating_sub(usize::from(crlf));
            let text = (0..len).map(|_| b'a' + rng.below(26) as u8).collect();
            Line { text, crlf }
        })
        .collect();
    (limit, lines)
}

/// The server: every line, in writes of random sizes, with pauses.
async fn server(seed: u64) -> io::Result<()> {
    let listener = TcpListener::bind("0.0.0.0:9").await?;
    let (mut stream, _) = listener.accept().await?;
    let (_, lines) = plan(seed);
    let mut wire = Vec::new();
    for line in &lines {
        wire.extend_from_slice(&line.text);
        wire.extend_from_slice(if line.crlf { b"\r\n" } else { b"\n" });
    }
    let mut rng = Rng::new(seed ^ 0x5e7d);
    let mut rest = &wire[..];
    while !rest.is_empty() {
        let n = (rng.range(1..400) as usize).min(rest.len());
        stream.write_all(&rest[..n]).await?;
        rest = &rest[n..];
        if rng.chance(0.2) {
            sleep(Duration::from_micros(rng.range(1..3_000))).await;
        }
    }
    stream.close().await
}

/// The client: each line checked against the plan.
async fn client(seed: u64) -> io::Result<()> {
    let (limit, lines) = plan(seed);
    let mut reader = StreamReader::new(TcpStream::connect("server:9").await?);
    reader.set_max_line_length(limit);
    for (i, line) in lines.iter().enumerate() {
        let got = reader.read_line().await;
        let fits = line.measured() <= limit;
        match got {
            Ok(Some(text)) if fits && text == &line.text[..] => {}
            Err(err) if !fits && err.kind() == io::ErrorKind::InvalidData => {}
            got => {
                return Err(io::Error::other(format!(
                    "limit {limit}, line {i} of {} bytes measured ({}): got {:?}",
                    line.measured(),
                    if fits { "fits" } else { "too long" },
                    got.map(|text| text.map(<[u8]>::len)),
                )));
            }
        }
    }
    match reader.read_line().await? {
        None => Ok(()),
        Some(extra) => Err(io::Error::other(format!(
            "{} bytes after the last line",
            extra.len()
        ))),
    }
}

fn world(seed: u64) -> Sim {
    let mut sim = crate::worlds::sim(seed, Faults::default());
    sim.host("server", move || server(seed))
        .client("client", move || client(seed));
    sim
}

#[test]
fn lines_at_the_limit_and_either_side_of_it_are_read_or_refused_exactly() {
    run_seeds(0..crate::seeds(), world).unwrap_or_else(|failure| panic!("{failure}"));
}
