//! Framing reads with no `unsafe`: `StreamReader::fill_more` reads more
//! while part of a frame is buffered, and `io::read_buf` appends one read
//! to a `Vec`; both over TCP on 127.0.0.1, both cancel-safe.

use std::io::{self, Write};
use std::net::TcpStream as StdStream;
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use io_run::run;
use ioloop::io::{DEFAULT_MAX_LINE_LENGTH, StreamReader, read_buf};
use ioloop::net::{TcpListener, TcpStream};
use ioloop::time::timeout;
use socket2::SockRef;
use testkit::io_run;

/// How long a read waits for bytes the peer is holding back: it times out
/// whatever the value.
const GIVE_UP: Duration = Duration::from_millis(1);

/// A frame: a 4-byte big-endian length, then that many bytes.
fn encode(frames: &[Vec<u8>]) -> Vec<u8> {
    let mut wire = Vec::new();
    for body in frames {
        wire.extend_from_slice(&u32::try_from(body.len()).unwrap().to_be_bytes());
        wire.extend_from_slice(body);
    }
    wire
}

/// A whole frame at the front of `buf`: its body, and its size on the wire.
fn frame(buf: &[u8]) -> Option<(&[u8], usize)> {
    let len = u32::from_be_bytes(buf.get(..4)?.try_into().unwrap()) as usize;
    Some((buf.get(4..4 + len)?, 4 + len))
}

/// A listener, a peer thread running `peer` on a blocking std client, and
/// the accepted ioloop end.
async fn connected(
    peer: impl FnOnce(StdStream) -> io::Result<()> + Send + 'static,
) -> io::Result<(TcpStream, thread::JoinHandle<io::Result<()>>)> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let peer = thread::spawn(move || {
        let client = StdStream::connect(addr)?;
        client.set_nodelay(true)?;
        peer(client)
    });
    Ok((listener.accept().await?.0, peer))
}

#[test]
fn fill_more_parses_frames_split_at_every_byte_boundary() -> io::Result<()> {
    run(|| async {
        let frames: Vec<Vec<u8>> = vec![b"hello".to_vec(), Vec::new(), vec![7; 300], b"x".to_vec()];
        let wire = encode(&frames);
        let (go, next) = mpsc::channel::<()>();
        let bytes = wire.clone();
        // One byte at a time, each only once the last one was read: every
        // byte boundary is where a read ends.
        let (stream, peer) = connected(move |mut client| {
            for byte in bytes {
                let _ = next.recv();
                client.write_all(&[byte])?;
            }
            let _ = next.recv(); // then the end
            Ok(())
        })
        .await?;
        let mut reader = StreamReader::new(stream);
        let mut got = Vec::new();
        loop {
            if let Some((body, size)) = frame(reader.buffer()) {
                got.push(body.to_vec());
                reader.consume(size);
                continue;
            }
            // A dropped fill loses nothing: the peer is waiting, so it
            // times out, and the partial frame is still there.
            let before = reader.buffer().to_vec();
            assert!(timeout(GIVE_UP, reader.fill_more()).await.is_err());
            assert_eq!(reader.buffer(), before);
            let _ = go.send(());
            if reader.fill_more().await? == 0 {
                break;
            }
        }
        assert_eq!(got, frames);
        assert!(reader.buffer().is_empty());
        peer.join().expect("peer")
    })
}

#[test]
fn fill_more_reads_odd_chunks_and_a_frame_past_the_line_limit() -> io::Result<()> {
    const BIG: usize = 3 * DEFAULT_MAX_LINE_LENGTH;
    run(|| async {
        let mut frames: Vec<Vec<u8>> = (0..200u8).map(|i| vec![i; usize::from(i)]).collect();
        frames.insert(100, (0..BIG).map(|i| i as u8).collect());
        let wire = encode(&frames);
        let (stream, peer) = connected(move |mut client| {
            let mut rest = &wire[..];
            for size in [1, 2, 3, 5, 7, 11, 13, 4099].iter().cycle() {
                let (piece, tail) = rest.split_at((*size).min(rest.len()));
                client.write_all(piece)?;
                rest = tail;
                if rest.is_empty() {
                    return Ok(());
                }
            }
            unreachable!()
        })
        .await?;
        let mut reader = StreamReader::new(stream);
        let (mut got, mut peak) = (Vec::new(), 0);
        loop {
            peak = peak.max(reader.capacity());
            if let Some((body, size)) = frame(reader.buffer()) {
                got.push(body.to_vec());
                reader.consume(size);
            } else if reader.fill_more().await? == 0 {
                break;
            }
        }
        assert!(got == frames, "the frames arrive as sent");
        // Doubling: a frame costs at most twice its size, and once the
        // buffer is empty the limit is the bound again.
        assert!(peak <= 2 * BIG + 64 * 1024, "peak {peak}");
        assert!(reader.capacity() <= DEFAULT_MAX_LINE_LENGTH + 8 * 1024);
        assert_eq!(reader.fill_more().await?, 0, "the end stays the end");
        peer.join().expect("peer")
    })
}

#[test]
fn read_buf_dropped_again_and_again_while_data_trickles_in_loses_nothing() -> io::Result<()> {
    run(|| async {
        let pieces: Vec<Vec<u8>> = (1..=40u8).map(|i| vec![i; usize::from(i) * 3]).collect();
        let sent = pieces.concat();
        let (go, next) = mpsc::channel::<()>();
        let sizes: Vec<usize> = pieces.iter().map(Vec::len).collect();
        let (stream, peer) = connected(move |mut client| {
            for piece in pieces {
                let _ = next.recv();
                client.write_all(&piece)?;
            }
            Ok(())
        })
        .await?;
        let (mut buf, mut dropped) = (b"kept".to_vec(), 0);
        for size in sizes {
            // Nothing is coming until `go`: the read is dropped mid-wait,
            // and `buf` holds no zeros for it.
            let mut expected = buf.len();
            assert!(timeout(GIVE_UP, read_buf(&stream, &mut buf)).await.is_err());
            assert_eq!(buf.len(), expected);
            let _ = go.send(());
            // Then reads under a timeout that may or may not fire.
            let want = expected + size;
            while expected < want {
                match timeout(Duration::from_micros(50), read_buf(&stream, &mut buf)).await {
                    Ok(n) => expected += n?,
                    Err(_) => dropped += 1,
                }
                assert_eq!(buf.len(), expected);
            }
        }
        assert_eq!(&buf[..4], b"kept");
        assert!(
            buf[4..] == sent[..],
            "bytes as sent, no zeros ({dropped} reads dropped)"
        );
        peer.join().expect("peer")?;
        assert_eq!(read_buf(&stream, &mut buf).await?, 0, "end of stream");
        assert_eq!(buf.len(), 4 + sent.len());
        Ok(())
    })
}

#[test]
fn read_buf_after_a_reset_is_an_error_that_leaves_buf_as_it_was() -> io::Result<()> {
    run(|| async {
        let (done, reset) = mpsc::channel::<()>();
        let (stream, peer) = connected(move |mut client| {
            client.write_all(b"before the reset")?;
            let _ = reset.recv();
            SockRef::from(&client).set_linger(Some(Duration::ZERO))?;
            Ok(())
        })
        .await?;
        let ((mut half, _), mut buf) = (stream.split(), Vec::new());
        while buf.len() < 16 {
            read_buf(&mut half, &mut buf).await?;
        }
        let _ = done.send(());
        peer.join().expect("peer")?;
        let err = read_buf(&mut half, &mut buf).await.unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::ConnectionReset);
        assert_eq!(buf, b"before the reset");
        Ok(())
    })
}
