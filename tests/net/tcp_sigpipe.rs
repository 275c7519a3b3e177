//! No `SIGPIPE`, ever: writing to a connection that cannot take it returns
//! `BrokenPipe` or `ConnectionReset` even in a process where the signal
//! still kills (a C program embedding us has not ignored it, as Rust's
//! start-up code does).
//!
//! The parent re-runs this test as a child that restores `SIGPIPE`'s
//! default action and then writes where `write(2)` or `writev(2)` would
//! raise it. The child surviving to exit 0 is the proof.

use std::io;
use std::net::Shutdown;
use std::os::unix::process::ExitStatusExt;

use futures_util::AsyncWriteExt;
use ioloop::net::{TcpListener, TcpStream};
use testkit::{net_proc, net_run};

const TEST: &str = "writes_that_would_raise_sigpipe_return_errors";
const CHILD: &str = "IOLOOP_TEST_SIGPIPE_CHILD";
const TAG: &str = "sigpipe-child:";

#[test]
fn writes_that_would_raise_sigpipe_return_errors() -> io::Result<()> {
    if net_proc::is_child(CHILD) {
        return child();
    }
    let mut child = net_proc::spawn_child(&net_proc::test_name(module_path!(), TEST), CHILD)?;
    drop(child.stdin.take());
    let mut lines = net_proc::child_lines(&mut child);
    let said = net_proc::expect_line(&mut lines, TAG);
    let status = child.wait()?;
    assert_ne!(
        status.signal(),
        Some(libc::SIGPIPE),
        "the child died of SIGPIPE"
    );
    assert!(status.success(), "child: {status}");
    assert_eq!(said?, "survived");
    Ok(())
}

fn child() -> io::Result<()> {
    // SAFETY: restoring a signal's default action is async-signal-safe and
    // affects only this process, which runs no signal handlers of its own.
    let previous = unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    assert_ne!(previous, libc::SIG_ERR);
    net_run::run(|| async {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;

        // Our own write side shut down: EPIPE on the very first write.
        let mut client = TcpStream::connect(addr).await?;
        let (_server, _) = listener.accept().await?;
        client.shutdown(Shutdown::Write)?;
        let err = client.write_all(b"after shutdown").await.unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::BrokenPipe);
        // A vectored write too: `sendmsg` with MSG_NOSIGNAL, not `writev`.
        let slices = [io::IoSlice::new(b"two"), io::IoSlice::new(b" slices")];
        let err = client.write_vectored(&slices).await.unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::BrokenPipe);
        let err = client.try_write_vectored(&slices).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::BrokenPipe);

        // The peer closed: its reset, then EPIPE on every write after.
        let mut client = TcpStream::connect(addr).await?;
        let (server, _) = listener.accept().await?;
        drop(server);
        let mut errors = 0;
        while errors < 3 {
            match client.write_all(&[1; 512]).await {
                Ok(()) => ioloop::yield_now().await,
                Err(err) => {
                    let gone = [io::ErrorKind::BrokenPipe, io::ErrorKind::ConnectionReset];
                    assert!(gone.contains(&err.kind()), "got {err:?}");
                    errors += 1;
                }
            }
        }
        Ok(())
    })?;
    println!("{TAG} survived");
    Ok(())
}
