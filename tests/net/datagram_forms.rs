//! The datagram sockets' poll forms (`poll_send`, `poll_recv`,
//! `poll_recv_from`, `poll_send_to`) and `*_buf` forms, which append to a
//! `Vec`'s spare capacity: on Unix pairs, bound and unbound Unix sockets,
//! and UDP on the loopback.

use std::future::{Future, poll_fn};
use std::io;
use std::pin::pin;
use std::task::Poll;

use ioloop::net::{UdpSocket, UnixDatagram};
use net_run::run;
use testkit::{net_run, net_unix};

/// Polls `future` once: whether it is still pending.
async fn pending_once(future: impl Future) -> bool {
    let mut future = pin!(future);
    poll_fn(|cx| Poll::Ready(future.as_mut().poll(cx).is_pending())).await
}

#[test]
fn unix_poll_forms_send_and_wait_for_datagrams() -> io::Result<()> {
    run(|| async {
        let (a, b) = UnixDatagram::pair()?;
        let receiving = ioloop::spawn(async move {
            let mut buf = [0u8; 16];
            let n = poll_fn(|cx| b.poll_recv(cx, &mut buf)).await?;
            assert_eq!(&buf[..n], b"one");
            let (n, from) = poll_fn(|cx| b.poll_recv_from(cx, &mut buf)).await?;
            assert_eq!(&buf[..n], b"two");
            assert!(from.as_pathname().is_none(), "a pair is unnamed");
            Ok::<_, io::Error>(())
        });
        // The receiver polls first and finds nothing: it must be woken.
        ioloop::yield_now().await;
        assert!(!receiving.is_finished());
        assert_eq!(poll_fn(|cx| a.poll_send(cx, b"one")).await?, 3);
        assert_eq!(poll_fn(|cx| a.poll_send(cx, b"two")).await?, 3);
        receiving.await.unwrap()
    })
}

/// `recv_buf` appends after what `buf` holds, up to its capacity (the rest
/// of a longer datagram is discarded, as with a slice); with no spare
/// capacity, 64 bytes are reserved; a `try_` form that finds nothing and a
/// receive dropped while waiting leave `buf` as it was.
#[test]
fn unix_recv_buf_appends_into_the_spare_capacity() -> io::Result<()> {
    run(|| async {
        let (a, b) = UnixDatagram::pair()?;
        let mut buf = Vec::with_capacity(8);
        buf.extend_from_slice(b"ab");

        let err = b.try_recv_buf(&mut buf).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::WouldBlock);
        assert!(pending_once(b.recv_buf(&mut buf)).await);
        assert_eq!(buf, b"ab", "nothing received, nothing added");

        a.send(b"cde").await?;
        assert_eq!(b.recv_buf(&mut buf).await?, 3);
        assert_eq!(buf, b"abcde");

        a.send(b"fghijk").await?;
        assert_eq!(b.try_recv_buf(&mut buf)?, 3, "truncated to the spare 3");
        assert_eq!(buf, b"abcdefgh");
        assert_eq!(buf.len(), buf.capacity());

        let long = [b'x'; 100];
        a.send(&long).await?;
        assert_eq!(b.recv_buf(&mut buf).await?, 64, "64 bytes reserved");
        assert_eq!(buf.len(), 8 + 64);
        assert!(buf[8..].iter().all(|&byte| byte == b'x'));
        Ok(())
    })
}

#[test]
fn unix_recv_buf_from_names_the_sender() -> io::Result<()> {
    run(|| async {
        let dir = net_unix::TempDir::new()?;
        let server = UnixDatagram::bind(dir.join("server.sock"))?;
        let client = UnixDatagram::bind(dir.join("client.sock"))?;
        let mut buf = Vec::with_capacity(32);

        let err = server.try_recv_buf_from(&mut buf).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::WouldBlock);
        assert!(buf.is_empty());

        client.send_to(b"hello", dir.join("server.sock")).await?;
        let (n, from) = server.recv_buf_from(&mut buf).await?;
        assert_eq!((n, &buf[..]), (5, &b"hello"[..]));
        assert_eq!(from.as_pathname(), Some(dir.join("client.sock").as_path()));

        client.send_to(b", world", dir.join("server.sock")).await?;
        server.readable().await?;
        let (n, _) = server.try_recv_buf_from(&mut buf)?;
        assert_eq!((n, &buf[..]), (7, &b"hello, world"[..]));
        Ok(())
    })
}

/// With the receiver's queue filled by another socket, `poll_send_to` is
/// pending (no event will come) and tries again by itself until the queue
/// drains.
#[test]
fn unix_poll_send_to_a_full_receiver_retries_until_it_drains() -> io::Result<()> {
    run(|| async {
        let dir = net_unix::TempDir::new()?;
        let target = dir.join("slow.sock");
        let receiver = UnixDatagram::bind(&target)?;
        let filler = UnixDatagram::unbound()?;
        let mut queued = 0usize;
        loop {
            match filler.try_send_to(&[7u8; 256], &target) {
                Ok(_) => queued += 1,
                Err(err) if err.kind() == io::ErrorKind::WouldBlock => break,
                Err(err) => return Err(err),
            }
            assert!(queued < 1_000_000, "the receiver never filled up");
        }
        let sender = UnixDatagram::unbound()?;
        let to = target.clone();
        let sending = ioloop::spawn(async move {
            poll_fn(|cx| sender.poll_send_to(cx, b"after the wait", &to)).await
        });
        ioloop::yield_now().await;
        assert!(!sending.is_finished());
        // Several retries go by while the queue stays full.
        ioloop::time::sleep(std::time::Duration::from_millis(20)).await;
        assert!(!sending.is_finished());

        let mut buf = [0u8; 256];
        for _ in 0..queued {
            assert_eq!(receiver.recv(&mut buf).await?, 256);
        }
        let n = receiver.recv(&mut buf).await?;
        assert_eq!(&buf[..n], b"after the wait");
        assert_eq!(sending.await.unwrap()?, 14);

        let nobody = dir.join("nobody.sock");
        let err = poll_fn(|cx| receiver.poll_send_to(cx, b"x", &nobody))
            .await
            .unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::NotFound);
        Ok(())
    })
}

/// UDP takes the same code: the poll forms on connected sockets, and
/// `recv_buf_from` naming the sender.
#[test]
fn udp_poll_and_buf_forms_round_trip() -> io::Result<()> {
    run(|| async {
        let a = UdpSocket::bind("127.0.0.1:0").await?;
        let b = UdpSocket::bind("127.0.0.1:0").await?;
        a.connect(b.local_addr()?).await?;
        b.connect(a.local_addr()?).await?;

        assert_eq!(poll_fn(|cx| a.poll_send(cx, b"ping")).await?, 4);
        let mut buf = [0u8; 16];
        let n = poll_fn(|cx| b.poll_recv(cx, &mut buf)).await?;
        assert_eq!(&buf[..n], b"ping");

        let mut vec = Vec::with_capacity(16);
        b.send(b"pong").await?;
        assert_eq!(a.recv_buf(&mut vec).await?, 4);
        b.send(b"!").await?;
        let n = loop {
            a.readable().await?;
            match a.try_recv_buf(&mut vec) {
                Err(err) if err.kind() == io::ErrorKind::WouldBlock => {}
                received => break received?,
            }
        };
        assert_eq!(n, 1);
        assert_eq!(vec, b"pong!");

        b.send(b"from b").await?;
        let (n, from) = a.recv_buf_from(&mut vec).await?;
        assert_eq!((n, from), (6, b.local_addr()?));
        assert_eq!(vec, b"pong!from b");
        let err = a.try_recv_buf_from(&mut vec).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::WouldBlock);
        assert_eq!(vec, b"pong!from b");
        Ok(())
    })
}
