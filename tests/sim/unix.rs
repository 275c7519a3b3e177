//! Unix streams in a simulation (issue 41 item 6): a line echo over a
//! Unix listener, under every fault and the rare paths, byte for byte;
//! the listener's backlog at its limit; each host's paths its own.

use std::io;
use std::time::Duration;

use ioloop::io::{AsyncReadExt, AsyncWriteExt, StreamReader, StreamWriter};
use ioloop::net::{UnixListener, UnixStream};
use ioloop::sim::{Faults, Rng, Sim, run_seeds};
use ioloop::time::{sleep, timeout};

/// The path of the echo server in every world.
const PATH: &str = "/run/echo.sock";

/// Echoes each line back (`read_line` gives it without its newline),
/// until the end of the stream.
async fn echo(stream: UnixStream) -> io::Result<()> {
    let (read, write) = stream.into_split();
    let (mut reader, mut writer) = (StreamReader::new(read), StreamWriter::new(write));
    while let Some(line) = reader.read_line().await? {
        writer.write(line);
        writer.write(b"\n");
        writer.drain().await?;
    }
    writer.close().await
}

/// One client: `lines` lines of seeded lengths, written in seeded pieces,
/// each echo read back with a plain `read` of a seeded size and checked.
async fn client(mut rng: Rng, lines: usize) -> io::Result<()> {
    let mut stream = UnixStream::connect(PATH).await?;
    for i in 0..lines {
        let len = rng.range(0..3000) as usize;
        let mut line: Vec<u8> = (0..len).map(|j| b'a' + ((i + j) % 26) as u8).collect();
        line.push(b'\n');
        let mut rest = &line[..];
        while !rest.is_empty() {
            let cut = (rng.range(1..1500) as usize).min(rest.len());
            stream.write_all(&rest[..cut]).await?;
            rest = &rest[cut..];
        }
        let mut back = Vec::new();
        while back.len() < line.len() {
            let mut buf = vec![0; rng.range(1..4096) as usize];
            match stream.read(&mut buf).await? {
                0 => {
                    return Err(io::Error::other(format!(
                        "line {i}: the end after {back:?}"
                    )));
                }
                n => back.extend_from_slice(&buf[..n]),
            }
        }
        if back != line {
            return Err(io::Error::other(format!(
                "line {i}: {} bytes sent, the echo differs",
                line.len()
            )));
        }
    }
    stream.close().await?;
    match stream.read(&mut [0; 1]).await? {
        0 => Ok(()),
        n => Err(io::Error::other(format!("{n} bytes after the last echo"))),
    }
}

/// A host serving the echo on [`PATH`] to four clients of its own.
fn world(seed: u64, faults: Faults) -> Sim {
    let mut sim = crate::worlds::sim(seed, faults);
    sim.client("box", move || async move {
        let listener = UnixListener::bind(PATH)?;
        let server = ioloop::spawn_local(async move {
            loop {
                let (stream, _) = listener.accept().await?;
                drop(ioloop::spawn_local(echo(stream)));
            }
            #[allow(unreachable_code)]
            Ok::<_, io::Error>(())
        });
        let mut rng = Rng::new(seed);
        let clients: Vec<_> = (0..4)
            .map(|_| ioloop::spawn_local(client(rng.fork(), 6)))
            .collect();
        for client in clients {
            client.await.map_err(io::Error::other)??;
        }
        server.abort();
        Ok(())
    });
    sim
}

#[test]
fn a_unix_line_echo_loses_no_byte_under_every_fault_and_the_rare_paths() {
    let runs = run_seeds(0..crate::seeds(), |seed| world(seed, Faults::all()))
        .unwrap_or_else(|failure| panic!("{failure}"));
    assert_eq!(runs, crate::seeds());
}

#[test]
fn the_rare_paths_reach_the_unix_streams() {
    let mut fired = std::collections::BTreeMap::new();
    for seed in 0..20 {
        let report = world(seed, Faults::default())
            .run()
            .unwrap_or_else(|failure| panic!("{failure}"));
        for (point, n) in report.rare {
            *fired.entry(point).or_insert(0) += n;
        }
    }
    for point in [
        "recv_short",
        "send_short",
        "recv_would_block",
        "accept_would_block",
    ] {
        assert!(
            fired.get(point).is_some_and(|&n| n > 0),
            "{point}: {fired:?}"
        );
    }
}

/// Linux queues `backlog + 1` connections on a Unix listener (1,024 is the
/// simulation's backlog): the 1,025th connect is made at once, the 1,026th
/// waits until an accept makes room.
#[test]
fn a_unix_listeners_backlog_takes_1025_connections_then_a_connect_waits_for_an_accept() {
    let mut sim = Sim::new(1);
    sim.client("box", || async {
        let listener = UnixListener::bind(PATH)?;
        let mut queued = Vec::new();
        for i in 0..1025 {
            let connect = timeout(Duration::from_millis(50), UnixStream::connect(PATH)).await;
            let stream = connect.map_err(|_| io::Error::other(format!("connect {i} waited")))??;
            queued.push(stream);
        }
        let waits = timeout(Duration::from_millis(50), UnixStream::connect(PATH)).await;
        if waits.is_ok() {
            return Err(io::Error::other(
                "the 1,026th connect was made with the backlog full",
            ));
        }
        let late = ioloop::spawn_local(UnixStream::connect(PATH));
        sleep(Duration::from_millis(20)).await;
        let _accepted = listener.accept().await?;
        let late = timeout(Duration::from_secs(1), late).await;
        late.map_err(|_| io::Error::other("no room after an accept"))?
            .map_err(io::Error::other)??;
        Ok(())
    });
    sim.run().unwrap_or_else(|failure| panic!("{failure}"));
}

/// Paths are a host's own: another host's listener is not there, and the
/// same path is free on every host.
#[test]
fn each_hosts_paths_are_its_own() {
    let mut sim = Sim::new(3);
    sim.host("server", || async {
        let listener = UnixListener::bind(PATH)?;
        loop {
            drop(listener.accept().await?);
        }
    })
    .client("other", || async {
        sleep(Duration::from_millis(10)).await;
        let kind = UnixStream::connect(PATH)
            .await
            .map(drop)
            .map_err(|e| e.kind());
        if kind != Err(io::ErrorKind::NotFound) {
            return Err(io::Error::other(format!("{kind:?}")));
        }
        let _own = UnixListener::bind(PATH)?;
        let _client = UnixStream::connect(PATH).await?;
        Ok(())
    });
    sim.run().unwrap_or_else(|failure| panic!("{failure}"));
}

/// A pair works in a simulation as `socketpair(2)`'s does, both ways.
#[test]
fn a_pair_carries_bytes_both_ways_and_its_end() {
    let mut sim = Sim::new(4);
    sim.client("box", || async {
        let (mut a, mut b) = UnixStream::pair()?;
        a.write_all(b"ping").await?;
        let mut buf = [0; 4];
        b.read_exact(&mut buf).await?;
        b.write_all(b"pong").await?;
        a.read_exact(&mut buf).await?;
        drop(b);
        let end = a.read(&mut buf).await?;
        let write = a.write(b"x").await.map_err(|e| e.kind());
        if (&buf, end, write) != (b"pong", 0, Err(io::ErrorKind::BrokenPipe)) {
            return Err(io::Error::other(format!("{buf:?} {end} {write:?}")));
        }
        Ok(())
    });
    let report = sim.run().unwrap_or_else(|failure| panic!("{failure}"));
    // The pair is the simulation's, not two OS sockets on its loop.
    assert!(
        report
            .recent
            .iter()
            .any(|line| line.contains(" connect local box:")),
        "{:?}",
        report.recent
    );
}
