//! Every waiter path past its eviction limit (issue 40's rule "no wake
//! under a lock"). Per direction a source keeps the inline poll-function
//! caller and 64 more; one more wakes the oldest, who registers again. So
//! each path is driven with 63, 64, 65 and 66 poll-function callers, with
//! a waiting future (a keyed waiter) beside them, and on a stream with
//! the socket's own waker among the writers (a gathered write the kernel
//! refused): on TCP, Unix streams and UDP (whose sends never wait on
//! loopback, so its receivers). Every caller must finish with its own
//! bytes, none lost; a wake made under a lock of the library panics in
//! these debug builds (`runtime/src/sync/lock.rs`), and before issue 40
//! the 66th writer deadlocked the loop.

use std::future::{Future, poll_fn};
use std::io::{self, Read, Write};
use std::net::Shutdown;
use std::os::unix::net::UnixStream as StdUnixStream;
use std::pin::Pin;
use std::sync::Arc;
use std::thread::JoinHandle;

use futures_util::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use ioloop::io::StreamWriter;
use ioloop::net::{TcpStream, UdpSocket, UnixStream};
use ioloop::yield_now;
use testkit::net_run::run;

use super::outbox::small_tcp_pair;

/// The poll-function callers tried per direction: the 65 kept, and one
/// on each side of that.
pub(crate) const CALLERS: [usize; 4] = [63, 64, 65, 66];

/// A blocking peer, read and written from a thread of its own.
pub(crate) trait Peer: Read + Write + Send + 'static {}
impl<T: Read + Write + Send + 'static> Peer for T {}

/// A stream of ours, and what the scenarios need of it beyond the
/// futures-io traits on `&` it.
pub(crate) trait Ours: Send + Sync + 'static {
    fn shut_write(&self) -> io::Result<()>;
    /// Its `readable`, a waiting future (a keyed waiter).
    fn readable_now(&self) -> Pin<Box<dyn Future<Output = io::Result<()>> + Send + '_>>;
}

impl Ours for TcpStream {
    fn shut_write(&self) -> io::Result<()> {
        self.shutdown(Shutdown::Write)
    }
    fn readable_now(&self) -> Pin<Box<dyn Future<Output = io::Result<()>> + Send + '_>> {
        Box::pin(self.readable())
    }
}

impl Ours for UnixStream {
    fn shut_write(&self) -> io::Result<()> {
        self.shutdown(Shutdown::Write)
    }
    fn readable_now(&self) -> Pin<Box<dyn Future<Output = io::Result<()>> + Send + '_>> {
        Box::pin(self.readable())
    }
}

/// A Unix pair with a small send buffer on our side.
pub(crate) fn small_unix_pair() -> io::Result<(UnixStream, StdUnixStream)> {
    let (ours, peer) = StdUnixStream::pair()?;
    let ours = UnixStream::from_std(ours)?;
    ours.set_send_buffer_size(4096)?;
    Ok((ours, peer))
}

/// How each of a crowd of writers writes.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Crowd {
    /// `write_all` on the socket: a poll function's caller.
    WriteAll,
    /// A `StreamWriter::write`, then `drain`, which waits in the socket's
    /// `poll_flush`.
    Drain,
}

/// What the peer thread does once told to go: reads to the end, after
/// writing `send` (if any), and returns what it read.
fn peer_thread(
    mut peer: impl Peer,
    send: Vec<u8>,
) -> (std::sync::mpsc::Sender<()>, JoinHandle<Vec<u8>>) {
    let (go, wait) = std::sync::mpsc::channel::<()>();
    let thread = std::thread::spawn(move || {
        let _ = wait.recv();
        peer.write_all(&send).unwrap();
        let mut got = Vec::new();
        peer.read_to_end(&mut got).unwrap();
        got
    });
    (go, thread)
}

/// Waits for the peer thread off the loop.
async fn joined(thread: JoinHandle<Vec<u8>>) -> Vec<u8> {
    ioloop::spawn_blocking(move || thread.join().unwrap())
        .await
        .unwrap()
}

/// The writer that fills the kernel's buffers: this many bytes of 0.
const BIG: usize = 1 << 20;

/// Fills the kernel's buffers with a raw `write_all` that waits (the
/// inline write waiter), then parks the socket's own waker among the
/// writers: a gathered write of one byte 1, whose send is refused.
async fn fill_and_refuse<S: Ours>(stream: &Arc<S>) -> Vec<ioloop::JoinHandle<io::Result<()>>>
where
    for<'a> &'a S: AsyncWrite + Unpin,
{
    let first = stream.clone();
    let filling = ioloop::spawn(async move { (&*first).write_all(&vec![0; BIG]).await });
    yield_now().await;
    let gathered = stream.clone();
    let refused = ioloop::spawn(async move {
        StreamWriter::new(&*gathered).write(&[1]);
        Ok(())
    });
    yield_now().await;
    vec![filling, refused]
}

/// `crowd` writers more (fewer than 250) on a stream full as
/// [`fill_and_refuse`] leaves it: writer `i` writes 100 bytes of `2 + i`.
/// Then the peer reads: every byte of every writer arrives.
pub(crate) async fn crowd_on_one_stream<S: Ours>(
    ours: S,
    peer: impl Peer,
    crowd: usize,
    how: Crowd,
) -> io::Result<()>
where
    for<'a> &'a S: AsyncWrite + Unpin,
{
    assert!(crowd < 250);
    let stream = Arc::new(ours);
    let (go, peer) = peer_thread(peer, Vec::new());
    let mut tasks = fill_and_refuse(&stream).await;
    for i in 0..crowd {
        let stream = stream.clone();
        let byte = 2 + i as u8;
        tasks.push(ioloop::spawn(async move {
            match how {
                Crowd::WriteAll => (&*stream).write_all(&[byte; 100]).await,
                Crowd::Drain => {
                    let mut writer = StreamWriter::new(&*stream);
                    writer.write(&[byte; 100]);
                    writer.drain().await
                }
            }
        }));
        yield_now().await;
    }
    go.send(()).unwrap();
    for task in tasks {
        task.await.unwrap()?;
    }
    stream.shut_write()?;
    let got = joined(peer).await;
    let mut counts = [0usize; 256];
    for &b in &got {
        counts[usize::from(b)] += 1;
    }
    let what = format!("{how:?}, {crowd} more writers");
    assert_eq!(got.len(), BIG + 1 + 100 * crowd, "{what}");
    assert_eq!((counts[0], counts[1]), (BIG, 1), "{what}");
    for i in 0..crowd {
        assert_eq!(counts[2 + i], 100, "{what}: writer {i}");
    }
    Ok(())
}

#[test]
fn tcp_writers_past_the_limit_with_the_sockets_own_waker_among_them() -> io::Result<()> {
    run(|| async {
        for callers in CALLERS {
            for how in [Crowd::WriteAll, Crowd::Drain] {
                let (ours, peer) = small_tcp_pair().await?;
                // The filling write and the socket's own waker are two.
                crowd_on_one_stream(ours, peer, callers - 2, how).await?;
            }
        }
        Ok(())
    })
}

#[test]
fn unix_writers_past_the_limit_with_the_sockets_own_waker_among_them() -> io::Result<()> {
    run(|| async {
        for callers in CALLERS {
            for how in [Crowd::WriteAll, Crowd::Drain] {
                let (ours, peer) = small_unix_pair()?;
                crowd_on_one_stream(ours, peer, callers - 2, how).await?;
            }
        }
        Ok(())
    })
}

/// `callers` readers of one byte each (poll-function callers: `read` on
/// `&stream`), and a waiting future (`readable`), on a stream whose
/// socket's own waker waits among its writers meanwhile. Then the peer
/// writes one byte per reader, different each, and reads to the end:
/// every reader gets one, all different, and every byte written arrives.
async fn readers_on_one_stream<S: Ours>(ours: S, peer: impl Peer, callers: usize) -> io::Result<()>
where
    for<'a> &'a S: AsyncRead + AsyncWrite + Unpin,
{
    let stream = Arc::new(ours);
    let sent: Vec<u8> = (0..callers).map(|i| i as u8).collect();
    let (go, peer) = peer_thread(peer, sent.clone());
    let writers = fill_and_refuse(&stream).await;
    let keyed = {
        let stream = stream.clone();
        ioloop::spawn(async move { stream.readable_now().await })
    };
    let readers: Vec<_> = (0..callers)
        .map(|_| {
            let stream = stream.clone();
            ioloop::spawn(async move {
                let mut byte = [0; 1];
                let n = (&*stream).read(&mut byte).await?;
                assert_eq!(n, 1);
                Ok::<_, io::Error>(byte[0])
            })
        })
        .collect();
    for _ in 0..callers + 1 {
        yield_now().await;
    }
    go.send(()).unwrap();
    let mut got = Vec::new();
    for reader in readers {
        got.push(reader.await.unwrap()?);
    }
    keyed.await.unwrap()?;
    for writer in writers {
        writer.await.unwrap()?;
    }
    got.sort_unstable();
    assert_eq!(got, sent, "{callers} readers");
    stream.shut_write()?;
    let received = joined(peer).await;
    assert_eq!(received.len(), BIG + 1, "{callers} readers");
    Ok(())
}

#[test]
fn tcp_readers_past_the_limit_each_get_their_byte() -> io::Result<()> {
    run(|| async {
        for callers in CALLERS {
            let (ours, peer) = small_tcp_pair().await?;
            readers_on_one_stream(ours, peer, callers).await?;
        }
        Ok(())
    })
}

#[test]
fn unix_readers_past_the_limit_each_get_their_byte() -> io::Result<()> {
    run(|| async {
        for callers in CALLERS {
            let (ours, peer) = small_unix_pair()?;
            readers_on_one_stream(ours, peer, callers).await?;
        }
        Ok(())
    })
}

/// `callers` receivers in `poll_recv_from` on one UDP socket, and one in
/// the `recv_from` future: one datagram each, all different, all
/// received.
#[test]
fn udp_receivers_past_the_limit_each_get_a_datagram() -> io::Result<()> {
    run(|| async {
        for callers in CALLERS {
            let socket = Arc::new(UdpSocket::bind("127.0.0.1:0").await?);
            let addr = socket.local_addr()?;
            let mut receivers: Vec<_> = (0..callers)
                .map(|_| {
                    let socket = socket.clone();
                    ioloop::spawn(async move {
                        let mut buf = [0; 8];
                        let (n, _) = poll_fn(|cx| socket.poll_recv_from(cx, &mut buf)).await?;
                        Ok::<_, io::Error>(u16::from_le_bytes([buf[0], buf[n - 1]]))
                    })
                })
                .collect();
            let keyed = socket.clone();
            receivers.push(ioloop::spawn(async move {
                let mut buf = [0; 8];
                let (n, _) = keyed.recv_from(&mut buf).await?;
                Ok(u16::from_le_bytes([buf[0], buf[n - 1]]))
            }));
            for _ in 0..callers + 1 {
                yield_now().await;
            }
            let sender = std::net::UdpSocket::bind("127.0.0.1:0")?;
            let sent: Vec<u16> = (0..=callers as u16).collect();
            for &i in &sent {
                sender.send_to(&i.to_le_bytes(), addr)?;
            }
            let mut got = Vec::new();
            for receiver in receivers {
                got.push(receiver.await.unwrap()?);
            }
            got.sort_unstable();
            assert_eq!(got, sent, "{callers} receivers and a future");
        }
        Ok(())
    })
}
