//! UDP: datagrams to and from anyone, to and from a connected peer, many
//! of them back and forth, and what a short buffer does to a datagram.

use std::io;

use ioloop::net::UdpSocket;
use net_run::run;
use testkit::net_run;

#[test]
fn send_to_and_recv_from_round_trip() -> io::Result<()> {
    run(|| async {
        let server = UdpSocket::bind("127.0.0.1:0").await?;
        let client = UdpSocket::bind("127.0.0.1:0").await?;
        let server_addr = server.local_addr()?;

        // The cookbook's echo server, for one datagram.
        let echo = ioloop::spawn(async move {
            let mut buf = [0; 1500];
            let (n, from) = server.recv_from(&mut buf).await?;
            server.send_to(&buf[..n], from).await?;
            Ok::<_, io::Error>(from)
        });
        assert_eq!(client.send_to(b"hello, udp", server_addr).await?, 10);
        let mut buf = [0; 1500];
        let (n, from) = client.recv_from(&mut buf).await?;

        assert_eq!(&buf[..n], b"hello, udp");
        assert_eq!(from, server_addr);
        assert_eq!(echo.await.unwrap()?, client.local_addr()?);
        Ok(())
    })
}

#[test]
fn connected_sockets_send_and_recv() -> io::Result<()> {
    run(|| async {
        let a = UdpSocket::bind("127.0.0.1:0").await?;
        let b = UdpSocket::bind("127.0.0.1:0").await?;
        a.connect(b.local_addr()?).await?;
        b.connect(a.local_addr()?).await?;
        assert_eq!(a.peer_addr()?, b.local_addr()?);

        a.send(b"ping").await?;
        let mut buf = [0; 16];
        let n = b.recv(&mut buf).await?;
        assert_eq!(&buf[..n], b"ping");
        b.send(b"pong").await?;
        let n = a.recv(&mut buf).await?;
        assert_eq!(&buf[..n], b"pong");
        Ok(())
    })
}

#[test]
fn a_connected_socket_ignores_other_senders() -> io::Result<()> {
    run(|| async {
        let a = UdpSocket::bind("127.0.0.1:0").await?;
        let b = UdpSocket::bind("127.0.0.1:0").await?;
        let stranger = UdpSocket::bind("127.0.0.1:0").await?;
        a.connect(b.local_addr()?).await?;
        // Sent first, but filtered out by the kernel.
        stranger.send_to(b"spam", a.local_addr()?).await?;
        b.send_to(b"from b", a.local_addr()?).await?;
        let mut buf = [0; 16];
        let n = a.recv(&mut buf).await?;
        assert_eq!(&buf[..n], b"from b");
        Ok(())
    })
}

#[test]
fn ping_pong_a_thousand_datagrams() -> io::Result<()> {
    const ROUNDS: u32 = 1000;
    run(|| async {
        let ponger = UdpSocket::bind("127.0.0.1:0").await?;
        let pinger = UdpSocket::bind("127.0.0.1:0").await?;
        let ponger_addr = ponger.local_addr()?;
        let pong = ioloop::spawn(async move {
            let mut buf = [0; 4];
            for _ in 0..ROUNDS {
                let (n, from) = ponger.recv_from(&mut buf).await?;
                let next = u32::from_be_bytes(buf[..n].try_into().unwrap()) + 1;
                ponger.send_to(&next.to_be_bytes(), from).await?;
            }
            Ok::<_, io::Error>(())
        });
        // Lock-step: one datagram in flight at a time, so none is dropped
        // for want of buffer space.
        let mut value = 0u32;
        let mut buf = [0; 4];
        for _ in 0..ROUNDS {
            pinger.send_to(&value.to_be_bytes(), ponger_addr).await?;
            let (n, from) = pinger.recv_from(&mut buf).await?;
            assert_eq!((n, from), (4, ponger_addr));
            let reply = u32::from_be_bytes(buf);
            assert_eq!(reply, value + 1);
            value = reply;
        }
        pong.await.unwrap()?;
        assert_eq!(value, ROUNDS);
        Ok(())
    })
}

#[test]
fn a_short_buffer_truncates_one_datagram_only() -> io::Result<()> {
    run(|| async {
        let a = UdpSocket::bind("127.0.0.1:0").await?;
        let b = UdpSocket::bind("127.0.0.1:0").await?;
        a.send_to(b"0123456789", b.local_addr()?).await?;
        a.send_to(b"next", b.local_addr()?).await?;
        let mut small = [0; 4];
        let (n, _) = b.recv_from(&mut small).await?;
        assert_eq!(&small[..n], b"0123"); // the rest of it is gone
        let mut buf = [0; 16];
        let (n, _) = b.recv_from(&mut buf).await?;
        assert_eq!(&buf[..n], b"next"); // the next datagram is whole
        Ok(())
    })
}

#[test]
fn a_datagram_to_nobody_fails_the_next_call_on_a_connected_socket() -> io::Result<()> {
    run(|| async {
        let gone = UdpSocket::bind("127.0.0.1:0").await?;
        let nobody = gone.local_addr()?;
        drop(gone);
        let socket = UdpSocket::bind("127.0.0.1:0").await?;
        socket.connect(nobody).await?;
        socket.send(b"anyone?").await?;
        // The ICMP "port unreachable" comes back as an error on this
        // socket, reported by the next receive.
        let mut buf = [0; 16];
        let err = socket.recv(&mut buf).await.unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::ConnectionRefused);
        Ok(())
    })
}
