//! Issue 40's writer bugs, each once a hang on real sockets: a gathered
//! write in front of a vectored one of 1,024 slices (the stream left
//! unwritable, bug 1); the socket's own waker evicted from the waiters and
//! woken under the outbox's lock (the loop deadlocked on itself, bug 2);
//! `shutdown(Both)` with refused bytes queued holding back the read side
//! (bug 5). Each is bounded by `run`'s watchdog, so a hang fails the test.

use std::future::{Future, poll_fn};
use std::io::{self, IoSlice, Read};
use std::net::Shutdown;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::net::UnixStream as StdUnixStream;
use std::task::Poll;
use std::thread::JoinHandle;

use futures_util::{AsyncReadExt, AsyncWrite, AsyncWriteExt};
use ioloop::io::StreamWriter;
use ioloop::net::{TcpListener, TcpSocket, TcpStream, UnixStream};
use ioloop::yield_now;
use testkit::net_run::run;

use super::waiters::{Crowd, crowd_on_one_stream};

/// A connected pair whose kernel buffers are small (4 KiB asked for), so
/// a few writes fill them: ours on the runtime, and the peer as a blocking
/// std socket (a duplicate of the accepted one's descriptor).
pub(crate) async fn small_tcp_pair() -> io::Result<(TcpStream, std::net::TcpStream)> {
    let socket = TcpSocket::new_v4()?;
    socket.set_recv_buffer_size(4096)?;
    socket.bind("127.0.0.1:0".parse().unwrap())?;
    let listener: TcpListener = socket.listen(8)?;
    let ours = TcpStream::connect(listener.local_addr()?).await?;
    ours.set_send_buffer_size(4096)?;
    let (accepted, _) = listener.accept().await?;
    let fd: OwnedFd = accepted.as_fd().try_clone_to_owned()?;
    let peer = std::net::TcpStream::from(fd);
    peer.set_nonblocking(false)?;
    Ok((ours, peer))
}

/// Reads everything `peer` receives until end of stream, on a thread of
/// its own (so the loop stays free), once the returned sender says go.
fn read_to_end_on_a_thread(
    mut peer: impl Read + Send + 'static,
) -> (std::sync::mpsc::Sender<()>, JoinHandle<Vec<u8>>) {
    let (go, wait) = std::sync::mpsc::channel::<()>();
    let reader = std::thread::spawn(move || {
        let _ = wait.recv();
        let mut got = Vec::new();
        peer.read_to_end(&mut got).unwrap();
        got
    });
    (go, reader)
}

/// What the reader thread received, waited for off the loop.
async fn received(reader: JoinHandle<Vec<u8>>) -> Vec<u8> {
    ioloop::spawn_blocking(move || reader.join().unwrap())
        .await
        .unwrap()
}

/// `n` slices of 20 bytes, each different.
fn slices(n: usize) -> Vec<[u8; 20]> {
    (0..n)
        .map(|i| {
            let mut s = [b'.'; 20];
            s[..8].copy_from_slice(&(i as u64).to_le_bytes());
            s
        })
        .collect()
}

/// Bug 1's scenario on `ours` (peer `peer`): one gathered byte, then in
/// the same poll a vectored write of 1,024 slices, through the writer or
/// the socket itself; then the rest and a drain, which must not wait (the
/// peer's buffer holds it all). The peer must get every byte, in order.
async fn gathered_byte_then_1024_slices<W>(
    ours: &W,
    peer: &mut impl Read,
    through_writer: bool,
) -> io::Result<()>
where
    for<'a> &'a W: AsyncWrite + Unpin,
{
    let data = slices(1024);
    let bufs: Vec<_> = data.iter().map(|s| IoSlice::new(s)).collect();
    let all = data.concat();
    // The edges the new socket raised are taken first: none is left to
    // hide a readiness cleared by mistake.
    yield_now().await;
    let mut writer = StreamWriter::new(ours);
    writer.write(b"x");
    if through_writer {
        assert_eq!(writer.write_vectored(&bufs).await?, all.len());
    } else {
        let mut raw = ours;
        let taken = raw.write_vectored(&bufs).await?;
        raw.write_all(&all[taken..]).await?;
    }
    writer.drain().await?;
    let mut got = vec![0; 1 + all.len()];
    peer.read_exact(&mut got)?;
    assert!(
        got[0] == b'x' && got[1..] == all[..],
        "bytes lost or reordered"
    );
    Ok(())
}

/// Bug 1: the queued byte went in front of the 1,024 slices, `sendmsg`
/// took the first 1,024 of those 1,025 (the byte and 1,023 slices), and the
/// short count was taken for a full send buffer: write readiness cleared,
/// no edge ever came, and the next drain or write waited for ever.
#[test]
fn a_gathered_byte_then_1024_slices_in_one_poll_leave_the_stream_writable() -> io::Result<()> {
    run(|| async {
        for through_writer in [true, false] {
            let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
            let ours = TcpStream::connect(listener.local_addr()?).await?;
            let (mut peer, _) = listener.accept()?;
            gathered_byte_then_1024_slices(&ours, &mut peer, through_writer).await?;
            let (ours, mut peer) = StdUnixStream::pair()?;
            let ours = UnixStream::from_std(ours)?;
            gathered_byte_then_1024_slices(&ours, &mut peer, through_writer).await?;
        }
        Ok(())
    })
}

/// Bug 2: past 64 poll-function callers the oldest waiter is woken to make
/// room; it was the socket's own waker, woken while the caller's write
/// held the outbox's lock, and its wake takes that lock: the loop thread
/// blocked on itself for ever. `drain` held the same lock while it waited.
#[test]
fn seventy_writers_on_one_stream_with_its_own_waker_among_them_all_finish() -> io::Result<()> {
    run(|| async {
        for how in [Crowd::WriteAll, Crowd::Drain] {
            let (ours, peer) = small_tcp_pair().await?;
            crowd_on_one_stream(ours, peer, 68, how).await?;
        }
        Ok(())
    })
}

/// Bug 5: `shutdown(Both)` with bytes the kernel refused still queued: the
/// read side is shut at once (a read returns end of stream, as on Linux,
/// std and tokio), the write side once the queue is sent; the peer gets
/// every byte, then end of stream.
#[test]
fn shutdown_both_with_refused_bytes_queued_ends_reads_at_once() -> io::Result<()> {
    run(|| async {
        let (ours, peer) = small_tcp_pair().await?;
        let (go, reader) = read_to_end_on_a_thread(peer);
        // Fill the kernel's buffers.
        let mut sent = 0;
        loop {
            match ours.try_write(&[7; 4096]) {
                Ok(n) => sent += n,
                Err(err) if err.kind() == io::ErrorKind::WouldBlock => break,
                Err(err) => return Err(err),
            }
        }
        // Gathered; its send after this poll is refused.
        StreamWriter::new(&ours).write(b"tail");
        yield_now().await;
        ours.shutdown(Shutdown::Both)?;
        let mut buf = [0; 16];
        assert_eq!(
            (&ours).read(&mut buf).await?,
            0,
            "a read after shutdown(Both)"
        );
        go.send(()).unwrap();
        let got = received(reader).await;
        assert_eq!(got.len(), sent + 4);
        assert!(got.ends_with(b"tail"));
        Ok(())
    })
}

/// A stream dropped with refused bytes queued, its last handle gone while
/// the loop's wake for writability still holds the outbox: when the
/// runtime shuts down and drops that wake, the outbox gets one last send
/// (the kernel has room by then), so no byte the writer accepted is lost.
#[test]
fn a_stream_dropped_with_refused_bytes_sends_them_when_its_wake_goes() -> io::Result<()> {
    dropped_with_refused_bytes(|| async {
        let (ours, peer) = small_tcp_pair().await?;
        Ok((ours, peer))
    })
}

/// The same for a Unix stream, whose outbox is the same code over another
/// kernel buffer.
#[test]
fn a_unix_stream_dropped_with_refused_bytes_sends_them_when_its_wake_goes() -> io::Result<()> {
    dropped_with_refused_bytes(|| async {
        let (ours, peer) = UnixStream::pair()?;
        let fd: OwnedFd = peer.as_fd().try_clone_to_owned()?;
        drop(peer);
        let peer = StdUnixStream::from(fd);
        peer.set_nonblocking(false)?;
        Ok((ours, peer))
    })
}

/// The shutdown case above, for a stream `pair` makes (ours on the
/// runtime, the peer a blocking std socket): the kernel filled, 100 bytes
/// gathered and refused, the stream dropped, the runtime gone once the
/// kernel would take them.
fn dropped_with_refused_bytes<S, P, F>(pair: impl FnOnce() -> F + Send + 'static) -> io::Result<()>
where
    S: AsFd + TryWrite,
    for<'a> &'a S: futures_util::AsyncWrite + Unpin,
    P: Read + Send + 'static,
    F: Future<Output = io::Result<(S, P)>>,
{
    let (sent, reader) = testkit::util::within(testkit::net_run::SAFETY_NET, || {
        ioloop::block_on(async {
            let (ours, peer) = pair().await?;
            let (go, reader) = read_to_end_on_a_thread(peer);
            let mut sent = 0;
            loop {
                match ours.try_write_some(&[b'a'; 4096]) {
                    Ok(n) => sent += n,
                    Err(err) if err.kind() == io::ErrorKind::WouldBlock => break,
                    Err(err) => return Err(err),
                }
            }
            // Gathered; its send after this poll is refused, and the
            // socket's waker waits for writability.
            StreamWriter::new(&ours).write(&[b'b'; 100]);
            yield_now().await;
            let dup: OwnedFd = ours.as_fd().try_clone_to_owned()?;
            drop(ours);
            // The peer drains the kernel; this thread (the loop's) waits
            // until the kernel would take a send, so the loop never sees
            // the writability before the runtime goes.
            go.send(()).unwrap();
            let mut fd = libc::pollfd {
                fd: std::os::fd::AsRawFd::as_raw_fd(&dup),
                events: libc::POLLOUT,
                revents: 0,
            };
            // SAFETY: `fd` is one valid pollfd, and `dup` outlives the call.
            let ready = unsafe { libc::poll(&mut fd, 1, 30_000) };
            assert_eq!(ready, 1, "never writable again");
            // The duplicate would keep the socket open past the drop.
            drop(dup);
            Ok::<_, io::Error>((sent, reader))
        })
    })?;
    // The runtime is gone: the peer reads what the drop sent, then the end.
    let got = reader.join().unwrap();
    assert_eq!(got.len(), sent + 100, "bytes lost in the drop");
    assert!(got[..sent].iter().all(|&b| b == b'a'));
    assert!(got[sent..].iter().all(|&b| b == b'b'));
    Ok(())
}

/// The streams' `try_write`, for the test above.
trait TryWrite {
    fn try_write_some(&self, buf: &[u8]) -> io::Result<usize>;
}

impl TryWrite for TcpStream {
    fn try_write_some(&self, buf: &[u8]) -> io::Result<usize> {
        self.try_write(buf)
    }
}

impl TryWrite for UnixStream {
    fn try_write_some(&self, buf: &[u8]) -> io::Result<usize> {
        self.try_write(buf)
    }
}

/// A flush that meets an error itself (not one a background send kept)
/// returns it at once: the outbox does not take it for a full buffer and
/// wait. The peer is gone before the write, and the drain comes in the
/// same poll, before the wake after it could send.
#[test]
fn a_drain_that_meets_a_send_error_returns_it() -> io::Result<()> {
    run(|| async {
        let (ours, peer) = UnixStream::pair()?;
        drop(peer);
        yield_now().await;
        let mut writer = StreamWriter::new(&ours);
        writer.write(b"to no one");
        // In this poll: the wake after it, which would meet the error too
        // and keep it for the next call, has not run yet.
        let drained = poll_once_here(writer.drain()).await;
        let Poll::Ready(Err(err)) = drained else {
            panic!("the drain did not fail at once: {drained:?}");
        };
        assert_eq!(err.kind(), io::ErrorKind::BrokenPipe, "{err:?}");
        Ok(())
    })
}

/// A raw write behind queued bytes that meets an error returns it at
/// once: the peer is gone, a gathered write is queued, and a `write_all`
/// in the same poll sends the queue and its bytes in one `sendmsg`, which
/// fails.
#[test]
fn a_write_behind_queued_bytes_that_meets_a_send_error_returns_it() -> io::Result<()> {
    run(|| async {
        let (ours, peer) = UnixStream::pair()?;
        drop(peer);
        yield_now().await;
        StreamWriter::new(&ours).write(b"queued");
        let written = poll_once_here((&ours).write_all(b"raw")).await;
        let Poll::Ready(Err(err)) = written else {
            panic!("the write did not fail at once: {written:?}");
        };
        assert_eq!(err.kind(), io::ErrorKind::BrokenPipe, "{err:?}");
        Ok(())
    })
}

/// Polls `future` once, in the calling task's poll, with its waker.
async fn poll_once_here<F: Future>(future: F) -> Poll<F::Output> {
    let mut future = std::pin::pin!(future);
    poll_fn(|cx| Poll::Ready(future.as_mut().poll(cx))).await
}
