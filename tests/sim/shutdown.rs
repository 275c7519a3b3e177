//! `line_echo`'s graceful stop under many seeds: the server is told to
//! stop at a moment the seed picks, while clients are sending. Every echo
//! a client gets is exact, and every client learns the server stopped (an
//! end of stream, a reset, a refused connect) instead of waiting forever.

use std::io;
use std::time::Duration;

use ioloop::io::{StreamReader, StreamWriter};
use ioloop::net::{TcpListener, TcpStream};
use ioloop::sim::{Rng, Sim, run_seeds};
use ioloop::time::{sleep, timeout};
use testkit::handler::{Config, serve};

/// Sends lines until the server goes, checking each echo; fails only on a
/// wrong echo, or on silence (a hang).
async fn until_stopped(seed: u64) -> io::Result<usize> {
    let mut rng = Rng::new(seed);
    let gone = |err: &io::Error| {
        matches!(
            err.kind(),
            io::ErrorKind::UnexpectedEof
                | io::ErrorKind::ConnectionReset
                | io::ErrorKind::ConnectionRefused
                | io::ErrorKind::BrokenPipe
        )
    };
    let stream = match TcpStream::connect("server:7000").await {
        Ok(stream) => stream,
        Err(err) if gone(&err) => return Ok(0),
        Err(err) => return Err(err),
    };
    let (read, write) = stream.into_split();
    let (mut reader, mut writer) = (StreamReader::new(read), StreamWriter::new(write));
    for (echoed, i) in (0..).enumerate() {
        let line = format!("{i}:{}", "x".repeat(rng.below(2_000) as usize));
        writer.write(line.as_bytes());
        writer.write(b"\n");
        let expected = if i == 0 {
            // The greeting comes first.
            vec![
                b"Hello!\n".to_vec(),
                format!("[echo] {line}\n").into_bytes(),
            ]
        } else {
            vec![format!("[echo] {line}\n").into_bytes()]
        };
        for want in expected {
            let got = match timeout(Duration::from_secs(5), reader.read_until(b'\n')).await {
                Err(_) => return Err(io::Error::other(format!("line {i}: silence for 5 s"))),
                Ok(Ok(Some(got))) => got.to_vec(),
                Ok(Ok(None)) => return Ok(echoed),
                Ok(Err(err)) if gone(&err) => return Ok(echoed),
                Ok(Err(err)) => return Err(err),
            };
            if got != want {
                let msg = format!("line {i}: got {} bytes, wanted {}", got.len(), want.len());
                return Err(io::Error::new(io::ErrorKind::InvalidData, msg));
            }
        }
        sleep(Duration::from_millis(rng.range(0..20))).await;
    }
    unreachable!("an endless loop")
}

fn world(seed: u64) -> Sim {
    let stop_after = Duration::from_millis(Rng::new(seed).range(0..300));
    let mut sim = crate::worlds::sim(seed, ioloop::sim::Faults::default());
    sim.host("server", move || async move {
        let listener = TcpListener::bind("0.0.0.0:7000").await?;
        let config = Config {
            slow_poll_threshold: None,
            ..Config::default()
        };
        serve(listener, config, |_, _| {}, sleep(stop_after)).await
    });
    for client in 0..3u64 {
        sim.client(&format!("client{client}"), move || async move {
            until_stopped(seed.wrapping_mul(31).wrapping_add(client))
                .await
                .map(drop)
        });
    }
    sim
}

#[test]
fn a_server_stopped_mid_conversation_answers_exactly_and_leaves_no_client_waiting() {
    run_seeds(0..crate::seeds(), world).unwrap_or_else(|failure| panic!("{failure}"));
}
