//! Unix datagrams: round trips between bound sockets, by path and by
//! abstract name; pairs; connect, `try_*`, peek and shutdown; a send to a
//! full receiver that waits until it drains.

use std::io;
use std::net::Shutdown;
use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::SocketAddr;

use ioloop::net::UnixDatagram;
use net_run::run;
use testkit::{net_run, net_unix};

#[test]
fn round_trip_between_sockets_bound_to_paths() -> io::Result<()> {
    run(|| async {
        let dir = net_unix::TempDir::new()?;
        let server = UnixDatagram::bind(dir.join("server.sock"))?;
        let client = UnixDatagram::bind(dir.join("client.sock"))?;
        let server_path = dir.join("server.sock");
        assert_eq!(
            server.local_addr()?.as_pathname(),
            Some(server_path.as_path())
        );

        let echo = ioloop::spawn(async move {
            let mut buf = [0u8; 64];
            for _ in 0..3 {
                let (n, from) = server.recv_from(&mut buf).await?;
                let to = from.as_pathname().expect("the client is bound").to_owned();
                server.send_to(&buf[..n], &to).await?;
            }
            Ok::<_, io::Error>(())
        });
        let mut buf = [0u8; 64];
        for msg in [&b"one"[..], b"", b"three"] {
            assert_eq!(client.send_to(msg, &server_path).await?, msg.len());
            let (n, from) = client.recv_from(&mut buf).await?;
            assert_eq!(&buf[..n], msg);
            assert_eq!(from.as_pathname(), Some(server_path.as_path()));
        }
        echo.await.unwrap()?;
        Ok(())
    })
}

#[test]
fn round_trip_in_the_abstract_namespace() -> io::Result<()> {
    run(|| async {
        let server_name = net_unix::abstract_name("dgram-server");
        let client_name = net_unix::abstract_name("dgram-client");
        // One by a leading NUL, the other by a std address.
        let server = UnixDatagram::bind(format!("\0{server_name}"))?;
        let client = UnixDatagram::bind(SocketAddr::from_abstract_name(&client_name)?)?;
        assert_eq!(
            server.local_addr()?.as_abstract_name(),
            Some(server_name.as_bytes())
        );

        let to_server = SocketAddr::from_abstract_name(&server_name)?;
        client.send_to(b"abstract", &to_server).await?;
        let mut buf = [0u8; 16];
        let (n, from) = server.recv_from(&mut buf).await?;
        assert_eq!(&buf[..n], b"abstract");
        assert_eq!(from.as_abstract_name(), Some(client_name.as_bytes()));

        // Answer to the address as received, and peek before taking it.
        server.send_to(b"reply", &from).await?;
        let (n, from) = client.peek_from(&mut buf).await?;
        assert_eq!(
            (&buf[..n], from.as_abstract_name()),
            (&b"reply"[..], Some(server_name.as_bytes()))
        );
        let (n, _) = client.recv_from(&mut buf).await?;
        assert_eq!(&buf[..n], b"reply", "peeked, not taken");

        // Connected to an abstract name.
        client.connect(format!("\0{server_name}"))?;
        assert_eq!(
            client.peer_addr()?.as_abstract_name(),
            Some(server_name.as_bytes())
        );
        client.send(b"connected").await?;
        let n = server.recv(&mut buf).await?;
        assert_eq!(&buf[..n], b"connected");
        Ok(())
    })
}

#[test]
fn a_pair_keeps_datagram_bounds_and_try_ops_do_not_wait() -> io::Result<()> {
    run(|| async {
        let (a, b) = UnixDatagram::pair()?;
        assert!(a.peer_addr()?.is_unnamed());
        let mut buf = [0u8; 16];
        assert_eq!(
            b.try_recv(&mut buf).unwrap_err().kind(),
            io::ErrorKind::WouldBlock
        );
        assert_eq!(
            b.try_recv_from(&mut buf).unwrap_err().kind(),
            io::ErrorKind::WouldBlock
        );

        a.send(b"first").await?;
        a.writable().await?;
        assert_eq!(a.try_send(b"second")?, 6);
        std::future::poll_fn(|cx| b.poll_read_ready(cx)).await?;
        let (n, from) = b.peek_from(&mut buf).await?;
        assert_eq!(&buf[..n], b"first");
        assert!(from.is_unnamed());
        assert_eq!(b.recv(&mut buf).await?, 5);
        b.readable().await?;
        let (n, _) = b.try_recv_from(&mut buf)?;
        assert_eq!(&buf[..n], b"second");

        // A short buffer gets the start; the rest of that datagram is gone.
        a.send(b"truncated").await?;
        let mut small = [0u8; 4];
        assert_eq!(b.recv(&mut small).await?, 4);
        assert_eq!(&small, b"trun");
        assert_eq!(
            b.try_recv(&mut buf).unwrap_err().kind(),
            io::ErrorKind::WouldBlock
        );

        // Shut: sending is an error, never SIGPIPE.
        a.shutdown(Shutdown::Write)?;
        assert_eq!(
            a.send(b"x").await.unwrap_err().kind(),
            io::ErrorKind::BrokenPipe
        );
        assert_eq!(
            a.try_send(b"x").unwrap_err().kind(),
            io::ErrorKind::BrokenPipe
        );
        Ok(())
    })
}

#[test]
fn an_unbound_socket_sends_and_gets_replies_once_connected() -> io::Result<()> {
    run(|| async {
        let dir = net_unix::TempDir::new()?;
        let server = UnixDatagram::bind(dir.join("srv.sock"))?;
        let client = UnixDatagram::unbound()?;
        assert!(client.local_addr()?.is_unnamed());
        assert_eq!(
            client.peer_addr().unwrap_err().kind(),
            io::ErrorKind::NotConnected
        );
        let err = client.send(b"x").await.unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::NotConnected);

        client.try_send_to(b"anonymous", dir.join("srv.sock"))?;
        let mut buf = [0u8; 16];
        let (n, from) = server.recv_from(&mut buf).await?;
        assert_eq!(&buf[..n], b"anonymous");
        assert!(from.is_unnamed(), "an unbound sender cannot be answered");

        let err = client
            .send_to(b"x", dir.join("nobody.sock"))
            .await
            .unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::NotFound);
        Ok(())
    })
}

/// Linux tells an unconnected sender nothing when a full queue it sends
/// to drains (only its own datagrams being read wake it): with the queue
/// filled by another socket, `send_to` must try again by itself.
#[test]
fn send_to_a_receiver_filled_by_another_waits_until_it_drains() -> io::Result<()> {
    run(|| async {
        let dir = net_unix::TempDir::new()?;
        let receiver = UnixDatagram::bind(dir.join("slow.sock"))?;
        let target = dir.join("slow.sock");
        let sender = UnixDatagram::unbound()?;
        // Let the loop poll the OS once, so the sender's first event (a
        // new registration's) is spent before its send has to wait.
        ioloop::time::sleep(std::time::Duration::from_millis(1)).await;
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
        let err = sender.try_send_to(b"no room", &target).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::WouldBlock);
        let sending = ioloop::spawn(async move {
            sender.send_to(b"after the wait", &target).await?;
            Ok::<_, io::Error>(sender)
        });
        // The sending task runs first, finds no room, and waits: without
        // spinning, though each failed send raises a write event on the
        // sender (the kernel frees the buffer it had taken), and the
        // sender stays "writable" all along.
        ioloop::yield_now().await;
        assert!(!sending.is_finished());
        let before = ioloop::Handle::current().metrics();
        ioloop::time::sleep(std::time::Duration::from_millis(300)).await;
        let ticks = ioloop::Handle::current().metrics().ticks - before.ticks;
        assert!(!sending.is_finished());
        assert!(
            ticks < 50,
            "{ticks} loop ticks in 300 ms of waiting: it spins"
        );
        let mut buf = [0u8; 256];
        for _ in 0..queued {
            let n = receiver.recv(&mut buf).await?;
            assert_eq!(n, 256);
        }
        let n = receiver.recv(&mut buf).await?;
        assert_eq!(&buf[..n], b"after the wait");
        sending.await.unwrap()?;
        Ok(())
    })
}

/// A connected sender is told when its peer's full queue drains: `send`
/// waits on readiness, and so does `writable` after a `try_send`.
#[test]
fn send_to_a_full_connected_peer_waits_for_its_event() -> io::Result<()> {
    run(|| async {
        let (sender, receiver) = UnixDatagram::pair()?;
        let mut queued = 0usize;
        loop {
            match sender.try_send(&[9u8; 128]) {
                Ok(_) => queued += 1,
                Err(err) if err.kind() == io::ErrorKind::WouldBlock => break,
                Err(err) => return Err(err),
            }
            assert!(queued < 1_000_000, "the receiver never filled up");
        }
        let sending = ioloop::spawn(async move {
            sender.writable().await?;
            sender.send(b"drained").await?;
            Ok::<_, io::Error>(sender)
        });
        // It waits, and quietly: the kernel keeps a connected sender's
        // failed sends from raising write events.
        ioloop::yield_now().await;
        let before = ioloop::Handle::current().metrics();
        ioloop::time::sleep(std::time::Duration::from_millis(100)).await;
        let ticks = ioloop::Handle::current().metrics().ticks - before.ticks;
        assert!(!sending.is_finished());
        assert!(
            ticks < 20,
            "{ticks} loop ticks in 100 ms of waiting: it spins"
        );
        let mut buf = [0u8; 128];
        for _ in 0..queued {
            assert_eq!(receiver.recv(&mut buf).await?, 128);
        }
        let n = receiver.recv(&mut buf).await?;
        assert_eq!(&buf[..n], b"drained");
        sending.await.unwrap()?;
        Ok(())
    })
}
