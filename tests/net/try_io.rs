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
