//! Ctrl-C stops `line_echo` gracefully: the test runs the example's server
//! (examples/line_echo/server.rs) in a child process, connects clients,
//! sends the child SIGINT, and checks that it stops accepting, lets a
//! client finish its line, closes every connection, says `reactor
//! stopped`, and exits 0; with `--loops 2` too, every loop holding a
//! connection. And SIGQUIT (Ctrl-\\) makes it print its task dump and
//! serve on.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};
use testkit::{handler, net_proc, server};

const CHILD: &str = "IOLOOP_LINE_ECHO_CHILD";
const SAFETY: Duration = Duration::from_secs(20);

/// The child's role: the example's server, exactly as `main` runs it,
/// with as many loops as the variable says.
#[test]
fn line_echo_server_child() -> io::Result<()> {
    let Some(loops) = std::env::var(CHILD).ok().and_then(|v| v.parse().ok()) else {
        return Ok(()); // only meaningful in the child
    };
    server::run(
        0,
        loops,
        handler::Config::default(),
        Duration::from_secs(10),
    )
}

#[test]
fn sigint_stops_line_echo_gracefully() -> io::Result<()> {
    sigint_stops_line_echo(1)
}

#[test]
fn sigint_stops_every_loop_of_line_echo() -> io::Result<()> {
    sigint_stops_line_echo(2)
}

/// Starts the child server with `loops` loops; returns it and its stderr,
/// line by line.
fn start_child(loops: usize) -> io::Result<(Child, mpsc::Receiver<String>)> {
    let mut child = Command::new(std::env::current_exe()?)
        .args([
            "--exact",
            &net_proc::test_name(module_path!(), "line_echo_server_child"),
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD, loops.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()?;
    // The child's stderr, line by line, on a thread, so reading it never
    // blocks the test.
    let (lines_tx, lines) = mpsc::channel::<String>();
    let stderr = child.stderr.take().expect("piped");
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = lines_tx.send(line);
        }
    });
    Ok((child, lines))
}

/// Waits for the child to say `tag`; returns the rest of the line. Every
/// line read is kept in `log`.
fn wait_for(
    lines: &mpsc::Receiver<String>,
    tag: &str,
    log: &mut Vec<String>,
) -> io::Result<String> {
    let deadline = Instant::now() + SAFETY;
    while let Ok(line) = lines.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
        log.push(line.clone());
        if let Some(at) = line.find(tag) {
            return Ok(line[at + tag.len()..].trim().to_string());
        }
    }
    Err(io::Error::other(format!(
        "no {tag:?} from the child; it said {log:?}"
    )))
}

/// SIGQUIT makes the server print its tasks, each connection waiting to
/// read its next line under the idle timer, and serve on.
#[test]
fn sigquit_prints_the_task_dump_of_line_echo() -> io::Result<()> {
    let (mut child, lines) = start_child(1)?;
    let mut log = Vec::new();
    let said = wait_for(&lines, "listening on", &mut log)?;
    let addr = said.split(' ').next().unwrap_or_default().to_string();
    let mut clients = Vec::new();
    for _ in 0..2 {
        let s = TcpStream::connect(&addr)?;
        s.set_read_timeout(Some(SAFETY))?;
        let mut r = BufReader::new(s.try_clone()?);
        let mut hello = String::new();
        r.read_line(&mut hello)?;
        clients.push((s, r));
        wait_for(&lines, "connected: ", &mut log)?;
    }
    // SAFETY: kill(2) with a valid pid and signal number has no memory
    // effects on this process.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGQUIT) }, 0);
    let count = wait_for(&lines, "ioloop task dump:", &mut log)?;
    assert!(count.starts_with("2 live task(s)"), "{log:?}");
    for _ in 0..2 {
        let task = wait_for(&lines, "task #", &mut log)?;
        assert!(task.contains("handler.rs"), "{log:?}");
        assert!(task.contains("idle"), "{log:?}");
        assert!(task.contains("waits on reading I/O source"), "{log:?}");
        assert!(task.contains("a timer due in"), "{log:?}");
    }
    // Still serving.
    let (s, r) = &mut clients[0];
    s.write_all(b"after the dump\n")?;
    let mut reply = String::new();
    r.read_line(&mut reply)?;
    assert_eq!(reply, "[echo] after the dump\n");
    // SAFETY: as above.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
    wait_for(&lines, "reactor stopped", &mut log)?;
    let status = child.wait()?;
    assert!(status.success(), "{status:?}; it said {log:?}");
    Ok(())
}

fn sigint_stops_line_echo(loops: usize) -> io::Result<()> {
    let (mut child, lines) = start_child(loops)?;
    let mut log = Vec::new();
    let wait_for = |tag: &str, log: &mut Vec<String>| wait_for(&lines, tag, log);
    // "ADDR", or "ADDR with N loops".
    let said = wait_for("listening on", &mut log)?;
    let addr = said.split(' ').next().unwrap_or_default().to_string();

    let connect = || -> io::Result<(TcpStream, BufReader<TcpStream>)> {
        let s = TcpStream::connect(&addr)?;
        s.set_read_timeout(Some(SAFETY))?;
        let mut r = BufReader::new(s.try_clone()?);
        let mut hello = String::new();
        r.read_line(&mut hello)?;
        assert_eq!(hello, "Hello!\n");
        Ok((s, r))
    };
    let (mut busy, mut busy_r) = connect()?;
    busy.write_all(b"a line in prog")?;
    let mut idle = Vec::new();
    // Idle clients until every loop holds at least one connection: the
    // kernel picks the loop, and 64 without one is a broken spread.
    let mut seen = vec![false; loops];
    while seen.contains(&false) {
        assert!(idle.len() < 64, "no connection reached some loop: {log:?}");
        idle.push(connect()?);
        // The child logs each connection it accepted: wait for them all.
        while log.iter().filter(|l| accepted_by(l).is_some()).count() < idle.len() + 1 {
            wait_for("connected: ", &mut log)?;
        }
        for index in log.iter().filter_map(|l| accepted_by(l)) {
            seen[index] = true;
        }
    }

    // SAFETY: kill(2) with a valid pid and signal number has no memory
    // effects on this process.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
    wait_for("SIGINT", &mut log)?;

    // The idle clients are closed at once: EOF.
    let mut rest = Vec::new();
    for (_, mut idle_r) in idle {
        idle_r.read_to_end(&mut rest)?;
        assert!(rest.is_empty());
    }
    // The busy client finishes its line, gets its reply, then EOF.
    busy.write_all(b"ress\n")?;
    let mut reply = String::new();
    busy_r.read_line(&mut reply)?;
    assert_eq!(reply, "[echo] a line in progress\n");
    rest.clear();
    busy_r.read_to_end(&mut rest)?;
    assert!(rest.is_empty());

    wait_for("reactor stopped", &mut log)?;
    let deadline = Instant::now() + SAFETY;
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if Instant::now() > deadline {
            child.kill()?;
            panic!("the child did not exit after SIGINT; it said {log:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    assert!(status.success(), "{status:?}; it said {log:?}");
    // Accepting stopped: nobody listens on the port any more.
    assert!(TcpStream::connect(&addr).is_err());
    Ok(())
}

/// The loop that accepted the connection a log line announces, if it
/// announces one: `connected: PEER` (one loop) or `loop I: connected: PEER`.
fn accepted_by(line: &str) -> Option<usize> {
    if line.starts_with("connected: ") {
        return Some(0);
    }
    let (index, rest) = line.strip_prefix("loop ")?.split_once(": ")?;
    rest.starts_with("connected: ")
        .then(|| index.parse().ok())
        .flatten()
}
