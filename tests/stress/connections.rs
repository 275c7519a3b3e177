//! Ten thousand concurrent connections to the line echo handler, each
//! sending a few lines and checking every reply.
//!
//! The server is examples/line_echo/handler.rs in a child process
//! (`stress_echo_child`): 10,000 client sockets here and 10,000 server
//! sockets there each fit under the machine's descriptor limit, where one
//! process holding both sides might not. The test is skipped, with a
//! message, if `RLIMIT_NOFILE` cannot be raised far enough.
//!
//! First every client connects and reads its greeting, in waves that stay
//! under the listener's backlog, so all 10,000 are open at once (the
//! server's registered sources say so); then all of them at once pipeline
//! their lines, check each echo, half-close, and expect end of file.

use std::io;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use futures_util::AsyncReadExt;
use ioloop::io::{StreamReader, StreamWriter};
use ioloop::net::TcpStream;
use stress_echo_child::{EchoChild, Settings};
use testkit::{net_proc, stress_echo_child, stress_proc, util};

const TEST: &str = "ten_thousand_concurrent_connections_each_get_their_echoes";
const CLIENTS: usize = 10_000;
/// Connections opened at once: under the listener's backlog (1024), so no
/// SYN is dropped and no connect waits a second for its retransmission.
const WAVE: usize = 500;
const LINES: usize = 3;
/// Safety net; never what the test measures.
const SAFETY: Duration = Duration::from_secs(120);
/// How long the server may take to see every connection end.
const SETTLE: Duration = Duration::from_secs(60);

#[test]
fn ten_thousand_concurrent_connections_each_get_their_echoes() -> io::Result<()> {
    let _one = crate::one_at_a_time();
    if stress_echo_child::is_child() {
        return stress_echo_child::serve();
    }
    // Each process needs one descriptor per connection, plus a few.
    let needed = CLIENTS as u64 + 256;
    if !util::fd_limit_at_least(needed) {
        println!("skipped: RLIMIT_NOFILE cannot be raised to {needed}");
        return Ok(());
    }
    // The child inherits the raised limit.
    let server = match EchoChild::start(
        &net_proc::test_name(module_path!(), TEST),
        Settings::default(),
    )? {
        Ok(server) => server,
        Err(reason) => {
            println!("skipped: {reason}");
            return Ok(());
        }
    };
    util::within(SAFETY, move || run(server))
}

fn run(mut server: EchoChild) -> io::Result<()> {
    let addr = server.addr;
    // One client runtime for both phases: the streams are registered with it.
    let rt = ioloop::Runtime::new()?;
    let start = Instant::now();
    let streams = rt.block_on(connect_all(addr))?;
    let connected = start.elapsed();

    // Every connection is open on both sides at this point.
    let stats = server.stats()?;
    assert_eq!(stats.accepted, CLIENTS as u64, "{stats:?}");
    assert_eq!(stats.io_sources, CLIENTS as u64 + 1, "{stats:?}");
    let peak_fds = stress_proc::fd_count_of(server.pid)?;

    let echoed = rt.block_on(async move {
        let tasks: Vec<_> = streams
            .into_iter()
            .enumerate()
            .map(|(id, stream)| ioloop::spawn(converse(stream, id)))
            .collect();
        let mut echoed = 0;
        for task in tasks {
            echoed += task.await.expect("a client task panicked")?;
        }
        io::Result::Ok(echoed)
    })?;
    assert_eq!(echoed, CLIENTS * LINES);

    // The server saw each one close, and holds nothing for any of them.
    let stats = server.wait_for(SETTLE, |s| s.ended() == CLIENTS as u64)?;
    assert_eq!(stats.closed, CLIENTS as u64, "{stats:?}");
    let stats = server.wait_for(SETTLE, |s| s.io_sources == 1 && s.live_tasks == 0)?;
    assert_eq!(stats.live_timers, 0, "{stats:?}");
    println!(
        "{CLIENTS} connections open at once in {connected:?} ({peak_fds} server fds, peak RSS {}); \
         {echoed} echoes checked, {:?} in all",
        stress_proc::mib(stress_proc::peak_rss_of(server.pid)?),
        start.elapsed()
    );
    server.finish()
}

/// Opens every connection and reads its greeting, `WAVE` at a time.
async fn connect_all(addr: SocketAddr) -> io::Result<Vec<TcpStream>> {
    let mut streams = Vec::with_capacity(CLIENTS);
    while streams.len() < CLIENTS {
        let wave: Vec<_> = (0..WAVE.min(CLIENTS - streams.len()))
            .map(|_| ioloop::spawn(connect(addr)))
            .collect();
        for task in wave {
            streams.push(task.await.expect("a connecting task panicked")?);
        }
    }
    Ok(streams)
}

async fn connect(addr: SocketAddr) -> io::Result<TcpStream> {
    let stream = TcpStream::connect(addr).await?;
    // Exactly the greeting: the server says nothing more until spoken to.
    let mut greeting = [0; 7];
    (&stream).read_exact(&mut greeting).await?;
    assert_eq!(&greeting, b"Hello!\n");
    Ok(stream)
}

/// Pipelines `LINES` lines, checks every echo in order, half-closes, and
/// expects end of file. Returns the number of echoes checked.
async fn converse(stream: TcpStream, id: usize) -> io::Result<usize> {
    let mut reader = StreamReader::new(&stream);
    let mut writer = StreamWriter::new(&stream);
    for n in 0..LINES {
        writer.write(format!("client {id} line {n}\n").as_bytes());
    }
    writer.drain().await?;
    for n in 0..LINES {
        let reply = reader.read_line().await?;
        assert_eq!(
            reply,
            Some(format!("[echo] client {id} line {n}").as_bytes()),
            "client {id}"
        );
    }
    writer.close().await?;
    assert_eq!(
        reader.read_line().await?,
        None,
        "client {id}: more after the echoes"
    );
    Ok(LINES)
}
