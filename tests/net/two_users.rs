//! Every net object a user can share, with two users (issue 40's rule
//! "shared-object tests with two users"): one task waits on it (in a read,
//! a `write_all`, `readable`, `writable`, a `drain`, an `accept`, a
//! `recv`) while another calls every other method (the `try_*` ones, the
//! waiting ones polled once and dropped, `shutdown` of the other side,
//! options, addresses, the halves). Then the event the first waits for
//! comes: it must finish with the right result, no byte lost or added,
//! nothing hung. For `TcpStream` and `UnixStream` behind an `Arc`, their
//! halves (`split` and `into_split`), `UdpSocket`, `UnixDatagram`,
//! `TcpListener`, `UnixListener` and `io::Registration`.

use std::fmt::Debug;
use std::future::{Future, poll_fn};
use std::io::{self, IoSlice, IoSliceMut, Read, Write};
use std::mem::MaybeUninit;
use std::net::Shutdown;
use std::os::fd::AsRawFd;
use std::pin::{Pin, pin};
use std::sync::Arc;
use std::task::Poll;

use futures_core::Stream;
use futures_util::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use ioloop::io::{Registration, StreamWriter};
use ioloop::net::{TcpListener, TcpStream, UdpSocket, UnixDatagram, UnixListener, UnixStream};
use ioloop::yield_now;
use testkit::net_run::run;
use testkit::net_unix::TempDir;

use super::outbox::small_tcp_pair;
use super::waiters::{Peer, small_unix_pair};

/// Polls `future` once, with the calling task's waker, and drops it.
async fn once<F: Future>(future: F) -> Poll<F::Output> {
    let mut future = pin!(future);
    poll_fn(|cx| Poll::Ready(future.as_mut().poll(cx))).await
}

/// A `try_*` call that must find nothing to do.
#[track_caller]
fn would_block<T: Debug>(result: io::Result<T>) {
    match result {
        Err(err) if err.kind() == io::ErrorKind::WouldBlock => {}
        other => panic!("expected WouldBlock, got {other:?}"),
    }
}

/// Bytes a `try_write` took: `WouldBlock` took none.
#[track_caller]
fn taken(result: io::Result<usize>) -> usize {
    match result {
        Ok(n) => n,
        Err(err) if err.kind() == io::ErrorKind::WouldBlock => 0,
        Err(err) => panic!("{err:?}"),
    }
}

/// Bytes a write polled once took: none if it waited.
#[track_caller]
fn polled_write(poll: Poll<io::Result<usize>>) -> usize {
    match poll {
        Poll::Ready(result) => taken(result),
        Poll::Pending => 0,
    }
}

/// The peer, on a thread of its own: once told to go, it writes `send`,
/// then reads to the end, and returns what it read.
fn peer_thread(
    mut peer: impl Peer,
    send: Vec<u8>,
) -> (
    std::sync::mpsc::Sender<()>,
    std::thread::JoinHandle<Vec<u8>>,
) {
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

/// A writer's bytes: this many of 0, enough to fill small buffers.
const BIG: usize = 512 * 1024;

/// What the peer sends a reader.
const HELLO: &[u8] = b"hello";

/// One scenario with two users: `waiter` is spawned and left waiting;
/// `disturber` runs in another task to its end (returning how many bytes
/// of `d` it wrote); the waiter must still wait. Then the peer is let go:
/// it sends `HELLO` if `send`, then reads to the end, after `shut` ends
/// the stream. The waiter must finish, and the peer must have received
/// `zeros` bytes of 0 and the disturber's `d`s, nothing else. Returns what
/// the waiter returned.
async fn two_users<W, D>(
    peer: impl Peer,
    send: bool,
    waiter: W,
    disturber: D,
    zeros: usize,
    shut: impl FnOnce() -> io::Result<()>,
) -> io::Result<Vec<u8>>
where
    W: Future<Output = io::Result<Vec<u8>>> + Send + 'static,
    D: Future<Output = io::Result<usize>> + Send + 'static,
{
    let (go, peer) = peer_thread(peer, if send { HELLO.to_vec() } else { Vec::new() });
    let waiting = ioloop::spawn(waiter);
    yield_now().await;
    yield_now().await;
    let written = ioloop::spawn(disturber).await.unwrap()?;
    yield_now().await;
    assert!(
        !waiting.is_finished(),
        "the waiter returned before its event"
    );
    go.send(()).unwrap();
    let got = waiting.await.unwrap()?;
    shut()?;
    let received = ioloop::spawn_blocking(move || peer.join().unwrap())
        .await
        .unwrap();
    let zeros_got = received.iter().filter(|&&b| b == 0).count();
    let ds = received.iter().filter(|&&b| b == b'd').count();
    assert_eq!(
        (zeros_got, ds, received.len()),
        (zeros, written, zeros + written),
        "what the peer received"
    );
    Ok(got)
}

/// Every method of a `TcpStream` or `UnixStream` (`$s`, a reference)
/// that does not wait, and every one that does polled once: none may take
/// the waiter's event or bytes. Writes `d`s (counted, returned) and shuts
/// `$shut` down, if given, last.
macro_rules! stream_calls {
    ($s:expr, $T:ty, $shut:expr, $options:expr) => {{
        let s: &$T = $s;
        let mut written = 0;
        let mut buf = [0u8; 16];
        // Reads, which find nothing: the first clears read readiness.
        would_block(s.try_read(&mut buf));
        would_block(s.try_read_vectored(&mut [IoSliceMut::new(&mut buf)]));
        assert!(once(s.peek(&mut buf)).await.is_pending(), "peek");
        assert!(once(s.readable()).await.is_pending(), "readable");
        let _ = once(s.writable()).await;
        let _ = poll_fn(|cx| Poll::Ready(s.poll_read_ready(cx))).await;
        let _ = poll_fn(|cx| Poll::Ready(s.poll_write_ready(cx))).await;
        let mut uninit = [MaybeUninit::<u8>::uninit(); 16];
        let read = poll_fn(|cx| Poll::Ready(s.poll_read_uninit(cx, &mut uninit))).await;
        assert!(read.is_pending(), "poll_read_uninit");
        let read = poll_fn(|cx| Poll::Ready(Pin::new(&mut &*s).poll_read(cx, &mut buf))).await;
        assert!(read.is_pending(), "poll_read");
        // Writes: each `d` that one takes reaches the peer.
        written += taken(s.try_write(b"d"));
        written += taken(s.try_write_vectored(&[IoSlice::new(b"d")]));
        written +=
            polled_write(poll_fn(|cx| Poll::Ready(Pin::new(&mut &*s).poll_write(cx, b"d"))).await);
        written += polled_write(
            poll_fn(|cx| {
                Poll::Ready(Pin::new(&mut &*s).poll_write_vectored(cx, &[IoSlice::new(b"d")]))
            })
            .await,
        );
        let _ = poll_fn(|cx| Poll::Ready(Pin::new(&mut &*s).poll_flush(cx))).await;
        let mut writer = StreamWriter::new(s);
        writer.write(b"d");
        // Gathered by the socket, unless it refuses now: then the writer
        // keeps it, and drops it with itself.
        written += 1 - writer.buffered();
        drop(writer);
        // The borrowed halves.
        let (mut r, mut w) = <$T>::split(s);
        let read = poll_fn(|cx| Poll::Ready(Pin::new(&mut r).poll_read(cx, &mut buf))).await;
        assert!(read.is_pending(), "the read half");
        written +=
            polled_write(poll_fn(|cx| Poll::Ready(Pin::new(&mut w).poll_write(cx, b"d"))).await);
        let _ = poll_fn(|cx| Poll::Ready(Pin::new(&mut w).poll_flush(cx))).await;
        drop((r, w));
        // Addresses, options, `Debug`, the descriptor.
        let _ = s.local_addr()?;
        let _ = s.peer_addr()?;
        let _ = format!("{s:?}");
        let _ = s.as_raw_fd();
        $options(s)?;
        if let Some(how) = $shut {
            s.shutdown(how)?;
        }
        io::Result::Ok(written)
    }};
}

/// A TCP stream's options, read and set to what they are (not the buffer
/// sizes, which a set doubles: room that would wake a writer).
fn tcp_options(s: &TcpStream) -> io::Result<()> {
    s.set_nodelay(s.nodelay()?)?;
    s.set_keepalive(s.keepalive()?)?;
    s.set_linger(s.linger()?)?;
    s.set_ttl(s.ttl()?)?;
    s.set_tos(s.tos()?)?;
    let _ = (s.send_buffer_size()?, s.recv_buffer_size()?);
    Ok(())
}

/// A Unix stream's options and its peer's credentials.
fn unix_options(s: &UnixStream) -> io::Result<()> {
    let _ = (s.send_buffer_size()?, s.recv_buffer_size()?);
    let _ = s.peer_cred()?;
    Ok(())
}

/// The five waits on one stream type, each disturbed by [`stream_calls`].
macro_rules! stream_two_users {
    ($name:ident, $T:ty, $pair:expr, $options:expr) => {
        mod $name {
            use super::*;

            /// The disturber: every call, then `shut`.
            async fn disturb(s: Arc<$T>, shut: Option<Shutdown>) -> io::Result<usize> {
                stream_calls!(&*s, $T, shut, $options)
            }

            #[test]
            fn a_read_waits_while_another_task_calls_every_method() -> io::Result<()> {
                run(|| async {
                    let (ours, peer) = $pair.await?;
                    let s = Arc::new(ours);
                    let reader = s.clone();
                    let waiter = async move {
                        let mut got = vec![0; HELLO.len()];
                        (&*reader).read_exact(&mut got).await?;
                        Ok(got)
                    };
                    let disturber = disturb(s.clone(), Some(Shutdown::Write));
                    let got = two_users(peer, true, waiter, disturber, 0, || Ok(())).await?;
                    assert_eq!(got, HELLO);
                    Ok(())
                })
            }

            #[test]
            fn readable_waits_while_another_task_calls_every_method() -> io::Result<()> {
                run(|| async {
                    let (ours, peer) = $pair.await?;
                    let s = Arc::new(ours);
                    let reader = s.clone();
                    let waiter = async move {
                        reader.readable().await?;
                        let mut got = vec![0; HELLO.len()];
                        (&*reader).read_exact(&mut got).await?;
                        Ok(got)
                    };
                    let disturber = disturb(s.clone(), Some(Shutdown::Write));
                    let got = two_users(peer, true, waiter, disturber, 0, || Ok(())).await?;
                    assert_eq!(got, HELLO);
                    Ok(())
                })
            }

            #[test]
            fn write_all_waits_while_another_task_calls_every_method() -> io::Result<()> {
                run(|| async {
                    let (ours, peer) = $pair.await?;
                    let s = Arc::new(ours);
                    let writer = s.clone();
                    let waiter = async move {
                        (&*writer).write_all(&vec![0; BIG]).await?;
                        Ok(Vec::new())
                    };
                    let disturber = disturb(s.clone(), Some(Shutdown::Read));
                    let shut = || s.shutdown(Shutdown::Write);
                    two_users(peer, false, waiter, disturber, BIG, shut).await?;
                    Ok(())
                })
            }

            #[test]
            fn writable_waits_while_another_task_calls_every_method() -> io::Result<()> {
                run(|| async {
                    let (ours, peer) = $pair.await?;
                    let s = Arc::new(ours);
                    let mut filled = 0;
                    loop {
                        match s.try_write(&[0; 4096]) {
                            Ok(n) => filled += n,
                            Err(err) if err.kind() == io::ErrorKind::WouldBlock => break,
                            Err(err) => return Err(err),
                        }
                    }
                    let writer = s.clone();
                    let waiter = async move {
                        writer.writable().await?;
                        Ok(Vec::new())
                    };
                    let disturber = disturb(s.clone(), Some(Shutdown::Read));
                    let shut = || s.shutdown(Shutdown::Write);
                    two_users(peer, false, waiter, disturber, filled, shut).await?;
                    Ok(())
                })
            }

            #[test]
            fn drain_waits_while_another_task_calls_every_method() -> io::Result<()> {
                run(|| async {
                    let (ours, peer) = $pair.await?;
                    let s = Arc::new(ours);
                    let writer = s.clone();
                    let waiter = async move {
                        let mut writer = StreamWriter::new(&*writer);
                        writer.write(&vec![0; BIG]);
                        writer.drain().await?;
                        Ok(Vec::new())
                    };
                    let disturber = disturb(s.clone(), Some(Shutdown::Read));
                    let shut = || s.shutdown(Shutdown::Write);
                    two_users(peer, false, waiter, disturber, BIG, shut).await?;
                    Ok(())
                })
            }

            /// `split`: the read half waits while another task writes
            /// through the write half and calls every stream method.
            #[test]
            fn the_read_half_waits_while_the_write_half_and_the_stream_are_used() -> io::Result<()>
            {
                run(|| async {
                    let (ours, peer) = $pair.await?;
                    let s = Arc::new(ours);
                    let reader = s.clone();
                    let waiter = async move {
                        let (mut r, _) = <$T>::split(&reader);
                        let mut got = vec![0; HELLO.len()];
                        r.read_exact(&mut got).await?;
                        Ok(got)
                    };
                    let other = s.clone();
                    let disturber = async move {
                        let (_, mut w) = <$T>::split(&other);
                        w.write_all(b"dd").await?;
                        w.flush().await?;
                        Ok(2 + disturb(other.clone(), None).await?)
                    };
                    let shut = || s.shutdown(Shutdown::Write);
                    let got = two_users(peer, true, waiter, disturber, 0, shut).await?;
                    assert_eq!(got, HELLO);
                    Ok(())
                })
            }

            /// `into_split`: the owned write half waits in `write_all`
            /// while another task holds the read half and calls every
            /// stream method through it; the write half's drop shuts the
            /// write side down.
            #[test]
            fn the_owned_write_half_waits_while_the_read_half_is_used() -> io::Result<()> {
                run(|| async {
                    let (ours, peer) = $pair.await?;
                    let (r, mut w) = ours.into_split();
                    let waiter = async move {
                        w.write_all(&vec![0; BIG]).await?;
                        // Dropped here: the peer reads the end.
                        Ok(Vec::new())
                    };
                    let disturber = async move {
                        let mut r = r;
                        let mut buf = [0; 4];
                        let read =
                            poll_fn(|cx| Poll::Ready(Pin::new(&mut r).poll_read(cx, &mut buf)))
                                .await;
                        assert!(read.is_pending(), "the owned read half");
                        stream_calls!(r.as_ref(), $T, Some(Shutdown::Read), $options)
                    };
                    two_users(peer, false, waiter, disturber, BIG, || Ok(())).await?;
                    Ok(())
                })
            }
        }
    };
}

stream_two_users!(tcp, TcpStream, small_tcp_pair(), tcp_options);
stream_two_users!(unix, UnixStream, async { small_unix_pair() }, unix_options);

/// A listener waits in `accept` while another task calls the rest of its
/// methods (`accept` and `incoming` polled once and dropped); then one
/// client connects: the waiter gets it, and its first bytes.
#[test]
fn accept_waits_while_another_task_calls_every_listener_method() -> io::Result<()> {
    run(|| async {
        // TCP.
        let listener = Arc::new(TcpListener::bind("127.0.0.1:0").await?);
        let addr = listener.local_addr()?;
        let accepting = listener.clone();
        let waiter = ioloop::spawn(async move {
            let (mut conn, _) = accepting.accept().await?;
            let mut got = [0; 5];
            conn.read_exact(&mut got).await?;
            io::Result::Ok(got)
        });
        yield_now().await;
        let other = listener.clone();
        ioloop::spawn(async move {
            assert!(once(other.accept()).await.is_pending());
            let mut incoming = other.incoming();
            let next = poll_fn(|cx| Poll::Ready(Pin::new(&mut incoming).poll_next(cx))).await;
            assert!(next.is_pending());
            let _ = (other.local_addr()?, format!("{other:?}"), other.as_raw_fd());
            other.set_ttl(other.ttl()?)?;
            io::Result::Ok(())
        })
        .await
        .unwrap()?;
        assert!(!waiter.is_finished());
        let mut client = std::net::TcpStream::connect(addr)?;
        client.write_all(HELLO)?;
        assert_eq!(&waiter.await.unwrap()?, HELLO);

        // Unix.
        let dir = TempDir::new()?;
        let path = dir.join("listener");
        let listener = Arc::new(UnixListener::bind(&path)?);
        let accepting = listener.clone();
        let waiter = ioloop::spawn(async move {
            let (mut conn, _) = accepting.accept().await?;
            let mut got = [0; 5];
            conn.read_exact(&mut got).await?;
            io::Result::Ok(got)
        });
        yield_now().await;
        let other = listener.clone();
        ioloop::spawn(async move {
            assert!(once(other.accept()).await.is_pending());
            let mut incoming = other.incoming();
            let next = poll_fn(|cx| Poll::Ready(Pin::new(&mut incoming).poll_next(cx))).await;
            assert!(next.is_pending());
            let _ = (other.local_addr()?, format!("{other:?}"), other.as_raw_fd());
            io::Result::Ok(())
        })
        .await
        .unwrap()?;
        assert!(!waiter.is_finished());
        let mut client = std::os::unix::net::UnixStream::connect(&path)?;
        client.write_all(HELLO)?;
        assert_eq!(&waiter.await.unwrap()?, HELLO);
        Ok(())
    })
}

/// Every receive of a datagram socket `$s` that does not wait finds
/// nothing, and every one that does, polled once, waits.
macro_rules! datagram_receives {
    ($s:expr) => {{
        let s = $s;
        let mut buf = [0u8; 16];
        let mut vec = Vec::with_capacity(16);
        would_block(s.try_recv_from(&mut buf));
        would_block(s.try_recv(&mut buf));
        would_block(s.try_recv_buf(&mut vec));
        would_block(s.try_recv_buf_from(&mut vec));
        assert!(vec.is_empty());
        assert!(once(s.recv_from(&mut buf)).await.is_pending());
        assert!(once(s.recv(&mut buf)).await.is_pending());
        assert!(once(s.recv_buf(&mut vec)).await.is_pending());
        assert!(once(s.recv_buf_from(&mut vec)).await.is_pending());
        assert!(once(s.peek_from(&mut buf)).await.is_pending());
        assert!(once(s.readable()).await.is_pending());
        let _ = once(s.writable()).await;
        let recv = poll_fn(|cx| Poll::Ready(s.poll_recv_from(cx, &mut buf))).await;
        assert!(recv.is_pending());
        let recv = poll_fn(|cx| Poll::Ready(s.poll_recv(cx, &mut buf))).await;
        assert!(recv.is_pending());
        let _ = poll_fn(|cx| Poll::Ready(s.poll_read_ready(cx))).await;
        let _ = poll_fn(|cx| Poll::Ready(s.poll_write_ready(cx))).await;
        let _ = (s.local_addr()?, s.peer_addr(), format!("{s:?}"));
    }};
}

/// A UDP socket waits in `recv_from` while another task calls every other
/// method (sends go to a third socket; `connect`, which would filter what
/// the waiter may receive, is the one left out); then a datagram comes:
/// the waiter gets it, whole, with its sender.
#[test]
fn recv_from_waits_while_another_task_calls_every_udp_method() -> io::Result<()> {
    run(|| async {
        let socket = Arc::new(UdpSocket::bind("127.0.0.1:0").await?);
        let addr = socket.local_addr()?;
        let receiving = socket.clone();
        let waiter = ioloop::spawn(async move {
            let mut buf = [0; 16];
            let (n, from) = receiving.recv_from(&mut buf).await?;
            io::Result::Ok((buf[..n].to_vec(), from))
        });
        yield_now().await;
        let sink = std::net::UdpSocket::bind("127.0.0.1:0")?;
        let sink_addr = sink.local_addr()?;
        let other = socket.clone();
        let sent = ioloop::spawn(async move {
            datagram_receives!(&*other);
            let mut sent = 0;
            sent += other.send_to(b"d", sink_addr).await?;
            sent += other.try_send_to(b"d", sink_addr)?;
            sent += polled_write(
                poll_fn(|cx| Poll::Ready(other.poll_send_to(cx, b"d", sink_addr))).await,
            );
            // Not connected: these fail, and change nothing.
            assert!(other.try_send(b"x").is_err());
            assert!(once(other.send(b"x")).await.is_ready());
            other.set_broadcast(other.broadcast()?)?;
            other.set_ttl(other.ttl()?)?;
            other.set_multicast_ttl_v4(other.multicast_ttl_v4()?)?;
            other.set_multicast_loop_v4(other.multicast_loop_v4()?)?;
            io::Result::Ok(sent)
        })
        .await
        .unwrap()?;
        assert_eq!(sent, 3);
        assert!(!waiter.is_finished());
        let sender = std::net::UdpSocket::bind("127.0.0.1:0")?;
        sender.send_to(HELLO, addr)?;
        let (got, from) = waiter.await.unwrap()?;
        assert_eq!((&got[..], from), (HELLO, sender.local_addr()?));
        let mut buf = [0; 4];
        for _ in 0..sent {
            assert_eq!(sink.recv(&mut buf)?, 1);
        }
        Ok(())
    })
}

/// A Unix datagram socket (one of a pair) waits in `recv` while another
/// task calls every other method, its sends going to the pair's other
/// end; then the other end sends: the waiter gets that datagram, and the
/// other end gets the disturber's, each whole.
#[test]
fn recv_waits_while_another_task_calls_every_unix_datagram_method() -> io::Result<()> {
    run(|| async {
        let (ours, theirs) = std::os::unix::net::UnixDatagram::pair()?;
        let socket = Arc::new(UnixDatagram::from_std(ours)?);
        let receiving = socket.clone();
        let waiter = ioloop::spawn(async move {
            let mut buf = [0; 16];
            let n = receiving.recv(&mut buf).await?;
            io::Result::Ok(buf[..n].to_vec())
        });
        yield_now().await;
        let other = socket.clone();
        let sent = ioloop::spawn(async move {
            datagram_receives!(&*other);
            let mut sent = 0;
            sent += other.send(b"d").await?;
            sent += taken(other.try_send(b"d"));
            sent += polled_write(poll_fn(|cx| Poll::Ready(other.poll_send(cx, b"d"))).await);
            let _ = (other.send_buffer_size()?, other.recv_buffer_size()?);
            // Its write side only: the waiter reads on.
            other.shutdown(Shutdown::Write)?;
            io::Result::Ok(sent)
        })
        .await
        .unwrap()?;
        assert_eq!(sent, 3);
        assert!(!waiter.is_finished());
        theirs.send(HELLO)?;
        assert_eq!(waiter.await.unwrap()?, HELLO);
        let mut buf = [0; 4];
        for _ in 0..sent {
            assert_eq!(theirs.recv(&mut buf)?, 1);
        }
        Ok(())
    })
}

/// A `Registration` (of a mio Unix stream): one task waits in `read_io`
/// while another calls every other method (the waiting ones polled once
/// and dropped); then the peer writes: the waiter gets every byte.
#[test]
fn read_io_waits_while_another_task_calls_every_registration_method() -> io::Result<()> {
    run(|| async {
        let (ours, mut peer) = mio::net::UnixStream::pair()?;
        let io = Arc::new(Registration::new(ours)?);
        // Readiness starts set: taken down by a read that finds nothing.
        would_block(io.try_read_io(|mut s| s.read(&mut [0; 4])));
        let reading = io.clone();
        let waiter = ioloop::spawn(async move {
            let mut got = vec![0; HELLO.len()];
            let n = reading.read_io(|mut s| s.read(&mut got)).await?;
            got.truncate(n);
            io::Result::Ok(got)
        });
        yield_now().await;
        let other = io.clone();
        let written = ioloop::spawn(async move {
            let mut buf = [0; 4];
            would_block(other.try_read_io(|mut s| s.read(&mut buf)));
            assert!(once(other.readable()).await.is_pending());
            assert!(
                once(other.read_io(|mut s| s.read(&mut buf)))
                    .await
                    .is_pending()
            );
            let read =
                poll_fn(|cx| Poll::Ready(other.poll_read_io(cx, |mut s| s.read(&mut buf)))).await;
            assert!(read.is_pending());
            let _ = poll_fn(|cx| Poll::Ready(other.poll_read_ready(cx))).await;
            let mut waiter = other.read_waiter();
            assert!(
                poll_fn(|cx| Poll::Ready(waiter.poll_ready(cx)))
                    .await
                    .is_pending()
            );
            drop(waiter);
            let mut written = 0;
            let writable = once(other.writable()).await;
            assert!(writable.is_ready());
            written += taken(other.try_write_io(|mut s| s.write(b"d")));
            written += polled_write(
                poll_fn(|cx| Poll::Ready(other.poll_write_io(cx, |mut s| s.write(b"d")))).await,
            );
            written += polled_write(once(other.write_io(|mut s| s.write(b"d"))).await);
            let mut waiter = other.write_waiter();
            let _ = poll_fn(|cx| Poll::Ready(waiter.poll_ready(cx))).await;
            let _ = poll_fn(|cx| Poll::Ready(other.poll_write_ready(cx))).await;
            let _ = (other.get_ref().local_addr()?, format!("{other:?}"));
            io::Result::Ok(written)
        })
        .await
        .unwrap()?;
        assert_eq!(written, 3);
        assert!(!waiter.is_finished());
        peer.write_all(HELLO)?;
        assert_eq!(waiter.await.unwrap()?, HELLO);
        let mut got = [0; 3];
        peer.read_exact(&mut got)?;
        assert_eq!(&got, b"ddd");
        Ok(())
    })
}
