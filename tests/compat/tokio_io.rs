//! `ioloop::compat::tokio` (the `tokio-io` feature): tokio's I/O traits
//! over ioloop's sockets (`TokioIo`, reads into uninitialized memory) and
//! over any futures-io stream (`FuturesIo`), on real sockets on
//! 127.0.0.1 and a Unix pair. The libraries built on the traits are in
//! `tokio_libs.rs`.

use std::future::poll_fn;
use std::io::{self, IoSlice};
use std::mem::MaybeUninit;
use std::pin::Pin;
use std::task::Poll;

use futures_util::FutureExt;
use ioloop::compat::tokio::{FuturesIo, TokioIo};
use ioloop::io::{AsyncReadExt as _, AsyncWriteExt as _, StreamReader, StreamWriter};
use ioloop::net::{TcpListener, TcpStream, UnixStream};
use testkit::io_run;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};

/// A connected pair on 127.0.0.1.
async fn pair() -> io::Result<(TcpStream, TcpStream)> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let client = TcpStream::connect(listener.local_addr()?).await?;
    let (server, _) = listener.accept().await?;
    Ok((client, server))
}

/// One `poll_read` of `io` into `buf`, waiting until it is ready.
async fn read_once<R: AsyncRead + Unpin>(io: &mut R, buf: &mut ReadBuf<'_>) -> io::Result<()> {
    poll_fn(|cx| Pin::new(&mut *io).poll_read(cx, buf)).await
}

/// The bytes `peer` sends arrive whole in `TokioIo`'s reads into an
/// 8-byte uninitialized buffer, at the limit and on each side of it, and
/// only the bytes read become initialized: nothing is zeroed first.
#[test]
fn tokio_io_reads_into_uninitialized_memory_up_to_the_buffers_length() -> io::Result<()> {
    io_run::run(|| async {
        let (mut peer, server) = pair().await?;
        let mut io = TokioIo::new(server);
        // 7, 8 and 9 bytes against 8 of room.
        for len in [7usize, 8, 9] {
            let sent: Vec<u8> = (0..len as u8).map(|i| i + len as u8).collect();
            peer.write_all(&sent).await?;
            peer.flush().await?;
            let mut got = Vec::new();
            while got.len() < len {
                let mut memory = [MaybeUninit::<u8>::uninit(); 8];
                let mut buf = ReadBuf::uninit(&mut memory);
                read_once(&mut io, &mut buf).await?;
                let n = buf.filled().len();
                assert!(n > 0 && n <= 8, "{n} bytes read into 8");
                assert_eq!(
                    buf.initialized().len(),
                    n,
                    "only what was read is initialized"
                );
                got.extend_from_slice(buf.filled());
            }
            assert_eq!(got, sent, "{len} bytes");
        }
        // No room: ready at once with nothing read, and nothing consumed.
        peer.write_all(b"kept").await?;
        peer.flush().await?;
        let mut empty = ReadBuf::new(&mut []);
        read_once(&mut io, &mut empty).await?;
        assert!(empty.filled().is_empty());
        let mut got = [0; 4];
        io.read_exact(&mut got).await?;
        assert_eq!(&got, b"kept");
        Ok(())
    })
}

/// A read into a buffer already part filled appends after what is there.
#[test]
fn tokio_io_appends_after_what_the_buffer_holds() -> io::Result<()> {
    io_run::run(|| async {
        let (mut peer, server) = pair().await?;
        let mut io = TokioIo::new(server);
        peer.write_all(b"world").await?;
        peer.flush().await?;
        let mut memory = [0u8; 16];
        let mut buf = ReadBuf::new(&mut memory);
        buf.put_slice(b"hello ");
        while buf.filled().len() < 11 {
            read_once(&mut io, &mut buf).await?;
        }
        assert_eq!(buf.filled(), b"hello world");
        Ok(())
    })
}

/// Vectored writes leave in one call (`is_write_vectored`), `flush` and
/// `shutdown` reach the peer, which reads every byte and then the end of
/// the stream; the other way, `read_to_end` ends at the peer's close.
#[test]
fn tokio_io_writes_vectored_flushes_and_shuts_down() -> io::Result<()> {
    io_run::run(|| async {
        let (mut peer, server) = pair().await?;
        let mut io = TokioIo::new(server);
        assert!(io.is_write_vectored());
        let bufs = [
            IoSlice::new(b"head "),
            IoSlice::new(b""),
            IoSlice::new(b"body\n"),
        ];
        let n = io.write_vectored(&bufs).await?;
        assert_eq!(n, 10, "every buffer in one call");
        io.write_all(b"more\n").await?;
        io.flush().await?;
        io.shutdown().await?;
        let mut got = Vec::new();
        peer.read_to_end(&mut got).await?;
        assert_eq!(got, b"head body\nmore\n");
        // The read side stays open after our shutdown.
        peer.write_all(b"reply").await?;
        peer.close().await?;
        drop(peer);
        let mut reply = Vec::new();
        io.read_to_end(&mut reply).await?;
        assert_eq!(reply, b"reply");
        assert!(io.get_ref().local_addr().is_ok());
        let stream: TcpStream = io.into_inner();
        drop(stream);
        Ok(())
    })
}

/// A reset peer is an error from tokio's read, with its kind, not a hang
/// or an end of stream.
#[test]
fn tokio_io_reports_a_reset() -> io::Result<()> {
    io_run::run(|| async {
        let (peer, server) = pair().await?;
        let mut io = TokioIo::new(server);
        // SO_LINGER 0: the close sends a reset.
        socket2::SockRef::from(&peer).set_linger(Some(std::time::Duration::ZERO))?;
        drop(peer);
        let mut buf = [0; 8];
        let err = io.read(&mut buf).await.expect_err("a reset");
        assert_eq!(err.kind(), io::ErrorKind::ConnectionReset);
        Ok(())
    })
}

/// The halves, owned and borrowed, are tokio streams too: tokio's `copy`
/// echoes 1 MiB from the owned read half to the owned write half, byte for
/// byte, and the borrowed halves exchange a line.
#[test]
fn tokio_io_over_the_halves_echoes_a_mebibyte() -> io::Result<()> {
    io_run::run(|| async {
        let (client, server) = pair().await?;
        let (read_half, write_half) = server.into_split();
        let echo = ioloop::spawn(async move {
            let (mut from, mut to) = (TokioIo::new(read_half), TokioIo::new(write_half));
            let n = tokio::io::copy(&mut from, &mut to).await?;
            to.shutdown().await?;
            io::Result::Ok(n)
        });
        let sent: Vec<u8> = (0..1 << 20).map(|i: u32| (i % 251) as u8).collect();
        let (read_half, write_half) = TcpStream::split(&client);
        let (mut from, mut to) = (TokioIo::new(read_half), TokioIo::new(write_half));
        let mut got = Vec::new();
        let write = async {
            to.write_all(&sent).await?;
            to.shutdown().await
        };
        let (written, read) = futures_util::future::join(write, from.read_to_end(&mut got)).await;
        written?;
        read?;
        assert_eq!(got.len(), sent.len());
        assert!(got == sent, "the echo differs");
        assert_eq!(echo.await.unwrap()?, 1 << 20);
        Ok(())
    })
}

/// `TokioIo<&TcpStream>` shares a stream: while one task waits in a read,
/// another calls every other method through its own `TokioIo` over the
/// same stream (write, vectored write, flush, `get_ref`, `get_mut`,
/// shutdown); the reader wakes for the peer's bytes and for nothing else.
#[test]
fn tokio_io_over_a_shared_stream_reads_while_another_task_writes() -> io::Result<()> {
    io_run::run(|| async {
        let (mut peer, server) = pair().await?;
        let server = std::rc::Rc::new(server);
        let reader = ioloop::spawn_local({
            let server = server.clone();
            async move {
                let mut io = TokioIo::new(&*server);
                let mut got = [0; 5];
                io.read_exact(&mut got).await?;
                io::Result::Ok(got)
            }
        });
        let mut reader = Box::pin(reader);
        // The reader parks.
        ioloop::task::yield_now().await;
        assert!((&mut reader).now_or_never().is_none());
        let mut io = TokioIo::new(&*server);
        io.write_all(b"one ").await?;
        let bufs = [IoSlice::new(b"two "), IoSlice::new(b"three")];
        assert_eq!(io.write_vectored(&bufs).await?, 9);
        io.flush().await?;
        assert_eq!(io.get_ref().local_addr()?, server.local_addr()?);
        let _: &mut &TcpStream = io.get_mut();
        io.shutdown().await?;
        ioloop::task::yield_now().await;
        assert!(
            (&mut reader).now_or_never().is_none(),
            "woken by the writer"
        );
        let mut got = Vec::new();
        peer.read_to_end(&mut got).await?;
        assert_eq!(got, b"one two three");
        peer.write_all(b"hello").await?;
        peer.flush().await?;
        assert_eq!(&reader.await.unwrap()?, b"hello");
        Ok(())
    })
}

/// A Unix stream pair, each end a `TokioIo`, and each end's read half.
#[test]
fn tokio_io_over_a_unix_stream_pair() -> io::Result<()> {
    io_run::run(|| async {
        let (a, b) = UnixStream::pair()?;
        let mut a = TokioIo::new(a);
        a.write_all(b"over unix\n").await?;
        a.flush().await?;
        let (read_half, _write_half) = UnixStream::split(&b);
        let mut lines = tokio::io::BufReader::new(TokioIo::new(read_half)).lines();
        assert_eq!(lines.next_line().await?.as_deref(), Some("over unix"));
        Ok(())
    })
}

/// `FuturesIo` over ioloop's `StreamReader` is tokio's `AsyncBufRead`:
/// tokio's `read_line` and `read_until` read from the reader's buffer
/// (a line split across two sends, one of exactly the buffer's first fill);
/// over a `StreamWriter`, tokio's `write_all` and `flush` send.
#[test]
fn futures_io_over_the_streams_reads_lines_and_writes() -> io::Result<()> {
    io_run::run(|| async {
        let (client, server) = pair().await?;
        let mut reader = FuturesIo::new(StreamReader::new(&server));
        let mut writer = FuturesIo::new(StreamWriter::new(&client));
        assert!(!writer.is_write_vectored());
        writer.write_all(b"first\nsec").await?;
        writer.flush().await?;
        let mut line = String::new();
        assert_eq!(reader.read_line(&mut line).await?, 6);
        assert_eq!(line, "first\n");
        writer.write_all(b"ond\nthird;").await?;
        writer.flush().await?;
        line.clear();
        assert_eq!(reader.read_line(&mut line).await?, 7);
        assert_eq!(line, "second\n");
        let mut field = Vec::new();
        reader.read_until(b';', &mut field).await?;
        assert_eq!(field, b"third;");
        let writer = writer.with_vectored_writes(true);
        assert!(writer.is_write_vectored());
        let mut writer = writer;
        writer.shutdown().await?;
        line.clear();
        assert_eq!(
            reader.read_line(&mut line).await?,
            0,
            "the end of the stream"
        );
        assert_eq!(reader.get_ref().buffer(), b"");
        let _: &mut StreamReader<&TcpStream> = reader.get_mut();
        let _: StreamWriter<&TcpStream> = writer.into_inner();
        Ok(())
    })
}

/// `FuturesIo` zeroes the unfilled part of a fresh `ReadBuf` before its
/// first read, and not again: the buffer remembers it is initialized.
#[test]
fn futures_io_zeroes_a_buffer_once() -> io::Result<()> {
    io_run::run(|| async {
        let text = futures_util::io::Cursor::new(b"abcdef".to_vec());
        let mut io = FuturesIo::new(text);
        let mut memory = [MaybeUninit::<u8>::uninit(); 4];
        let mut buf = ReadBuf::uninit(&mut memory);
        read_once(&mut io, &mut buf).await?;
        assert_eq!(buf.filled(), b"abcd");
        assert_eq!(buf.initialized().len(), 4);
        buf.clear();
        assert_eq!(buf.initialized().len(), 4, "still initialized");
        read_once(&mut io, &mut buf).await?;
        assert_eq!(buf.filled(), b"ef");
        read_once(&mut io, &mut buf).await?;
        assert_eq!(buf.filled(), b"ef", "the end of the stream adds nothing");
        Ok(())
    })
}

/// A child's pipe through `FuturesIo`: tokio's `read_to_string` over its
/// stdout, tokio's `write_all` and `shutdown` into its stdin.
#[test]
fn futures_io_over_a_childs_pipes() -> io::Result<()> {
    io_run::run(|| async {
        let mut child = ioloop::process::Command::new("tr")
            .args(["a-z", "A-Z"])
            .stdin(ioloop::process::Stdio::piped())
            .stdout(ioloop::process::Stdio::piped())
            .spawn()?;
        let mut stdin = FuturesIo::new(child.stdin.take().expect("piped"));
        let mut stdout = FuturesIo::new(child.stdout.take().expect("piped"));
        stdin.write_all(b"shout\n").await?;
        stdin.shutdown().await?;
        let mut text = String::new();
        stdout.read_to_string(&mut text).await?;
        assert_eq!(text, "SHOUT\n");
        assert!(child.wait().await?.success());
        Ok(())
    })
}

/// A `TokioIo` dropped while a read waits, and one whose task is aborted
/// mid-read: the socket closes (the peer reads the end) and the loop goes
/// on.
#[test]
fn tokio_io_dropped_while_a_read_waits() -> io::Result<()> {
    io_run::run(|| async {
        let (mut peer, server) = pair().await?;
        let task = ioloop::spawn(async move {
            let mut io = TokioIo::new(server);
            let mut buf = [0; 1];
            io.read(&mut buf).await
        });
        ioloop::task::yield_now().await;
        task.abort();
        assert!(task.await.unwrap_err().is_cancelled());
        let mut rest = Vec::new();
        peer.read_to_end(&mut rest).await?;
        assert!(rest.is_empty());
        Ok(())
    })
}

/// `poll_read` on a `TokioIo` with nothing to read is pending, and
/// registers the task: checked without the extension traits.
#[test]
fn tokio_io_is_pending_until_bytes_arrive() -> io::Result<()> {
    io_run::run(|| async {
        let (peer, server) = pair().await?;
        let mut io = TokioIo::new(server);
        let mut memory = [0u8; 4];
        let mut polls = 0;
        let mut sent = false;
        poll_fn(|cx| {
            polls += 1;
            let mut buf = ReadBuf::new(&mut memory);
            match Pin::new(&mut io).poll_read(cx, &mut buf) {
                Poll::Ready(result) => {
                    assert!(sent, "ready before anything was sent");
                    result?;
                    assert_eq!(buf.filled(), b"ping");
                    Poll::Ready(io::Result::Ok(()))
                }
                Poll::Pending => {
                    if !sent {
                        sent = true;
                        let _ = peer.try_write(b"ping");
                    }
                    Poll::Pending
                }
            }
        })
        .await?;
        assert_eq!(polls, 2, "one poll to park, one to read after the wake");
        Ok(())
    })
}

/// A `StreamWriter`'s small writes in a poll are gathered in the socket's
/// outbox, to leave in one `send` when the poll ends; a `TokioIo` over the
/// same stream sends them at once with `poll_flush`: the peer reads them
/// before the poll that wrote them returns.
#[test]
fn tokio_io_flush_sends_what_the_poll_gathered() -> io::Result<()> {
    io_run::run(|| async {
        // A std socket for the peer: its reads ask the kernel every time.
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let mut peer = std::net::TcpStream::connect(listener.local_addr()?)?;
        peer.set_nonblocking(true)?;
        let (server, _) = listener.accept().await?;
        let mut writer = StreamWriter::new(&server);
        let mut io = TokioIo::new(&server);
        poll_fn(|cx| {
            writer.write(b"gathered");
            let mut got = [0; 16];
            let early =
                std::io::Read::read(&mut peer, &mut got).expect_err("gathered, not sent yet");
            assert_eq!(early.kind(), io::ErrorKind::WouldBlock);
            match Pin::new(&mut io).poll_flush(cx) {
                Poll::Ready(Ok(())) => {}
                other => panic!("a flush of 8 bytes is ready at once: {other:?}"),
            }
            let n = std::io::Read::read(&mut peer, &mut got)
                .expect("sent by the flush, within the poll");
            assert_eq!(&got[..n], b"gathered");
            Poll::Ready(())
        })
        .await;
        Ok(())
    })
}

/// `FuturesIo` passes vectored writes through: over a socket (a real
/// vectored write, so it says so with `with_vectored_writes(true)`), one
/// call takes every buffer.
#[test]
fn futures_io_passes_vectored_writes_through() -> io::Result<()> {
    io_run::run(|| async {
        let (mut peer, server) = pair().await?;
        let mut io = FuturesIo::new(server).with_vectored_writes(true);
        assert!(io.is_write_vectored());
        let bufs = [IoSlice::new(b"head "), IoSlice::new(b"body\n")];
        assert_eq!(io.write_vectored(&bufs).await?, 10);
        io.shutdown().await?;
        let mut got = Vec::new();
        peer.read_to_end(&mut got).await?;
        assert_eq!(got, b"head body\n");
        Ok(())
    })
}

/// Both wrappers show what they wrap.
#[test]
fn the_wrappers_debug_as_what_they_wrap() {
    assert_eq!(format!("{:?}", TokioIo::new(7)), "TokioIo(7)");
    assert_eq!(format!("{:?}", FuturesIo::new("x")), "FuturesIo(\"x\")");
}

/// `FuturesIo`'s flush is the stream's: bytes a futures-io `BufWriter`
/// holds reach what it wraps only at the flush.
#[test]
fn futures_io_flushes_the_stream() -> io::Result<()> {
    io_run::run(|| async {
        let held = futures_util::io::BufWriter::new(futures_util::io::Cursor::new(Vec::new()));
        let mut io = FuturesIo::new(held);
        io.write_all(b"held").await?;
        assert!(
            io.get_ref().get_ref().get_ref().is_empty(),
            "buffered until the flush"
        );
        io.flush().await?;
        assert_eq!(io.get_ref().get_ref().get_ref(), b"held");
        Ok(())
    })
}
