//! Vectored writes of many slices: one `sendmsg(2)` takes at most
//! `IOV_MAX` (1,024 on Linux) of them, and a write of more takes the first
//! 1,024 and says how much that was, as std and tokio do, rather than
//! failing with `EMSGSIZE`.

use std::future::{Future, poll_fn};
use std::io::{self, IoSlice, Read};
use std::net::TcpStream as StdStream;
use std::os::unix::net::UnixStream as StdUnixStream;
use std::pin::Pin;
use std::task::Poll;

use futures_util::{AsyncWrite, AsyncWriteExt};
use ioloop::io::StreamWriter;
use ioloop::net::{TcpStream, UnixStream};
use testkit::net_run::run;

/// One `sendmsg` takes at most this many slices.
const IOV_MAX: usize = 1024;

/// `n` slices of 4 bytes each, every one different: slice `i` is `i` in
/// little-endian.
fn slices(n: usize) -> Vec<[u8; 4]> {
    (0..n as u32).map(u32::to_le_bytes).collect()
}

/// The bytes of the first `n` of `data`.
fn first(data: &[[u8; 4]], n: usize) -> Vec<u8> {
    data[..n].concat()
}

/// A connected pair: ours on the runtime, the peer a blocking std socket.
async fn tcp_pair() -> io::Result<(TcpStream, StdStream)> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    let ours = TcpStream::connect(listener.local_addr()?).await?;
    let (peer, _) = listener.accept()?;
    Ok((ours, peer))
}

/// A connected Unix pair: ours on the runtime, the peer a std socket.
fn unix_pair() -> io::Result<(UnixStream, StdUnixStream)> {
    let (ours, peer) = StdUnixStream::pair()?;
    Ok((UnixStream::from_std(ours)?, peer))
}

/// Reads exactly `expected.len()` bytes from `peer` and compares them.
fn arrives(peer: &mut impl Read, expected: &[u8]) -> io::Result<()> {
    let mut got = vec![0u8; expected.len()];
    peer.read_exact(&mut got)?;
    assert!(got == expected, "the bytes that arrived differ");
    Ok(())
}

/// The slice counts tried, with the count each write must return.
fn cases() -> [(usize, usize); 5] {
    [
        (0, 0),
        (1, 4),
        (IOV_MAX, 4 * IOV_MAX),
        (IOV_MAX + 1, 4 * IOV_MAX),
        (2_000, 4 * IOV_MAX),
    ]
}

#[test]
fn a_vectored_write_of_more_than_1024_slices_does_not_fail_with_emsgsize() -> io::Result<()> {
    run(|| async {
        let (mut ours, mut peer) = tcp_pair().await?;
        for (n, expected) in cases() {
            let data = slices(n);
            let bufs: Vec<_> = data.iter().map(|s| IoSlice::new(s)).collect();
            // futures-io's `AsyncWrite::poll_write_vectored`.
            let written = ours.write_vectored(&bufs).await?;
            assert_eq!(written, expected, "write_vectored of {n} slices");
            arrives(&mut peer, &first(&data, expected / 4))?;
        }
        Ok(())
    })
}

#[test]
fn try_write_vectored_of_more_than_1024_slices_does_not_fail_with_emsgsize() -> io::Result<()> {
    run(|| async {
        let (ours, mut peer) = tcp_pair().await?;
        for (n, expected) in cases() {
            let data = slices(n);
            let bufs: Vec<_> = data.iter().map(|s| IoSlice::new(s)).collect();
            ours.writable().await?;
            let written = ours.try_write_vectored(&bufs)?;
            assert_eq!(written, expected, "try_write_vectored of {n} slices");
            arrives(&mut peer, &first(&data, expected / 4))?;
        }
        Ok(())
    })
}

#[test]
fn unix_vectored_writes_of_more_than_1024_slices_do_not_fail_with_emsgsize() -> io::Result<()> {
    run(|| async {
        let (mut ours, mut peer) = unix_pair()?;
        for (n, expected) in cases() {
            let data = slices(n);
            let bufs: Vec<_> = data.iter().map(|s| IoSlice::new(s)).collect();
            let written = ours.write_vectored(&bufs).await?;
            assert_eq!(written, expected, "write_vectored of {n} slices");
            arrives(&mut peer, &first(&data, expected / 4))?;
            ours.writable().await?;
            let written = ours.try_write_vectored(&bufs)?;
            assert_eq!(written, expected, "try_write_vectored of {n} slices");
            arrives(&mut peer, &first(&data, expected / 4))?;
        }
        Ok(())
    })
}

/// `StreamWriter` takes every slice (what the socket did not take now is
/// queued), so its count is all of them, and all of them arrive.
#[test]
fn stream_writer_write_vectored_of_more_than_1024_slices_does_not_fail_with_emsgsize()
-> io::Result<()> {
    run(|| async {
        let (ours, mut peer) = tcp_pair().await?;
        let mut writer = StreamWriter::new(&ours);
        for (n, _) in cases() {
            let data = slices(n);
            let bufs: Vec<_> = data.iter().map(|s| IoSlice::new(s)).collect();
            let written = writer.write_vectored(&bufs).await?;
            assert_eq!(written, 4 * n, "StreamWriter::write_vectored of {n} slices");
            writer.flush().await?;
            arrives(&mut peer, &first(&data, n))?;
        }
        Ok(())
    })
}

/// A write that took the first 1,024 slices of 2,000 is short only because
/// of the cap, not because the send buffer is full: the stream stays
/// writable, and the next write goes out at once instead of waiting for an
/// edge that never comes (what `StreamWriter::flush` hung on).
#[test]
fn a_vectored_write_cut_at_1024_slices_keeps_the_stream_writable() -> io::Result<()> {
    run(|| async {
        for unix in [false, true] {
            let (mut ours, mut peer): (Box<dyn AsyncWrite + Unpin>, Box<dyn Read>) = if unix {
                let (ours, peer) = unix_pair()?;
                (Box::new(ours), Box::new(peer))
            } else {
                let (ours, peer) = tcp_pair().await?;
                (Box::new(ours), Box::new(peer))
            };
            let data = slices(2_000);
            let bufs: Vec<_> = data.iter().map(|s| IoSlice::new(s)).collect();
            assert_eq!(ours.write_vectored(&bufs).await?, 4 * IOV_MAX);
            let next = poll_fn(|cx| Poll::Ready(Pin::new(&mut ours).poll_write(cx, b"next"))).await;
            assert!(
                matches!(next, Poll::Ready(Ok(4))),
                "the next write waited (unix: {unix})"
            );
            let mut expected = first(&data, IOV_MAX);
            expected.extend_from_slice(b"next");
            arrives(&mut peer, &expected)?;
        }
        Ok(())
    })
}

/// Where a vectored write goes.
#[derive(Clone, Copy, Debug)]
enum Path {
    /// `StreamWriter::write_vectored`.
    Writer,
    /// The socket's `AsyncWrite::poll_write_vectored`.
    Socket,
    /// The socket's `try_write_vectored`.
    TrySocket,
}

/// IOV_MAX at its edge (issue 40's rule "every length limit at its edge"):
/// 1,023, 1,024 and 1,025 slices, with the outbox empty and holding bytes
/// in front (a gathered write made in the same poll), through a
/// `StreamWriter`, the socket's `write_vectored` and its
/// `try_write_vectored`. The socket takes the slices one `sendmsg` can
/// (1,024, or 1,023 beside queued bytes), the writer all of them; the
/// stream stays writable after (the next write or drain goes out at once),
/// and the peer gets every byte in order.
async fn iov_max_at_its_edge<W>(
    ours: &W,
    peer: &mut impl Read,
    try_write_vectored: impl Fn(&W, &[IoSlice<'_>]) -> io::Result<usize>,
) -> io::Result<()>
where
    for<'a> &'a W: AsyncWrite + Unpin,
{
    for n in [IOV_MAX - 1, IOV_MAX, IOV_MAX + 1] {
        for queued in [&b""[..], b"q", b"some queued bytes"] {
            for path in [Path::Writer, Path::Socket, Path::TrySocket] {
                let what = format!("{n} slices, {} queued, {path:?}", queued.len());
                let data = slices(n);
                let bufs: Vec<_> = data.iter().map(|s| IoSlice::new(s)).collect();
                // The edges the stream raised so far are taken first: none
                // is left to hide a readiness cleared by mistake.
                ioloop::yield_now().await;
                let mut writer = StreamWriter::new(ours);
                writer.write(queued);
                let cap = if queued.is_empty() {
                    IOV_MAX
                } else {
                    IOV_MAX - 1
                };
                let mut raw = ours;
                let (taken, expected) = match path {
                    Path::Writer => (writer.write_vectored(&bufs).await?, 4 * n),
                    Path::Socket => (raw.write_vectored(&bufs).await?, 4 * n.min(cap)),
                    Path::TrySocket => (try_write_vectored(ours, &bufs)?, 4 * n.min(cap)),
                };
                assert_eq!(taken, expected, "{what}");
                let mut sent = queued.to_vec();
                sent.extend_from_slice(&first(&data, taken / 4));
                if let Path::Writer = path {
                    // What the socket did not take waits in the writer: a
                    // drain sends it in its first poll.
                    let drained = poll_fn(|cx| {
                        let drain = std::pin::pin!(writer.drain());
                        Poll::Ready(drain.poll(cx))
                    })
                    .await;
                    assert!(
                        matches!(drained, Poll::Ready(Ok(()))),
                        "{what}: drain waited"
                    );
                } else {
                    let next =
                        poll_fn(|cx| Poll::Ready(Pin::new(&mut raw).poll_write(cx, b"next"))).await;
                    assert!(
                        matches!(next, Poll::Ready(Ok(4))),
                        "{what}: the next write waited"
                    );
                    sent.extend_from_slice(b"next");
                }
                arrives(peer, &sent)?;
            }
        }
    }
    Ok(())
}

#[test]
fn iov_max_at_its_edge_with_and_without_queued_bytes_on_tcp() -> io::Result<()> {
    run(|| async {
        let (ours, mut peer) = tcp_pair().await?;
        iov_max_at_its_edge(&ours, &mut peer, TcpStream::try_write_vectored).await
    })
}

#[test]
fn iov_max_at_its_edge_with_and_without_queued_bytes_on_unix() -> io::Result<()> {
    run(|| async {
        let (ours, mut peer) = unix_pair()?;
        iov_max_at_its_edge(&ours, &mut peer, UnixStream::try_write_vectored).await
    })
}

/// Queued bytes in front of 1,025 slices whose first 1,023 are empty: the
/// first `sendmsg` (the queue and those 1,023) takes exactly the queue, and
/// the write goes on with the slices after, instead of saying it took
/// nothing (which `write_all` reports as `WriteZero`).
#[test]
fn queued_bytes_then_empty_slices_then_data_take_the_data() -> io::Result<()> {
    run(|| async {
        let (ours, mut peer) = unix_pair()?;
        let mut bufs = vec![IoSlice::new(b""); IOV_MAX - 1];
        bufs.push(IoSlice::new(b"ab"));
        bufs.push(IoSlice::new(b"cd"));
        StreamWriter::new(&ours).write(b"q");
        let mut raw = &ours;
        assert_eq!(raw.write_vectored(&bufs).await?, 2);
        raw.write_all(b"cd").await?;
        arrives(&mut peer, b"qabcd")?;
        // The same through `try_write_vectored`.
        StreamWriter::new(&ours).write(b"q");
        ours.writable().await?;
        assert_eq!(ours.try_write_vectored(&bufs)?, 2);
        arrives(&mut peer, b"qab")?;
        Ok(())
    })
}
