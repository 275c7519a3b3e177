//! Readiness, `try_*` and peek on TCP and UDP (issue 14), and vectored
//! writes through `sendmsg`.

use std::io::{self, IoSlice, Read, Write};
use std::net::{TcpStream as StdStream, UdpSocket as StdUdpSocket};

use futures_util::AsyncWriteExt;
use ioloop::io::StreamWriter;
use ioloop::net::{TcpStream, UdpSocket};
use net_run::run;
use testkit::net_run;

/// A connected pair: ours on the runtime, the peer a blocking std socket.
async fn tcp_pair() -> io::Result<(TcpStream, StdStream)> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    let ours = TcpStream::connect(listener.local_addr()?).await?;
    let (peer, _) = listener.accept()?;
    Ok((ours, peer))
}

#[test]
fn try_read_on_an_empty_socket_is_would_block_then_reads_what_came() -> io::Result<()> {
    run(|| async {
        let (ours, mut peer) = tcp_pair().await?;
        let mut buf = [0u8; 16];
        assert_eq!(
            ours.try_read(&mut buf).unwrap_err().kind(),
            io::ErrorKind::WouldBlock
        );
        peer.write_all(b"hello")?;
        ours.readable().await?;
        assert_eq!(ours.try_read(&mut buf)?, 5);
        assert_eq!(&buf[..5], b"hello");
        assert_eq!(
            ours.try_read(&mut buf).unwrap_err().kind(),
            io::ErrorKind::WouldBlock
        );
        ours.writable().await?;
        assert_eq!(ours.try_write(b"back")?, 4);
        let mut got = [0u8; 4];
        peer.read_exact(&mut got)?;
        assert_eq!(&got, b"back");
        Ok(())
    })
}

/// A read that fills less than its buffer found the socket empty, so it
/// clears read readiness: the next wait parks until the peer sends more,
/// where a read that filled its buffer keeps readiness (more may be
/// queued). 15 and 16 bytes into 16, and 17, of which 16 fit.
#[test]
fn a_short_read_clears_read_readiness_and_a_full_one_keeps_it() -> io::Result<()> {
    use futures_util::AsyncReadExt;
    use std::future::poll_fn;
    use std::task::Poll;
    run(|| async {
        let (mut ours, mut peer) = tcp_pair().await?;
        // Ready now, or not, without waiting.
        let ready_now = |ours: &TcpStream| {
            let waker = std::task::Waker::noop();
            ours.poll_read_ready(&mut std::task::Context::from_waker(waker))
                .is_ready()
        };
        for (sent, kept) in [(15usize, false), (16, true), (17, true)] {
            peer.write_all(&vec![7u8; sent])?;
            ours.readable().await?;
            let mut buf = [0u8; 16];
            let n = ours.read(&mut buf).await?;
            assert_eq!(n, sent.min(16));
            assert_eq!(
                ready_now(&ours),
                kept,
                "{sent} bytes sent, {n} read into 16"
            );
            // Whatever is left, read to the end of it: the next round starts empty.
            let mut rest = sent - n;
            while rest > 0 {
                rest -= ours.read(&mut buf).await?;
            }
            // A full read's kept readiness ends at the `WouldBlock` it finds.
            let _ = poll_fn(|cx| match ours.try_read(&mut buf) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => Poll::Ready(()),
                _ => {
                    cx.waker().wake_by_ref();
                    Poll::Pending
                }
            })
            .await;
            assert!(!ready_now(&ours), "{sent} bytes: empty again");
        }
        Ok(())
    })
}

/// The end of the stream keeps read readiness: a read that returns 0
/// (here found by the kernel before the loop has seen the peer's FIN) is
/// followed, in the same poll, by reads that return 0 again at once, not
/// by a wait for an event that already came.
#[test]
fn reads_at_the_end_of_the_stream_return_0_again_at_once() -> io::Result<()> {
    use futures_util::AsyncRead;
    use std::future::poll_fn;
    use std::pin::Pin;
    use std::task::Poll;
    run(|| async {
        let (mut ours, mut peer) = tcp_pair().await?;
        peer.write_all(&[7u8; 16])?;
        ours.readable().await?;
        // The FIN arrives after the event the loop has seen.
        peer.shutdown(std::net::Shutdown::Write)?;
        poll_fn(|cx| {
            let mut buf = [0u8; 16];
            let mut read = || match Pin::new(&mut ours).poll_read(cx, &mut buf) {
                Poll::Ready(Ok(n)) => n,
                other => panic!("a read at the end of the stream: {other:?}"),
            };
            assert_eq!(read(), 16, "a full read keeps readiness");
            assert_eq!(read(), 0, "the end");
            assert_eq!(read(), 0, "the end, again at once");
            Poll::Ready(())
        })
        .await;
        Ok(())
    })
}

/// A write the kernel took only part of found its send buffer full, so it
/// clears write readiness: the next wait parks until the peer reads,
/// where a write taken whole keeps readiness.
#[test]
fn a_short_write_clears_write_readiness_and_a_whole_one_keeps_it() -> io::Result<()> {
    use futures_util::AsyncWrite;
    use std::future::poll_fn;
    use std::pin::Pin;
    use std::task::Poll;
    run(|| async {
        let (ours, _peer) = tcp_pair().await?;
        let ready_now = |ours: &TcpStream| {
            let waker = std::task::Waker::noop();
            ours.poll_write_ready(&mut std::task::Context::from_waker(waker))
                .is_ready()
        };
        ours.writable().await?;
        // More than any send buffer and the peer's receive buffer hold: the
        // peer reads nothing.
        let big = vec![7u8; 64 << 20];
        poll_fn(|cx| {
            match Pin::new(&mut &ours).poll_write(cx, b"small") {
                Poll::Ready(Ok(5)) => {}
                other => panic!("a small write is taken whole: {other:?}"),
            }
            assert!(ready_now(&ours), "a whole write keeps readiness");
            match Pin::new(&mut &ours).poll_write(cx, &big) {
                Poll::Ready(Ok(n)) => assert!(n < big.len(), "{n} of {} taken", big.len()),
                other => panic!("the kernel takes part of 64 MiB: {other:?}"),
            }
            assert!(!ready_now(&ours), "a short write clears readiness");
            Poll::Ready(())
        })
        .await;
        Ok(())
    })
}

#[test]
fn peek_leaves_the_bytes_in_place() -> io::Result<()> {
    use futures_util::AsyncReadExt;
    run(|| async {
        let (mut ours, mut peer) = tcp_pair().await?;
        peer.write_all(b"abcdef")?;
        let mut peeked = [0u8; 3];
        assert_eq!(ours.peek(&mut peeked).await?, 3);
        assert_eq!(&peeked, b"abc");
        // Again: still there.
        assert_eq!(ours.peek(&mut peeked).await?, 3);
        let mut all = [0u8; 6];
        ours.read_exact(&mut all).await?;
        assert_eq!(&all, b"abcdef");
        Ok(())
    })
}

/// 1 MiB from 256 slices in vectored writes, through a `StreamWriter` (one
/// `sendmsg` per try) to a peer reading it all: every byte in order.
#[test]
fn a_vectored_mebibyte_arrives_intact() -> io::Result<()> {
    const TOTAL: usize = 1 << 20;
    run(|| async {
        let (ours, mut peer) = tcp_pair().await?;
        let reader = std::thread::spawn(move || -> io::Result<Vec<u8>> {
            let mut got = Vec::with_capacity(TOTAL);
            peer.read_to_end(&mut got)?;
            Ok(got)
        });
        let bytes: Vec<u8> = (0..TOTAL).map(|i| (i * 31 % 251) as u8).collect();
        let slices: Vec<IoSlice<'_>> = bytes.chunks(4096).map(IoSlice::new).collect();
        // Straight on the stream, retrying what it did not take...
        let half = slices.len() / 2;
        let mut sent = 0;
        let first_half: usize = slices[..half].iter().map(|s| s.len()).sum();
        while sent < first_half {
            let rest = &bytes[sent..first_half];
            let chunks: Vec<IoSlice<'_>> = rest.chunks(4096).map(IoSlice::new).collect();
            sent += (&ours).write_vectored(&chunks).await?;
        }
        // ...and through a StreamWriter, which queues what is not taken.
        let mut writer = StreamWriter::new(&ours);
        let accepted = writer.write_vectored(&slices[half..]).await?;
        assert_eq!(accepted, TOTAL - first_half);
        writer.flush().await?;
        ours.shutdown(std::net::Shutdown::Write)?;
        while !reader.is_finished() {
            ioloop::yield_now().await;
        }
        let got = reader.join().unwrap()?;
        assert_eq!(got.len(), TOTAL);
        assert!(got == bytes, "the bytes arrived changed or out of order");
        Ok(())
    })
}

#[test]
fn udp_try_recv_peek_from_and_readiness() -> io::Result<()> {
    run(|| async {
        let socket = UdpSocket::bind("127.0.0.1:0").await?;
        let addr = socket.local_addr()?;
        let mut buf = [0u8; 32];
        assert_eq!(
            socket.try_recv_from(&mut buf).unwrap_err().kind(),
            io::ErrorKind::WouldBlock
        );
        let peer = StdUdpSocket::bind("127.0.0.1:0")?;
        peer.send_to(b"ping", addr)?;
        let (n, from) = socket.peek_from(&mut buf).await?;
        assert_eq!((&buf[..n], from), (&b"ping"[..], peer.local_addr()?));
        // Peeked, not taken.
        socket.readable().await?;
        let (n, _) = socket.try_recv_from(&mut buf)?;
        assert_eq!(&buf[..n], b"ping");
        socket.writable().await?;
        assert_eq!(socket.try_send_to(b"pong", peer.local_addr()?)?, 4);
        let mut back = [0u8; 4];
        peer.recv_from(&mut back)?;
        assert_eq!(&back, b"pong");
        Ok(())
    })
}
