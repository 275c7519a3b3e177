//! Issue 30: `StreamWriter`'s writes to a stream socket are gathered, and
//! all the writes one poll makes leave together when it returns (or at
//! `drain`), in one send. What must hold around that: no byte lost or
//! reordered (against a large write, a raw write, a peer that does not
//! read, a shutdown, a drop), errors still reported, and the send count
//! itself, counted by strace in a child process.

use std::io::{self, Read};
use std::net::Shutdown;
use std::sync::mpsc::Sender;
use std::time::Duration;

use futures_util::{AsyncReadExt, AsyncWriteExt};
use ioloop::io::StreamWriter;
use ioloop::net::{TcpListener, TcpSocket, TcpStream, UnixStream};
use net_run::run;
use testkit::net_run;

async fn tcp_pair() -> io::Result<(TcpStream, TcpStream)> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let client = TcpStream::connect(listener.local_addr()?).await?;
    let (server, _) = listener.accept().await?;
    Ok((client, server))
}

/// The peer of `stream` reads `n` bytes in a thread of its own, blocking,
/// so the loop is free, once told to go (send on the returned sender).
fn read_on_a_thread(stream: TcpStream, n: usize) -> io::Result<(Sender<()>, Reader)> {
    let mut peer = into_std(stream)?;
    peer.set_nonblocking(false)?;
    let (go, wait) = std::sync::mpsc::channel::<()>();
    let reader = std::thread::spawn(move || {
        wait.recv().unwrap();
        let mut got = vec![0; n];
        peer.read_exact(&mut got).unwrap();
        got
    });
    Ok((go, reader))
}

type Reader = std::thread::JoinHandle<Vec<u8>>;

/// What the reader thread received, waited for off the loop.
async fn received(reader: Reader) -> Vec<u8> {
    ioloop::spawn_blocking(move || reader.join().unwrap())
        .await
        .unwrap()
}

#[test]
fn writes_with_no_drain_leave_when_the_poll_returns() -> io::Result<()> {
    run(|| async {
        let (client, mut server) = tcp_pair().await?;
        let writing = ioloop::spawn(async move {
            let mut writer = StreamWriter::new(&client);
            for piece in ["one ", "two ", "three ", "four\n"] {
                writer.write(piece.as_bytes());
            }
            // No drain: the task waits on something else, for ever.
            std::future::pending::<()>().await;
        });
        let mut got = [0; 19];
        server.read_exact(&mut got).await?;
        assert_eq!(&got, b"one two three four\n");
        writing.abort();
        Ok(())
    })
}

/// Three sockets gathered into in one poll: each is woken when it returns,
/// whichever drained (a drain takes back only its own socket's wake).
#[test]
fn three_streams_written_in_one_poll_all_leave_when_it_returns() -> io::Result<()> {
    run(|| async {
        let mut pairs = Vec::new();
        for _ in 0..3 {
            pairs.push(tcp_pair().await?);
        }
        let (clients, mut servers): (Vec<_>, Vec<_>) = pairs.into_iter().unzip();
        let writing = ioloop::spawn(async move {
            let mut writers: Vec<_> = clients.iter().map(StreamWriter::new).collect();
            for (i, writer) in writers.iter_mut().enumerate() {
                writer.write(format!("to {i}\n").as_bytes());
            }
            // The middle one drains (and takes its wake back); the others
            // leave when this poll returns.
            writers[1].drain().await.unwrap();
            std::future::pending::<()>().await;
        });
        for (i, server) in servers.iter_mut().enumerate() {
            let mut got = [0; 5];
            server.read_exact(&mut got).await?;
            assert_eq!(got, format!("to {i}\n").as_bytes());
        }
        writing.abort();
        Ok(())
    })
}

#[test]
fn gathered_writes_keep_their_order_against_large_and_raw_writes() -> io::Result<()> {
    run(|| async {
        let (client, server) = tcp_pair().await?;
        let big = vec![b'b'; 200 * 1024];
        let mut expected = b"small ".to_vec();
        expected.extend_from_slice(&big);
        expected.extend_from_slice(b" after");
        expected.extend_from_slice(b" raw");
        let (go, reader) = read_on_a_thread(server, expected.len())?;
        go.send(()).unwrap();
        let mut writer = StreamWriter::new(&client);
        writer.write(b"small ");
        writer.write(&big); // larger than a gather: sent behind "small "
        writer.write(b" after");
        writer.drain().await?;
        (&client).write_all(b" raw").await?;
        assert!(
            received(reader).await == expected,
            "bytes lost or out of order"
        );
        Ok(())
    })
}

#[test]
fn a_peer_that_does_not_read_gets_every_gathered_byte_once_it_does() -> io::Result<()> {
    run(|| async {
        // Small kernel buffers on both sides, the receiver's set before
        // the handshake (an accepted socket inherits the listener's).
        let socket = TcpSocket::new_v4()?;
        socket.set_recv_buffer_size(4096)?;
        socket.bind("127.0.0.1:0".parse().unwrap())?;
        let listener = socket.listen(8)?;
        let client = TcpStream::connect(listener.local_addr()?).await?;
        let (server, _) = listener.accept().await?;
        client.set_send_buffer_size(4096)?;
        let lines: Vec<String> = (0..20_000).map(|i| format!("line {i}\n")).collect();
        let expected = lines.concat().into_bytes();
        let (go, reader) = read_on_a_thread(server, expected.len())?;
        let mut writer = StreamWriter::new(&client);
        // Far more than the kernel holds, in small writes (gathered while the
        // kernel takes them, then kept by the writer); drain is where the
        // writer waits.
        for (i, line) in lines.iter().enumerate() {
            writer.write(line.as_bytes());
            if i == 10_000 {
                // The peer has read nothing: the kernel refuses by now, and
                // the writer keeps what it could not hand over.
                let waited = ioloop::time::timeout(Duration::from_millis(20), writer.drain()).await;
                assert!(waited.is_err(), "drain returned with the peer not reading");
                go.send(()).unwrap();
            } else if i > 10_000 && i % 100 == 99 {
                writer.drain().await?;
            }
        }
        writer.flush().await?;
        assert!(
            received(reader).await == expected,
            "bytes lost or out of order"
        );
        Ok(())
    })
}

#[test]
fn a_stream_dropped_or_shut_right_after_its_writes_delivers_them_then_eof() -> io::Result<()> {
    run(|| async {
        for shut in [false, true] {
            let (client, mut server) = tcp_pair().await?;
            let mut writer = StreamWriter::new(client);
            writer.write(b"last words");
            if shut {
                writer.get_ref().shutdown(Shutdown::Write)?;
            } else {
                drop(writer);
            }
            let mut got = Vec::new();
            server.read_to_end(&mut got).await?;
            assert_eq!(got, b"last words", "shut: {shut}");
        }
        Ok(())
    })
}

#[test]
fn a_send_error_met_after_the_poll_reaches_the_next_drain() -> io::Result<()> {
    run(|| async {
        let (ours, peer) = UnixStream::pair()?;
        let mut writer = StreamWriter::new(&ours);
        // Gathered, and sent after this poll: the peer is gone by then.
        writer.write(b"to no one");
        drop(peer);
        ioloop::yield_now().await;
        writer.write(b"again");
        let err = writer.drain().await.unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::BrokenPipe, "{err:?}");
        // The error is reported once and the bytes it stopped are gone:
        // the socket has nothing left to flush.
        futures_util::AsyncWriteExt::flush(&mut &ours).await?;
        Ok(())
    })
}

fn into_std(stream: TcpStream) -> io::Result<std::net::TcpStream> {
    use std::os::fd::{AsFd, OwnedFd};
    let fd: OwnedFd = stream.as_fd().try_clone_to_owned()?;
    Ok(std::net::TcpStream::from(fd))
}

/// The role variable of the child that writes a reply in four pieces.
const FOUR_WRITES_CHILD: &str = "IOLOOP_GATHER_FOUR_WRITES_CHILD";

/// The child's program: a server task answers each request with a reply
/// written in four pieces, once with `drain` after them and once with no
/// drain at all; the client checks every reply.
fn four_writes_per_reply(replies: usize) -> io::Result<()> {
    ioloop::block_on(async {
        let (client, server) = tcp_pair().await?;
        let _server = ioloop::spawn(async move {
            let mut writer = StreamWriter::new(&server);
            let mut request = [0; 1];
            for i in 0..replies {
                (&server).read_exact(&mut request).await?;
                for piece in ["+", "OK", "\r", "\n"] {
                    writer.write(piece.as_bytes());
                }
                if i % 2 == 0 {
                    writer.drain().await?;
                }
            }
            io::Result::Ok(())
        });
        let mut reply = [0; 5];
        for _ in 0..replies {
            (&client).write_all(b"?").await?;
            (&client).read_exact(&mut reply).await?;
            assert_eq!(&reply, b"+OK\r\n");
        }
        Ok(())
    })
}

/// Issue 30's measure: a reply written in four pieces went out in 4.3
/// `sendto` calls. Now the pieces leave in one send, with or without a
/// drain: the child is traced by strace, and every send it makes is
/// counted. Skipped with a message where strace is missing, unless
/// `IOLOOP_REQUIRE_STRACE=1` (CI installs it and sets that).
#[test]
fn a_reply_written_in_four_pieces_costs_one_send() -> io::Result<()> {
    const REPLIES: usize = 200;
    if testkit::net_proc::is_child(FOUR_WRITES_CHILD) {
        return four_writes_per_reply(REPLIES);
    }
    let strace = std::process::Command::new("strace").arg("-V").output();
    if strace.is_err() {
        assert!(
            std::env::var_os("IOLOOP_REQUIRE_STRACE").is_none(),
            "strace is required (IOLOOP_REQUIRE_STRACE) but missing"
        );
        eprintln!("skipped: strace is not installed");
        return Ok(());
    }
    let name = testkit::net_proc::test_name(
        module_path!(),
        "a_reply_written_in_four_pieces_costs_one_send",
    );
    let dir = std::env::temp_dir().join(format!("ioloop-gather-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let trace = dir.join("trace");
    let out = testkit::util::within(Duration::from_secs(60), {
        let trace = trace.clone();
        move || {
            std::process::Command::new("strace")
                .args(["-f", "-qq", "-e", "trace=sendto,sendmsg,write,writev", "-o"])
                .arg(&trace)
                .arg(std::env::current_exe()?)
                .args(["--exact", &name, "--test-threads=1"])
                .env(FOUR_WRITES_CHILD, "1")
                .output()
        }
    })?;
    assert!(out.status.success(), "{out:?}");
    let text = std::fs::read_to_string(&trace)?;
    std::fs::remove_dir_all(&dir)?;
    // Sends on the sockets: the client's one-byte requests, and the
    // server's replies of five bytes.
    let sends: Vec<&str> = text.lines().filter(|l| l.contains("send")).collect();
    let requests = sends.iter().filter(|l| l.ends_with("= 1")).count();
    let replies = sends.iter().filter(|l| l.ends_with("= 5")).count();
    assert_eq!(requests, REPLIES, "{text}");
    assert_eq!(
        replies, REPLIES,
        "each reply must be one send of 5 bytes:\n{text}"
    );
    assert_eq!(sends.len(), 2 * REPLIES, "other sends:\n{text}");
    Ok(())
}
