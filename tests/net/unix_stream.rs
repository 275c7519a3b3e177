//! Unix streams: a line echo through the asyncio-style streams, pairs and
//! peer credentials, peek and `try_*`, a vectored mebibyte, half-close,
//! halves in two tasks, abstract names, and the errors of bind and connect.

use std::io::{self, IoSlice};
use std::net::Shutdown;
use std::os::unix::net::SocketAddr;
use std::time::Duration;

use futures_util::{AsyncReadExt, AsyncWriteExt};
use ioloop::io::{StreamReader, StreamWriter};
use ioloop::net::{UnixListener, UnixStream};
use net_run::run;
use testkit::{net_run, net_unix};

/// Lines a client sends through the echo; each comes back as it went.
const LINES: usize = 200;

/// The server side of the line echo: each line back, with its newline,
/// until the client closes; returns how many lines it echoed.
async fn echo_lines(stream: UnixStream) -> io::Result<usize> {
    let mut reader = StreamReader::new(&stream);
    let mut writer = StreamWriter::new(&stream);
    let mut echoed = 0;
    while let Some(line) = reader.read_line().await? {
        writer.write(line);
        writer.write(b"\n");
        writer.drain().await?;
        echoed += 1;
    }
    Ok(echoed)
}

#[test]
fn line_echo_over_a_unix_listener() -> io::Result<()> {
    run(|| async {
        let dir = net_unix::TempDir::new()?;
        let path = dir.join("echo.sock");
        let listener = UnixListener::bind(&path)?;
        assert_eq!(listener.local_addr()?.as_pathname(), Some(path.as_path()));
        let server = ioloop::spawn(async move {
            let (stream, peer) = listener.accept().await?;
            assert!(peer.is_unnamed(), "the client did not bind: {peer:?}");
            echo_lines(stream).await
        });

        let client = UnixStream::connect(&path).await?;
        assert_eq!(client.peer_addr()?.as_pathname(), Some(path.as_path()));
        let mut reader = StreamReader::new(&client);
        let mut writer = StreamWriter::new(&client);
        for i in 0..LINES {
            let line = format!("line {i} {}", "x".repeat(i));
            writer.write(line.as_bytes());
            writer.write(b"\n");
            writer.drain().await?;
            let echoed = reader.read_line().await?.expect("an echo, not end of file");
            assert_eq!(echoed, line.as_bytes());
        }
        client.shutdown(Shutdown::Write)?;
        assert_eq!(reader.read_line().await?, None);
        assert_eq!(server.await.unwrap()?, LINES);
        Ok(())
    })
}

#[test]
fn a_pair_talks_both_ways_and_knows_its_peer() -> io::Result<()> {
    run(|| async {
        let (mut a, mut b) = UnixStream::pair()?;
        assert!(a.local_addr()?.is_unnamed());
        assert!(b.peer_addr()?.is_unnamed());
        a.write_all(b"ping").await?;
        let mut buf = [0u8; 4];
        b.read_exact(&mut buf).await?;
        assert_eq!(&buf, b"ping");
        b.write_all(b"pong").await?;
        a.read_exact(&mut buf).await?;
        assert_eq!(&buf, b"pong");
        Ok(())
    })
}

/// This process's effective user and group.
fn our_ids() -> (u32, u32) {
    // SAFETY: geteuid and getegid take no arguments, cannot fail and touch
    // no memory of ours.
    unsafe { (libc::geteuid(), libc::getegid()) }
}

#[test]
fn peer_cred_is_this_process_on_a_pair_and_through_a_listener() -> io::Result<()> {
    run(|| async {
        let (uid, gid) = our_ids();
        let pid = Some(std::process::id() as i32);

        let (a, b) = UnixStream::pair()?;
        for end in [&a, &b] {
            let cred = end.peer_cred()?;
            assert_eq!((cred.uid(), cred.gid(), cred.pid()), (uid, gid, pid));
        }

        let dir = net_unix::TempDir::new()?;
        let listener = UnixListener::bind(dir.join("cred.sock"))?;
        let client = UnixStream::connect(dir.join("cred.sock")).await?;
        let (server, _) = listener.accept().await?;
        for end in [&client, &server] {
            let cred = end.peer_cred()?;
            assert_eq!((cred.uid(), cred.gid(), cred.pid()), (uid, gid, pid));
        }
        Ok(())
    })
}

/// A peer of another user: as root (as CI runs the tests), a thread of
/// this process takes user and group 65534 for itself alone (the raw
/// system calls: glibc's wrappers would change every thread) and connects;
/// `peer_cred` names that user and group, not ours, nor 0. Not as root,
/// the thread stays ours, which is not 0 either.
#[test]
fn peer_cred_names_the_user_and_group_the_peer_connected_as() -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    run(|| async {
        let (uid, gid) = our_ids();
        let want: (u32, u32) = if uid == 0 { (65534, 65534) } else { (uid, gid) };
        let dir = net_unix::TempDir::new()?;
        let path = dir.join("other.sock");
        let listener = UnixListener::bind(&path)?;
        for open in [dir.path(), path.as_path()] {
            std::fs::set_permissions(open, std::fs::Permissions::from_mode(0o777))?;
        }
        let connect = std::thread::spawn(move || {
            if want != (uid, gid) {
                // SAFETY: plain system calls on integers; they change this
                // thread's ids alone, and the thread ends after connecting.
                let (g, u) = unsafe {
                    (
                        libc::syscall(libc::SYS_setresgid, want.1, want.1, want.1),
                        libc::syscall(libc::SYS_setresuid, want.0, want.0, want.0),
                    )
                };
                assert_eq!((g, u), (0, 0), "{}", io::Error::last_os_error());
            }
            std::os::unix::net::UnixStream::connect(&path)
        });
        let (server, _) = listener.accept().await?;
        let cred = server.peer_cred()?;
        assert_eq!((cred.uid(), cred.gid()), want);
        assert_eq!(cred.pid(), Some(std::process::id() as i32));
        drop(connect.join().expect("the connecting thread")?);
        Ok(())
    })
}

#[test]
fn try_read_on_an_empty_stream_would_block_and_peek_leaves_the_bytes() -> io::Result<()> {
    run(|| async {
        let (ours, mut peer) = UnixStream::pair()?;
        let mut buf = [0u8; 16];
        let err = ours.try_read(&mut buf).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::WouldBlock);
        let mut bufs = [io::IoSliceMut::new(&mut buf)];
        let err = ours.try_read_vectored(&mut bufs).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::WouldBlock);

        peer.write_all(b"abcdef").await?;
        let mut peeked = [0u8; 3];
        assert_eq!(ours.peek(&mut peeked).await?, 3);
        assert_eq!(&peeked, b"abc");
        assert_eq!(ours.peek(&mut peeked).await?, 3, "peeked, not taken");
        assert_eq!(&peeked, b"abc");

        ours.readable().await?;
        let (mut head, mut tail) = ([0u8; 2], [0u8; 8]);
        let mut bufs = [
            io::IoSliceMut::new(&mut head),
            io::IoSliceMut::new(&mut tail),
        ];
        assert_eq!(ours.try_read_vectored(&mut bufs)?, 6);
        assert_eq!((&head, &tail[..4]), (b"ab", &b"cdef"[..]));
        let err = ours.try_read(&mut buf).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::WouldBlock);

        ours.writable().await?;
        assert_eq!(ours.try_write(b"back")?, 4);
        let two = [IoSlice::new(b"and "), IoSlice::new(b"forth")];
        assert_eq!(ours.try_write_vectored(&two)?, 9);
        let mut got = [0u8; 13];
        peer.read_exact(&mut got).await?;
        assert_eq!(&got, b"backand forth");
        Ok(())
    })
}

#[test]
fn poll_readiness_wakes_when_data_arrives() -> io::Result<()> {
    run(|| async {
        let (ours, peer) = UnixStream::pair()?;
        let writer = ioloop::spawn(async move {
            peer.writable().await?;
            peer.try_write(b"x")
        });
        std::future::poll_fn(|cx| ours.poll_read_ready(cx)).await?;
        std::future::poll_fn(|cx| ours.poll_write_ready(cx)).await?;
        assert_eq!(writer.await.unwrap()?, 1);
        let mut buf = [0u8; 1];
        ours.readable().await?;
        assert_eq!(ours.try_read(&mut buf)?, 1);
        Ok(())
    })
}

/// 1 MiB in 4 KiB slices, written with `write_vectored` (one `sendmsg`
/// each) and then `try_write_vectored`, to a reader task: every byte, in
/// order. Far more than a Unix socket buffers, so both writers must wait.
#[test]
fn a_vectored_mebibyte_arrives_intact() -> io::Result<()> {
    const TOTAL: usize = 1 << 20;
    run(|| async {
        let (ours, mut peer) = UnixStream::pair()?;
        let reader = ioloop::spawn(async move {
            let mut got = Vec::with_capacity(TOTAL);
            peer.read_to_end(&mut got).await?;
            Ok::<_, io::Error>(got)
        });
        let bytes: Vec<u8> = (0..TOTAL).map(|i| (i * 31 % 251) as u8).collect();
        let half = TOTAL / 2;
        let mut sent = 0;
        while sent < half {
            let slices: Vec<IoSlice<'_>> =
                bytes[sent..half].chunks(4096).map(IoSlice::new).collect();
            sent += (&ours).write_vectored(&slices).await?;
        }
        while sent < TOTAL {
            let slices: Vec<IoSlice<'_>> = bytes[sent..].chunks(4096).map(IoSlice::new).collect();
            match ours.try_write_vectored(&slices) {
                Ok(n) => sent += n,
                Err(err) if err.kind() == io::ErrorKind::WouldBlock => ours.writable().await?,
                Err(err) => return Err(err),
            }
        }
        ours.shutdown(Shutdown::Write)?;
        let got = reader.await.unwrap()?;
        assert_eq!(got.len(), TOTAL);
        assert!(got == bytes, "the bytes arrived changed or out of order");
        Ok(())
    })
}

#[test]
fn shutdown_write_is_end_of_file_at_the_peer_which_can_still_answer() -> io::Result<()> {
    run(|| async {
        let (mut ours, mut peer) = UnixStream::pair()?;
        ours.write_all(b"last words").await?;
        ours.shutdown(Shutdown::Write)?;
        let mut got = Vec::new();
        peer.read_to_end(&mut got).await?;
        assert_eq!(got, b"last words");
        peer.write_all(b"heard").await?;
        peer.close().await?; // the same half-close, through futures-io
        let mut answer = Vec::new();
        ours.read_to_end(&mut answer).await?;
        assert_eq!(answer, b"heard");
        Ok(())
    })
}

#[test]
fn owned_halves_in_two_tasks_and_borrowed_halves_in_one() -> io::Result<()> {
    const LEN: usize = 1 << 20;
    run(|| async {
        let (client, server) = UnixStream::pair()?;
        // The server echoes through borrowed halves until end of file.
        let echo = ioloop::spawn(async move {
            let (reader, mut writer) = UnixStream::split(&server);
            let copied = futures_util::io::copy(reader, &mut writer).await?;
            writer.close().await?;
            Ok::<_, io::Error>(copied)
        });
        let (mut reader, mut writer) = client.into_split();
        let writing = ioloop::spawn(async move {
            let data: Vec<u8> = (0..LEN).map(|i| (i % 253) as u8).collect();
            for chunk in data.chunks(64 * 1024) {
                writer.write_all(chunk).await?;
            }
            Ok::<_, io::Error>(())
            // The write half drops here: the echo sees end of file.
        });
        let reading = ioloop::spawn(async move {
            let mut got = Vec::with_capacity(LEN);
            reader.read_to_end(&mut got).await?;
            Ok::<_, io::Error>(got)
        });
        writing.await.unwrap()?;
        let got = reading.await.unwrap()?;
        assert_eq!(echo.await.unwrap()?, LEN as u64);
        assert_eq!(got.len(), LEN);
        assert!(got.iter().enumerate().all(|(i, &b)| b == (i % 253) as u8));
        Ok(())
    })
}

#[test]
fn abstract_names_by_leading_nul_and_by_socket_addr() -> io::Result<()> {
    use std::os::linux::net::SocketAddrExt;
    run(|| async {
        let name = net_unix::abstract_name("stream");
        let listener = UnixListener::bind(format!("\0{name}"))?;
        assert_eq!(
            listener.local_addr()?.as_abstract_name(),
            Some(name.as_bytes())
        );
        let by_addr = SocketAddr::from_abstract_name(&name)?;
        let mut client = UnixStream::connect(&by_addr).await?;
        let (mut server, _) = listener.accept().await?;
        assert_eq!(
            client.peer_addr()?.as_abstract_name(),
            Some(name.as_bytes())
        );
        client.write_all(b"no file").await?;
        let mut buf = [0u8; 7];
        server.read_exact(&mut buf).await?;
        assert_eq!(&buf, b"no file");
        // The name is taken while the listener lives.
        let err = UnixListener::bind(&by_addr).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::AddrInUse);
        Ok(())
    })
}

#[test]
fn bind_and_connect_errors_say_what_went_wrong() -> io::Result<()> {
    run(|| async {
        let dir = net_unix::TempDir::new()?;
        let path = dir.join("s.sock");
        let err = UnixStream::connect(&path).await.unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::NotFound);

        let listener = UnixListener::bind(&path)?;
        let err = UnixListener::bind(&path).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::AddrInUse);
        // The file outlives the listener; nothing listens on it any more.
        drop(listener);
        assert!(path.exists());
        let err = UnixStream::connect(&path).await.unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::ConnectionRefused);

        let too_long = dir.join(&"x".repeat(200));
        let err = UnixListener::bind(&too_long).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
        let err = UnixListener::bind(dir.path().join("missing/dir.sock")).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::NotFound);
        Ok(())
    })
}

/// A listener whose backlog is full refuses a non-blocking connect with
/// `EAGAIN`, and no event follows: `connect` must try again until the
/// listener accepts, not fail and not hang.
#[test]
fn connect_waits_while_the_backlog_is_full() -> io::Result<()> {
    use socket2::{Domain, SockAddr, Socket, Type};
    run(|| async {
        let dir = net_unix::TempDir::new()?;
        let path = dir.join("full.sock");
        let socket = Socket::new(Domain::UNIX, Type::STREAM, None)?;
        socket.bind(&SockAddr::unix(&path)?)?;
        socket.listen(0)?;
        let listener = UnixListener::from_std(socket.into())?;

        // Fill the backlog (one queued connection with a backlog of 0 on
        // Linux; a few elsewhere).
        let mut queued = Vec::new();
        let waiting = loop {
            let connecting = ioloop::spawn(UnixStream::connect(path.clone()));
            ioloop::time::sleep(Duration::from_millis(20)).await;
            if !connecting.is_finished() {
                break connecting;
            }
            queued.push(connecting.await.unwrap()?);
            assert!(queued.len() < 64, "the backlog never filled");
        };
        // Room: the waiting connect goes through.
        let (_first, _) = listener.accept().await?;
        let client = waiting.await.unwrap()?;
        assert!(client.peer_addr()?.as_pathname().is_some());
        Ok(())
    })
}

/// One `SCM_RIGHTS` control message passing `fd`, laid out by hand (no
/// `unsafe`): `cmsg_len` (a `size_t`), level, type, then the descriptor,
/// padded to the alignment of `size_t`.
fn scm_rights(fd: i32) -> Vec<u8> {
    let align = std::mem::size_of::<usize>();
    let header = std::mem::size_of::<libc::cmsghdr>();
    let data = std::mem::size_of::<i32>();
    let mut control = Vec::new();
    control.extend_from_slice(&(header + data).to_ne_bytes());
    control.extend_from_slice(&libc::SOL_SOCKET.to_ne_bytes());
    control.extend_from_slice(&libc::SCM_RIGHTS.to_ne_bytes());
    assert_eq!(control.len(), header);
    control.extend_from_slice(&fd.to_ne_bytes());
    control.resize(header + data.div_ceil(align) * align, 0);
    control
}

/// A Unix stream read stops short where a message carried descriptors,
/// with bytes still queued and no new event coming for them: reads must
/// not take a short read for an empty socket, as TCP's may.
#[test]
fn a_read_cut_short_by_passed_descriptors_does_not_stall_the_next() -> io::Result<()> {
    use std::os::fd::AsRawFd;

    use socket2::{MsgHdr, SockRef};
    run(|| async {
        let (ours, peer) = std::os::unix::net::UnixStream::pair()?;
        let mut ours = UnixStream::from_std(ours)?;
        // Nothing to read yet: that clears the readiness a registration
        // starts with, so the read below runs on the event of the sends.
        let err = ours.try_read(&mut [0u8; 1]).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::WouldBlock);
        let passed = std::fs::File::open("/dev/null")?;
        let control = scm_rights(passed.as_raw_fd());
        let data = [IoSlice::new(b"a")];
        let msg = MsgHdr::new().with_buffers(&data).with_control(&control);
        assert_eq!(SockRef::from(&peer).sendmsg(&msg, 0)?, 1);
        std::io::Write::write_all(&mut &peer, b"b")?;

        let mut buf = [0u8; 2];
        let read = ioloop::time::timeout(Duration::from_secs(10), ours.read_exact(&mut buf));
        read.await
            .expect("the byte after the descriptor was never read")?;
        assert_eq!(&buf, b"ab");
        Ok(())
    })
}

/// Without a runtime there is nothing to register with: bind fails, and
/// leaves no socket file behind to make the next bind fail too.
#[test]
fn bind_outside_a_runtime_fails_and_leaves_no_file() -> io::Result<()> {
    let dir = net_unix::TempDir::new()?;
    let path = dir.join("early.sock");
    UnixListener::bind(&path).unwrap_err();
    assert!(!path.exists(), "the failed bind left its file");
    ioloop::net::UnixDatagram::bind(&path).unwrap_err();
    assert!(!path.exists(), "the failed bind left its file");
    run(move || async move {
        let _listener = UnixListener::bind(&path)?;
        Ok(())
    })
}

#[test]
fn buffer_sizes_can_be_set_and_read() -> io::Result<()> {
    run(|| async {
        let (a, _b) = UnixStream::pair()?;
        a.set_send_buffer_size(64 * 1024)?;
        assert!(a.send_buffer_size()? >= 64 * 1024);
        a.set_recv_buffer_size(32 * 1024)?;
        assert!(a.recv_buffer_size()? >= 32 * 1024);
        let (d, _e) = ioloop::net::UnixDatagram::pair()?;
        d.set_send_buffer_size(16 * 1024)?;
        assert!(d.send_buffer_size()? >= 16 * 1024);
        d.set_recv_buffer_size(16 * 1024)?;
        assert!(d.recv_buffer_size()? >= 16 * 1024);
        Ok(())
    })
}

/// A decision (issue 28; tokio's `uds_stream::epollhup`): a Unix `connect`
/// completes on its first poll, once the kernel has queued the connection
/// on the listener's backlog, without waiting for writability. A listener
/// dropped after that, before accepting, shows at the first read
/// (`ConnectionReset`), not at `connect` as in tokio, which waits for
/// writability and may report it there. The stream is then at its end.
/// (The reset is Linux's: the listener's close resets its queued
/// connections.)
#[cfg(any(target_os = "linux", target_os = "android"))]
#[test]
fn a_unix_connect_completes_on_its_first_poll_and_a_listener_gone_shows_at_the_first_read()
-> io::Result<()> {
    use std::future::{Future, poll_fn};
    use std::task::Poll;
    run(|| async {
        let dir = net_unix::TempDir::new()?;
        let path = dir.join("gone.sock");
        let listener = UnixListener::bind(&path)?;
        let mut connect = std::pin::pin!(UnixStream::connect(&path));
        let polled = poll_fn(|cx| Poll::Ready(connect.as_mut().poll(cx))).await;
        let Poll::Ready(connected) = polled else {
            panic!("a Unix connect waited on its first poll");
        };
        let mut stream = connected?;
        drop(listener);
        let mut buf = [0u8; 8];
        let err = stream.read(&mut buf).await.unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::ConnectionReset, "{err}");
        assert_eq!(stream.read(&mut buf).await?, 0);
        Ok(())
    })
}
