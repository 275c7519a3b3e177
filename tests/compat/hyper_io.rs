//! The hyper I/O wrappers' own edges, below HTTP: what `HyperIo` says of
//! its writes, its shutdown, and how much `FuturesIo` reads at once (its
//! scratch buffer's 16 KiB, at the limit and on each side of it).

use std::future::poll_fn;
use std::io;
use std::pin::Pin;

use futures_util::AsyncReadExt;
use hyper::rt::{Read, ReadBuf, Write};
use ioloop::compat::hyper::{FuturesIo, HyperIo};
use ioloop::net::{TcpListener, TcpStream};
use testkit::io_run;

/// A connected pair on 127.0.0.1.
async fn pair() -> io::Result<(TcpStream, TcpStream)> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let client = TcpStream::connect(listener.local_addr()?).await?;
    let (server, _) = listener.accept().await?;
    Ok((client, server))
}

/// One `poll_read` of `io` into a fresh `cap`-byte buffer: how many bytes
/// it filled.
async fn read_once<R: Read + Unpin>(io: &mut R, cap: usize) -> io::Result<Vec<u8>> {
    let mut memory = vec![0u8; cap];
    let mut buf = ReadBuf::new(&mut memory);
    poll_fn(|cx| Pin::new(&mut *io).poll_read(cx, buf.unfilled())).await?;
    Ok(buf.filled().to_vec())
}

/// `HyperIo` tells hyper its writes are vectored (hyper then sends a head
/// and a body in one `sendmsg`), and its shutdown ends the peer's stream.
#[test]
fn hyper_io_writes_vectored_and_shuts_down() -> io::Result<()> {
    io_run::run(|| async {
        let (mut peer, server) = pair().await?;
        let mut io = HyperIo::new(server);
        assert!(io.is_write_vectored());
        let n = poll_fn(|cx| Pin::new(&mut io).poll_write(cx, b"bye")).await?;
        assert_eq!(n, 3);
        poll_fn(|cx| Pin::new(&mut io).poll_shutdown(cx)).await?;
        let mut got = Vec::new();
        peer.read_to_end(&mut got).await?;
        assert_eq!(got, b"bye", "then the end of the stream");
        Ok(())
    })
}

/// `FuturesIo` reads at most 16 KiB at once, whatever room hyper gives:
/// 16,383 and 16,384 bytes come in one read, 16,385 in two (16,384, 1).
#[test]
fn futures_io_reads_at_most_16_kib_at_once() -> io::Result<()> {
    io_run::run(|| async {
        for (len, first) in [
            (16_383usize, 16_383usize),
            (16_384, 16_384),
            (16_385, 16_384),
        ] {
            let data: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
            let mut io = FuturesIo::new(futures_util::io::Cursor::new(data.clone()));
            let got = read_once(&mut io, 32 * 1024).await?;
            assert_eq!(got.len(), first, "{len} bytes: the first read");
            let rest = read_once(&mut io, 32 * 1024).await?;
            assert_eq!(rest.len(), len - first, "{len} bytes: the second read");
            assert!([got, rest].concat() == data, "{len} bytes differ");
        }
        // Less room than that: the read fits the room.
        let mut io = FuturesIo::new(futures_util::io::Cursor::new(vec![1u8; 100]));
        assert_eq!(read_once(&mut io, 10).await?.len(), 10);
        Ok(())
    })
}

/// Both wrappers show what they wrap.
#[test]
fn hyper_io_and_futures_io_debug_as_what_they_wrap() -> io::Result<()> {
    io_run::run(|| async {
        let (_peer, server) = pair().await?;
        let shown = format!("{:?}", HyperIo::new(server));
        assert!(shown.starts_with("HyperIo(TcpStream"), "{shown}");
        let shown = format!("{:?}", FuturesIo::new(7u8));
        assert_eq!(shown, "FuturesIo { inner: 7, scratch: 0 }");
        Ok(())
    })
}

/// `FuturesIo` passes hyper's writes through to the stream: a vectored
/// write takes every buffer where the stream's does, it says so only when
/// told (`with_vectored_writes`), its flush is the stream's (a futures-io
/// `BufWriter` hands its bytes on only then), and its shutdown ends the
/// peer's stream.
#[test]
fn futures_io_passes_writes_flush_and_shutdown_through() -> io::Result<()> {
    io_run::run(|| async {
        let (mut peer, server) = pair().await?;
        let io = FuturesIo::new(server);
        assert!(!io.is_write_vectored(), "not unless told");
        let mut io = io.with_vectored_writes(true);
        assert!(io.is_write_vectored());
        let bufs = [
            std::io::IoSlice::new(b"head "),
            std::io::IoSlice::new(b"body"),
        ];
        let n = poll_fn(|cx| Pin::new(&mut io).poll_write_vectored(cx, &bufs)).await?;
        assert_eq!(n, 9);
        poll_fn(|cx| Pin::new(&mut io).poll_shutdown(cx)).await?;
        let mut got = Vec::new();
        peer.read_to_end(&mut got).await?;
        assert_eq!(got, b"head body", "then the end of the stream");

        let held = futures_util::io::BufWriter::new(futures_util::io::Cursor::new(Vec::new()));
        let mut io = FuturesIo::new(held);
        poll_fn(|cx| Pin::new(&mut io).poll_write(cx, b"held")).await?;
        assert!(
            io.get_ref().get_ref().get_ref().is_empty(),
            "buffered until the flush"
        );
        poll_fn(|cx| Pin::new(&mut io).poll_flush(cx)).await?;
        assert_eq!(io.get_ref().get_ref().get_ref(), b"held");
        Ok(())
    })
}
