//! Out of file descriptors, the accept loop backs off instead of spinning,
//! and resumes once descriptors are freed.
//!
//! The test runs itself twice: the parent re-executes this binary as a
//! child (selected by an environment variable) whose `RLIMIT_NOFILE` is
//! lowered to leave it a few free descriptors. The child accepts and holds
//! connections until its table is full; the parent keeps connecting, reads
//! the child's CPU time from `/proc/<pid>/stat` over a second of `EMFILE`,
//! then tells the child (on its stdin) to drop what it holds, and checks
//! that every connection queued meanwhile gets served.
//!
//! The CPU time measured is the child's, and the child runs this test
//! alone (`--exact`): the other tests of the binary never run in it.

use std::io::{self, BufRead, Read, Write};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::AsyncWriteExt;
use ioloop::net::{TcpListener, TcpStream};
use testkit::{net_proc, util};

const TEST: &str = "accept_backs_off_at_emfile_and_resumes";
const CHILD: &str = "IOLOOP_TEST_EMFILE_CHILD";
/// What the child prints before each report, to tell it from the harness's
/// own output.
const TAG: &str = "emfile-child:";
/// Descriptors the child is left with when it starts accepting.
const FREE_FDS: usize = 32;
/// Connections queued beyond what the child can accept, before and while
/// its CPU is measured.
const EXTRA_BEFORE: usize = 8;
const EXTRA_DURING: usize = 10;

#[test]
fn accept_backs_off_at_emfile_and_resumes() -> io::Result<()> {
    if net_proc::is_child(CHILD) {
        return child();
    }
    util::within(Duration::from_secs(120), parent)
}

fn parent() -> io::Result<()> {
    let mut child = net_proc::spawn_child(&net_proc::test_name(module_path!(), TEST), CHILD)?;
    let mut lines = net_proc::child_lines(&mut child);
    let start = net_proc::expect_line(&mut lines, TAG)?;
    if let Some(reason) = start.strip_prefix("SKIP") {
        println!("skipped: the child could not lower RLIMIT_NOFILE:{reason}");
        child.wait()?;
        return Ok(());
    }
    let addr: SocketAddr = start
        .strip_prefix("LISTENING")
        .unwrap()
        .trim()
        .parse()
        .unwrap();

    // Fill the child's table, and queue some more behind it.
    let mut clients = Vec::new();
    for _ in 0..FREE_FDS + EXTRA_BEFORE {
        clients.push(std::net::TcpStream::connect(addr)?);
    }
    let held: usize = net_proc::expect_line(&mut lines, TAG)?
        .strip_prefix("FULL")
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(held > 0 && held <= FREE_FDS, "held {held}");

    // Stuck at EMFILE with connections queued: measure the child's CPU
    // while connecting more (each is an edge on its listener).
    let pid = child.id();
    let cpu_before = net_proc::cpu_time_of(pid)?;
    let since = Instant::now();
    for _ in 0..EXTRA_DURING {
        clients.push(std::net::TcpStream::connect(addr)?);
        std::thread::sleep(Duration::from_millis(100)); // spread over ~1 s
    }
    let cpu = net_proc::cpu_time_of(pid)? - cpu_before;
    let elapsed = since.elapsed();
    assert!(
        cpu.as_secs_f64() < 0.1 * elapsed.as_secs_f64(),
        "the child used {cpu:?} of CPU in {elapsed:?} at EMFILE: it spins"
    );

    // Free the held descriptors: every queued connection gets served.
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"release\n")?;
    stdin.flush()?;
    clients.push(std::net::TcpStream::connect(addr)?);
    for (i, client) in clients.iter_mut().enumerate() {
        client.set_read_timeout(Some(Duration::from_secs(60)))?; // safety net
        let mut reply = String::new();
        client.read_to_string(&mut reply)?;
        let expected = if i < held { "" } else { "served\n" };
        assert_eq!(reply, expected, "client {i} (the child held {held})");
    }
    drop(stdin); // end of input: the child exits
    let status = child.wait()?;
    assert!(status.success(), "child: {status}");
    Ok(())
}

/// The child: an accept loop in a process with few free descriptors.
fn child() -> io::Result<()> {
    let release = util::signal();
    let exit = util::signal();
    let (release_tx, exit_tx) = (release.clone(), exit.clone());
    std::thread::spawn(move || {
        for line in io::stdin().lock().lines() {
            if line.as_deref().unwrap_or_default() == "release" {
                release_tx.set();
            }
        }
        exit_tx.set();
    });
    ioloop::block_on(async {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        if let Err(err) = net_proc::set_fd_limit(limit_leaving(FREE_FDS)?) {
            println!("{TAG} SKIP {err}");
            return Ok(());
        }
        println!("{TAG} LISTENING {}", listener.local_addr()?);

        let held = Arc::new(Mutex::new(Vec::new()));
        let released = Arc::new(AtomicBool::new(false));
        let (held2, released2) = (held.clone(), released.clone());
        let _release = ioloop::spawn(async move {
            release.wait().await;
            released2.store(true, Ordering::SeqCst);
            held2.lock().unwrap().clear();
        });
        let _accept = ioloop::spawn(accept_loop(listener, held, released));
        exit.wait().await;
        Ok(())
    })
}

/// Accepts and holds connections until released, then serves them.
async fn accept_loop(
    listener: TcpListener,
    held: Arc<Mutex<Vec<TcpStream>>>,
    released: Arc<AtomicBool>,
) -> io::Result<()> {
    loop {
        let (stream, _) = listener.accept().await?;
        if released.load(Ordering::SeqCst) {
            let _served = ioloop::spawn(serve(stream));
            continue;
        }
        let mut held = held.lock().unwrap();
        held.push(stream);
        if table_is_full() {
            println!("{TAG} FULL {}", held.len());
        }
    }
}

async fn serve(mut stream: TcpStream) -> io::Result<()> {
    stream.write_all(b"served\n").await
}

/// The `RLIMIT_NOFILE` under which exactly `free` descriptor numbers are
/// unused. New descriptors take the lowest free number, and fail with
/// `EMFILE` once that is at or above the limit; open descriptors may leave
/// gaps (inherited ones sit at high numbers), so count the gaps.
fn limit_leaving(free: usize) -> io::Result<u64> {
    let open = net_proc::open_fds()?;
    let mut unused = 0;
    for fd in 0.. {
        if !open.contains(&fd) {
            unused += 1;
            if unused == free {
                return Ok(fd as u64 + 1);
            }
        }
    }
    unreachable!()
}

/// Whether opening one more descriptor fails with `EMFILE`.
fn table_is_full() -> bool {
    match std::fs::File::open("/dev/null") {
        Ok(_) => false,
        Err(err) => err.raw_os_error() == Some(libc::EMFILE),
    }
}
