//! An EMFILE storm: the line echo server out of descriptors while clients
//! keep connecting, many of them giving up at once; the server's CPU stays
//! low, and once descriptors free up every client still waiting is
//! greeted and echoed.
//!
//! tests/net/tcp_emfile.rs proves the accept loop's back-off with ten
//! connections trickling in. Here the server is the real handler
//! (examples/line_echo/handler.rs) in a child process whose
//! `RLIMIT_NOFILE` leaves it `FREE_FDS` descriptors; two threads here
//! connect `STORM` times over about a second, closing every other
//! connection at once. Each connection is an edge on the listener the
//! server cannot act on. The storm stays under the listener's backlog
//! (1,024), so every connection is queued rather than dropped, and all of
//! them must be accepted in the end.

use std::io;
use std::net::{SocketAddr, TcpStream as StdTcpStream};
use std::time::{Duration, Instant};

use ioloop::io::{StreamReader, StreamWriter};
use ioloop::net::TcpStream;
use stress_echo_child::{EchoChild, Settings};
use testkit::{net_proc, stress_echo_child, util};

const TEST: &str = "an_emfile_storm_costs_little_cpu_and_every_waiting_client_is_served";
/// Descriptors the server is left with once listening.
const FREE_FDS: usize = 32;
/// Connections queued before the storm, beyond those the server holds.
const EXTRA: usize = 8;
/// Connections made during the storm, over about a second (half closed at
/// once): with the others, under the backlog of 1,024.
const STORM: usize = 800;
/// The server's CPU over the storm, as a share of the wall time. The
/// failure this guards against, retrying `accept` at once, is a busy loop
/// near 100%; the back-off costs a few wake-ups, and each incoming
/// connection one more.
const CPU_SHARE: f64 = 0.25;

#[test]
fn an_emfile_storm_costs_little_cpu_and_every_waiting_client_is_served() -> io::Result<()> {
    let _one = crate::one_at_a_time();
    if stress_echo_child::is_child() {
        return stress_echo_child::serve();
    }
    let needed = (FREE_FDS + EXTRA + STORM) as u64 + 256;
    if !util::fd_limit_at_least(needed) {
        println!("skipped: RLIMIT_NOFILE cannot be raised to {needed}");
        return Ok(());
    }
    let settings = Settings {
        free_fds: Some(FREE_FDS),
        ..Settings::default()
    };
    let server = match EchoChild::start(&net_proc::test_name(module_path!(), TEST), settings)? {
        Ok(server) => server,
        Err(reason) => {
            println!("skipped: {reason}");
            return Ok(());
        }
    };
    util::within(Duration::from_secs(120), move || run(server))
}

fn run(mut server: EchoChild) -> io::Result<()> {
    let addr = server.addr;
    // Fill the server's table: it accepts FREE_FDS, the rest queue.
    let mut held = Vec::new();
    for _ in 0..FREE_FDS + EXTRA {
        held.push(StdTcpStream::connect(addr)?);
    }
    let full = server.wait_for(Duration::from_secs(30), |s| s.accepted == FREE_FDS as u64)?;
    // Stable: nothing more gets in.
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(server.stats()?.accepted, full.accepted);

    // The storm, with the server's CPU measured across it.
    let cpu_before = net_proc::cpu_time_of(server.pid)?;
    let since = Instant::now();
    let stormers: Vec<_> = (0..2)
        .map(|_| std::thread::spawn(move || storm(addr, STORM / 2)))
        .collect();
    let mut waiting: Vec<StdTcpStream> = held.split_off(FREE_FDS);
    for stormer in stormers {
        waiting.extend(stormer.join().expect("a storm thread panicked")?);
    }
    // A quiet stretch too: a loop that spins does so without new edges.
    std::thread::sleep(Duration::from_millis(300));
    let cpu = net_proc::cpu_time_of(server.pid)? - cpu_before;
    let elapsed = since.elapsed();
    let stuck = server.stats()?;
    assert_eq!(stuck.accepted, full.accepted, "accepted at EMFILE?");
    assert!(
        cpu.as_secs_f64() < CPU_SHARE * elapsed.as_secs_f64(),
        "the server used {cpu:?} of CPU in {elapsed:?} at EMFILE: it spins"
    );

    // Free the descriptors: every waiting client gets its greeting and its
    // echo, each closing after, which frees a descriptor for the next.
    let resumed = Instant::now();
    drop(held);
    let served = ioloop::block_on(async move {
        let clients: Vec<_> = waiting
            .into_iter()
            .enumerate()
            .map(|(i, s)| ioloop::spawn(async move { serve_me(s, i).await }))
            .collect();
        let mut served = 0;
        for client in clients {
            client.await.expect("a client panicked")?;
            served += 1;
        }
        io::Result::Ok(served)
    })?;
    let resume_time = resumed.elapsed();

    // Every connection ever made was accepted, and ended; nothing is left.
    let total = (FREE_FDS + EXTRA + STORM) as u64;
    let end = server.wait_for(Duration::from_secs(60), |s| {
        s.accepted == total && s.ended() == total && s.io_sources == 1
    })?;
    println!(
        "EMFILE storm: {STORM} connects in {elapsed:?} (with a quiet 300 ms) cost the server \
         {cpu:?} of CPU; {served} waiting clients served within {resume_time:?} of the release; \
         {end:?}"
    );
    server.finish()
}

/// Connects `n` times over about a second; keeps every other connection,
/// closes the rest at once (a client giving up while queued).
fn storm(addr: SocketAddr, n: usize) -> io::Result<Vec<StdTcpStream>> {
    let mut kept = Vec::new();
    for i in 0..n {
        let stream = StdTcpStream::connect_timeout(&addr, Duration::from_secs(5))?;
        if i % 2 == 0 {
            kept.push(stream);
        }
        std::thread::sleep(Duration::from_micros(2_500));
    }
    Ok(kept)
}

/// A client that waited through the shortage: greeting, one echo, close.
async fn serve_me(stream: StdTcpStream, i: usize) -> io::Result<()> {
    let stream = TcpStream::from_std(stream)?;
    let mut reader = StreamReader::new(&stream);
    let mut writer = StreamWriter::new(&stream);
    assert_eq!(
        reader.read_line().await?,
        Some(&b"Hello!"[..]),
        "client {i}"
    );
    writer.write(format!("still here {i}\n").as_bytes());
    writer.drain().await?;
    let echo = format!("[echo] still here {i}");
    assert_eq!(
        reader.read_line().await?,
        Some(echo.as_bytes()),
        "client {i}"
    );
    writer.close().await?;
    assert_eq!(reader.read_line().await?, None, "client {i}");
    Ok(())
}
