//! Several tasks waiting on one socket in the same direction (issue 13's
//! "many waiters"; item 7 of the correctness issue): every one is woken by
//! the readiness it waits for. Before, a second waiter displaced the first,
//! which then never woke: each test here hung.

use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpStream as StdStream, UdpSocket as StdUdpSocket};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use futures_util::{AsyncReadExt, AsyncWriteExt};
use ioloop::net::{TcpListener, TcpStream, UdpSocket};
use ioloop::yield_now;
use net_run::run;
use testkit::net_run;

/// Four tasks receive from one `UdpSocket`. Each takes one datagram and
/// yields, so all four stay in turn; every task must get some, and each
/// must see its stop datagram.
#[test]
fn four_tasks_share_one_udp_socket_and_every_one_receives() -> io::Result<()> {
    const TASKS: usize = 4;
    const DATAGRAMS: usize = 1_000;
    const BATCH: usize = 50;
    run(|| async {
        let socket = Arc::new(UdpSocket::bind("127.0.0.1:0").await?);
        let addr = socket.local_addr()?;
        let received = Arc::new(AtomicUsize::new(0));
        let tasks: Vec<_> = (0..TASKS)
            .map(|_| {
                let (socket, received) = (socket.clone(), received.clone());
                ioloop::spawn(async move {
                    let mut mine = 0;
                    let mut buf = [0u8; 16];
                    loop {
                        let (n, _) = socket.recv_from(&mut buf).await?;
                        if &buf[..n] == b"stop" {
                            return Ok::<_, io::Error>(mine);
                        }
                        mine += 1;
                        received.fetch_add(1, Ordering::SeqCst);
                        yield_now().await;
                    }
                })
            })
            .collect();
        // In batches the receivers keep up with, so the kernel drops none.
        let sender = StdUdpSocket::bind("127.0.0.1:0")?;
        for batch in 0..DATAGRAMS / BATCH {
            for _ in 0..BATCH {
                sender.send_to(b"data", addr)?;
            }
            while received.load(Ordering::SeqCst) < (batch + 1) * BATCH {
                yield_now().await;
            }
        }
        // One stop each, one at a time: a task that was never woken again
        // would leave a stop unread and the test waiting for it.
        let mut counts = Vec::new();
        let mut waiting = tasks;
        while !waiting.is_empty() {
            sender.send_to(b"stop", addr)?;
            let done = loop {
                if let Some(i) = waiting.iter().position(|task| task.is_finished()) {
                    break waiting.swap_remove(i);
                }
                yield_now().await;
            };
            counts.push(done.await.unwrap()?);
        }
        assert_eq!(counts.iter().sum::<usize>(), DATAGRAMS);
        assert!(
            counts.iter().all(|&n| n > 0),
            "some task received nothing: {counts:?}"
        );
        Ok(())
    })
}

/// Eight acceptors on one listener. The first eight connections must go to
/// eight different acceptors, each holding its connection until all eight
/// have one; then they serve 1,000 connections between them.
#[test]
fn eight_acceptors_share_one_listener_and_serve_a_thousand_connections() -> io::Result<()> {
    const ACCEPTORS: usize = 8;
    const CONNECTIONS: usize = 1_000;
    run(|| async {
        let listener = Arc::new(TcpListener::bind("127.0.0.1:0").await?);
        let addr = listener.local_addr()?;
        let holding = Arc::new(AtomicUsize::new(0));
        let served = Arc::new(AtomicUsize::new(0));
        let acceptors: Vec<_> = (0..ACCEPTORS)
            .map(|_| {
                let (listener, holding, served) =
                    (listener.clone(), holding.clone(), served.clone());
                ioloop::spawn(async move {
                    let mut first = true;
                    loop {
                        let (mut conn, _) = listener.accept().await?;
                        if first {
                            first = false;
                            holding.fetch_add(1, Ordering::SeqCst);
                            while holding.load(Ordering::SeqCst) < ACCEPTORS {
                                yield_now().await;
                            }
                        }
                        let mut byte = [0u8; 1];
                        conn.read_exact(&mut byte).await?;
                        conn.write_all(&byte).await?;
                        served.fetch_add(1, Ordering::SeqCst);
                    }
                    #[allow(unreachable_code)]
                    Ok::<_, io::Error>(())
                })
            })
            .collect();
        let clients = std::thread::spawn(move || -> io::Result<()> {
            // Eight at once first, each left open until all are accepted.
            let mut first: Vec<StdStream> = (0..ACCEPTORS)
                .map(|_| StdStream::connect(addr))
                .collect::<io::Result<_>>()?;
            for (i, conn) in first.iter_mut().enumerate() {
                conn.write_all(&[i as u8])?;
                let mut back = [0u8; 1];
                conn.read_exact(&mut back)?;
                assert_eq!(back[0], i as u8);
            }
            for i in ACCEPTORS..CONNECTIONS {
                let mut conn = StdStream::connect(addr)?;
                conn.write_all(&[i as u8])?;
                let mut back = [0u8; 1];
                conn.read_exact(&mut back)?;
                assert_eq!(back[0], i as u8);
            }
            Ok(())
        });
        while !clients.is_finished() {
            yield_now().await;
        }
        clients.join().expect("the client thread panicked")?;
        assert_eq!(served.load(Ordering::SeqCst), CONNECTIONS);
        for acceptor in acceptors {
            acceptor.abort();
        }
        Ok(())
    })
}

/// Two tasks write to one stream while the peer reads slowly, so both wait
/// for room again and again: every byte of both arrives.
#[test]
fn two_writers_on_one_stream_deliver_every_byte() -> io::Result<()> {
    const EACH: usize = 4 << 20;
    run(|| async {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let reader = std::thread::spawn(move || -> io::Result<[usize; 256]> {
            let mut peer = StdStream::connect(addr)?;
            let mut counts = [0usize; 256];
            let mut buf = [0u8; 4096];
            loop {
                let n = peer.read(&mut buf)?;
                if n == 0 {
                    return Ok(counts);
                }
                for &b in &buf[..n] {
                    counts[usize::from(b)] += 1;
                }
            }
        });
        let (stream, _) = listener.accept().await?;
        let stream = Arc::new(stream);
        let writers: Vec<_> = [1u8, 2u8]
            .into_iter()
            .map(|byte| {
                let stream = stream.clone();
                ioloop::spawn(async move {
                    let chunk = vec![byte; 64 * 1024];
                    let mut left = EACH;
                    while left > 0 {
                        let n = (&*stream).write(&chunk[..chunk.len().min(left)]).await?;
                        left -= n;
                    }
                    Ok::<_, io::Error>(())
                })
            })
            .collect();
        for writer in writers {
            writer.await.unwrap()?;
        }
        stream.shutdown(Shutdown::Write)?;
        let counts = loop {
            if reader.is_finished() {
                break reader.join().expect("the reader panicked")?;
            }
            yield_now().await;
        };
        // The checksum: how many of each byte, whatever the interleaving.
        assert_eq!((counts[1], counts[2]), (EACH, EACH));
        assert_eq!(counts.iter().sum::<usize>(), 2 * EACH);
        Ok(())
    })
}

/// Two tasks read one stream: between them they read every byte, and both
/// see the end of the stream.
#[test]
fn two_readers_on_one_stream_read_every_byte_and_both_see_the_end() -> io::Result<()> {
    const TOTAL: usize = 1 << 20;
    run(|| async {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let stream = Arc::new(TcpStream::connect(addr).await?);
        let (mut peer, _) = listener.accept().await?;
        let readers: Vec<_> = (0..2)
            .map(|_| {
                let stream = stream.clone();
                ioloop::spawn(async move {
                    let mut got = 0;
                    let mut buf = [0u8; 1500];
                    loop {
                        match (&*stream).read(&mut buf).await? {
                            0 => return Ok::<_, io::Error>(got),
                            n => got += n,
                        }
                        yield_now().await;
                    }
                })
            })
            .collect();
        // Both readers find nothing yet and wait, side by side.
        for _ in 0..3 {
            yield_now().await;
        }
        let chunk = vec![7u8; 16 * 1024];
        for _ in 0..TOTAL / chunk.len() {
            peer.write_all(&chunk).await?;
        }
        peer.close().await?;
        let mut total = 0;
        for reader in readers {
            total += reader.await.unwrap()?;
        }
        assert_eq!(total, TOTAL);
        Ok(())
    })
}
