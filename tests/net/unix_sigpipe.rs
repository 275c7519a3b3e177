//! No `SIGPIPE` from a Unix stream either, where std and mio would
//! `write(2)` and raise it: writes that cannot go return `BrokenPipe` or
//! `ConnectionReset`, in a child that restored the signal's default
//! action (see tcp_sigpipe.rs for the method). The child surviving to exit
//! 0 is the proof.

use std::io;
use std::net::Shutdown;
use std::os::unix::process::ExitStatusExt;

use futures_util::AsyncWriteExt;
use ioloop::io::StreamWriter;
use ioloop::net::{UnixListener, UnixStream};
use testkit::{net_proc, net_run, net_unix};

const TEST: &str = "unix_writes_that_would_raise_sigpipe_return_errors";
const CHILD: &str = "IOLOOP_TEST_UNIX_SIGPIPE_CHILD";
const TAG: &str = "unix-sigpipe-child:";

#[test]
fn unix_writes_that_would_raise_sigpipe_return_errors() -> io::Result<()> {
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

fn gone(err: &io::Error) -> bool {
    [io::ErrorKind::BrokenPipe, io::ErrorKind::ConnectionReset].contains(&err.kind())
}

fn child() -> io::Result<()> {
    // SAFETY: restoring a signal's default action is async-signal-safe and
    // affects only this process, which runs no signal handlers of its own.
    let previous = unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    assert_ne!(previous, libc::SIG_ERR);
    net_run::run(|| async {
        // Our own write side shut down: EPIPE on every kind of write.
        let (mut ours, _peer) = UnixStream::pair()?;
        ours.shutdown(Shutdown::Write)?;
        let err = ours.write_all(b"after shutdown").await.unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::BrokenPipe);
        let slices = [io::IoSlice::new(b"two"), io::IoSlice::new(b" slices")];
        let err = ours.write_vectored(&slices).await.unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::BrokenPipe);
        ours.writable().await?;
        assert!(gone(&ours.try_write(b"x").unwrap_err()));
        assert!(gone(&ours.try_write_vectored(&slices).unwrap_err()));

        // The peer closed, through a listener: every write fails.
        let dir = net_unix::TempDir::new()?;
        let listener = UnixListener::bind(dir.join("pipe.sock"))?;
        let mut client = UnixStream::connect(dir.join("pipe.sock")).await?;
        let (server, _) = listener.accept().await?;
        drop(server);
        for _ in 0..3 {
            let err = client.write_all(&[1; 512]).await.unwrap_err();
            assert!(gone(&err), "got {err:?}");
        }
        // And through a StreamWriter and an owned write half.
        let (ours, peer) = UnixStream::pair()?;
        drop(peer);
        let (_reader, writer) = ours.into_split();
        let mut writer = StreamWriter::new(writer);
        writer.write(b"queued for no one");
        let err = writer.drain().await.unwrap_err();
        assert!(gone(&err), "got {err:?}");
        Ok(())
    })?;
    println!("{TAG} survived");
    Ok(())
}
