//! Socket options on connected streams, listeners and UDP sockets: each
//! setter read back through its getter, what a zero linger does to the
//! peer, and multicast on the loopback interface.

use std::io;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};
use std::time::Duration;

use futures_util::AsyncReadExt;
use ioloop::net::{TcpListener, TcpStream, UdpSocket};
use net_run::run;
use testkit::net_run;

async fn pair() -> io::Result<(TcpListener, TcpStream, TcpStream)> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let client = TcpStream::connect(listener.local_addr()?).await?;
    let (server, _) = listener.accept().await?;
    Ok((listener, client, server))
}

/// Zero linger: dropping the stream resets the connection, and the peer's
/// read says so instead of reading end of file.
#[test]
fn zero_linger_resets_the_peer() -> io::Result<()> {
    run(|| async {
        let (_listener, mut client, server) = pair().await?;
        assert_eq!(server.linger()?, None, "off by default");
        server.set_linger(Some(Duration::ZERO))?;
        assert_eq!(server.linger()?, Some(Duration::ZERO));
        drop(server);
        let err = client.read(&mut [0; 16]).await.unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::ConnectionReset, "{err}");
        Ok(())
    })
}

/// Without it, the same drop is an orderly end of file.
#[test]
fn default_linger_closes_in_order() -> io::Result<()> {
    run(|| async {
        let (_listener, mut client, server) = pair().await?;
        server.set_linger(Some(Duration::from_secs(1)))?;
        server.set_linger(None)?;
        drop(server);
        assert_eq!(client.read(&mut [0; 16]).await?, 0);
        Ok(())
    })
}

#[test]
fn stream_options_round_trip() -> io::Result<()> {
    run(|| async {
        let (_listener, client, _server) = pair().await?;
        client.set_linger(Some(Duration::from_secs(2)))?;
        assert_eq!(client.linger()?, Some(Duration::from_secs(2)));

        client.set_ttl(42)?;
        assert_eq!(client.ttl()?, 42);

        client.set_tos(0x10)?;
        assert_eq!(client.tos()?, 0x10);

        // Linux doubles buffer sizes; 32 KiB doubled stays under the
        // default caps.
        client.set_send_buffer_size(32 * 1024)?;
        assert!(client.send_buffer_size()? >= 32 * 1024);
        client.set_recv_buffer_size(32 * 1024)?;
        assert!(client.recv_buffer_size()? >= 32 * 1024);
        Ok(())
    })
}

#[test]
fn ipv6_stream_traffic_class_round_trips() -> io::Result<()> {
    run(|| async {
        let Ok(listener) = TcpListener::bind("[::1]:0").await else {
            println!("skipped: no IPv6 loopback here ([::1]:0 does not bind)");
            return Ok(());
        };
        let client = TcpStream::connect(listener.local_addr()?).await?;
        client.set_tclass_v6(0x20)?;
        assert_eq!(client.tclass_v6()?, 0x20);
        Ok(())
    })
}

/// A listener's TTL is its accepted streams' too.
#[test]
fn listener_ttl_round_trips_and_is_inherited() -> io::Result<()> {
    run(|| async {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        listener.set_ttl(33)?;
        assert_eq!(listener.ttl()?, 33);
        let _client = TcpStream::connect(listener.local_addr()?).await?;
        let (server, _) = listener.accept().await?;
        assert_eq!(server.ttl()?, 33);
        Ok(())
    })
}

#[test]
fn udp_options_round_trip() -> io::Result<()> {
    run(|| async {
        let socket = UdpSocket::bind("127.0.0.1:0").await?;
        socket.set_ttl(7)?;
        assert_eq!(socket.ttl()?, 7);

        assert!(!socket.broadcast()?, "off by default");
        socket.set_broadcast(true)?;
        assert!(socket.broadcast()?);

        assert_eq!(socket.multicast_ttl_v4()?, 1, "the default keeps it local");
        socket.set_multicast_ttl_v4(4)?;
        assert_eq!(socket.multicast_ttl_v4()?, 4);

        assert!(socket.multicast_loop_v4()?, "on by default");
        socket.set_multicast_loop_v4(false)?;
        assert!(!socket.multicast_loop_v4()?);

        socket.set_multicast_if_v4(Ipv4Addr::LOCALHOST)?;
        assert_eq!(socket.multicast_if_v4()?, Ipv4Addr::LOCALHOST);

        socket.set_tos(0x08)?;
        assert_eq!(socket.tos()?, 0x08);

        socket.set_send_buffer_size(32 * 1024)?;
        assert!(socket.send_buffer_size()? >= 32 * 1024);
        socket.set_recv_buffer_size(32 * 1024)?;
        assert!(socket.recv_buffer_size()? >= 32 * 1024);
        Ok(())
    })
}

#[test]
fn udp_ipv6_options_round_trip() -> io::Result<()> {
    run(|| async {
        let Ok(socket) = UdpSocket::bind("[::1]:0").await else {
            println!("skipped: no IPv6 loopback here ([::1]:0 does not bind)");
            return Ok(());
        };
        assert!(socket.multicast_loop_v6()?, "on by default");
        socket.set_multicast_loop_v6(false)?;
        assert!(!socket.multicast_loop_v6()?);
        socket.set_tclass_v6(0x28)?;
        assert_eq!(socket.tclass_v6()?, 0x28);
        Ok(())
    })
}

/// The options each belong to one family: on the other, the OS refuses.
#[test]
fn an_ipv6_option_on_an_ipv4_socket_is_the_os_error() -> io::Result<()> {
    run(|| async {
        let socket = UdpSocket::bind("127.0.0.1:0").await?;
        let err = socket.set_multicast_loop_v6(true).unwrap_err();
        assert!(err.raw_os_error().is_some(), "{err:?}");
        Ok(())
    })
}

/// A datagram sent to a multicast group comes back to a member on this
/// host: the member joins on the loopback interface, the sender sends out
/// through it with loop on, and leaving the group is accepted too.
#[test]
fn multicast_round_trip_on_loopback() -> io::Result<()> {
    const GROUP: Ipv4Addr = Ipv4Addr::new(239, 255, 77, 1);
    run(|| async {
        let member = UdpSocket::bind("0.0.0.0:0").await?;
        let port = member.local_addr()?.port();
        member.join_multicast_v4(GROUP, Ipv4Addr::LOCALHOST)?;

        let sender = UdpSocket::bind("127.0.0.1:0").await?;
        sender.set_multicast_if_v4(Ipv4Addr::LOCALHOST)?;
        sender.set_multicast_loop_v4(true)?;
        let to: SocketAddr = (GROUP, port).into();
        sender.send_to(b"to the group", to).await?;

        let mut buf = [0; 32];
        // The safety net of `run` bounds the wait; a datagram lost here is
        // a failure, not a reason to wait on a clock.
        let (n, from) = member.recv_from(&mut buf).await?;
        assert_eq!(&buf[..n], b"to the group");
        assert_eq!(from, sender.local_addr()?);

        member.leave_multicast_v4(GROUP, Ipv4Addr::LOCALHOST)?;
        let err = member
            .leave_multicast_v4(GROUP, Ipv4Addr::LOCALHOST)
            .unwrap_err();
        assert!(
            err.raw_os_error().is_some(),
            "not a member any more: {err:?}"
        );
        Ok(())
    })
}

/// IPv6: joining and leaving a group on the default interface. Where the
/// OS refuses (no IPv6, no multicast-capable interface), the error must be
/// the OS's, and the test says so.
#[test]
fn multicast_v6_join_and_leave() -> io::Result<()> {
    run(|| async {
        let Ok(socket) = UdpSocket::bind("[::]:0").await else {
            println!("skipped: no IPv6 here ([::]:0 does not bind)");
            return Ok(());
        };
        let group = Ipv6Addr::new(0xff02, 0, 0, 0, 0, 0, 0x1, 0x7701);
        match socket.join_multicast_v6(&group, 0) {
            Ok(()) => socket.leave_multicast_v6(&group, 0)?,
            Err(err) => {
                assert!(err.raw_os_error().is_some(), "{err:?}");
                println!("the OS refused the IPv6 join here: {err}");
            }
        }
        Ok(())
    })
}
