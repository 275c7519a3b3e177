//! Out of file descriptors, a Unix listener's accept loop backs off
//! instead of spinning, and resumes once descriptors are freed: the TCP
//! scenario of tcp_emfile.rs (read it for the method) on the accept loop
//! the two listeners share.
//!
//! The child binds a listener in a temporary directory and prints its
//! path; the parent connects with blocking std streams. Unix connections
//! queue in the listener's backlog as TCP ones do, and each new one is an
//! edge on the listener.

use std::io::{self, BufRead, Read, Write};
use std::os::unix::net::UnixStream as StdStream;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::AsyncWriteExt;
use ioloop::net::{UnixListener, UnixStream};
use testkit::{net_proc, net_unix, util};

const TEST: &str = "unix_accept_backs_off_at_emfile_and_resumes";
const CHILD: &str = "IOLOOP_TEST_UNIX_EMFILE_CHILD";
const TAG: &str = "unix-emfile-child:";
/// Descriptors the child is left with when it starts accepting.
const FREE_FDS: usize = 32;
/// Connections queued beyond what the child can accept, before and while
/// its CPU is measured.
const EXTRA_BEFORE: usize = 8;
const EXTRA_DURING: usize = 10;

#[test]
fn unix_accept_backs_off_at_emfile_and_resumes() -> io::Result<()> {
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
    let path = PathBuf::from(start.strip_prefix("LISTENING").unwrap().trim());

    // Fill the child's table, and queue some more behind it.
    let mut clients = Vec::new();
    for _ in 0..FREE_FDS + EXTRA_BEFORE {
        clients.push(StdStream::connect(&path)?);
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
        clients.push(StdStream::connect(&path)?);
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
    clients.push(StdStream::connect(&path)?);
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
    let dir = net_unix::TempDir::new()?;
    let path = dir.join("emfile.sock");
    ioloop::block_on(async {
        let listener = UnixListener::bind(&path)?;
        if let Err(err) = net_proc::set_fd_limit(limit_leaving(FREE_FDS)?) {
            println!("{TAG} SKIP {err}");
            return Ok(());
        }
        println!("{TAG} LISTENING {}", path.display());

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
        Ok::<_, io::Error>(())
    })
}

/// Accepts and holds connections until released, then serves them.
async fn accept_loop(
    listener: UnixListener,
    held: Arc<Mutex<Vec<UnixStream>>>,
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

async fn serve(mut stream: UnixStream) -> io::Result<()> {
    stream.write_all(b"served\n").await
}

/// The `RLIMIT_NOFILE` under which exactly `free` descriptor numbers are
/// unused (see tcp_emfile.rs).
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
