//! UDP to a closed port: the ICMP "port unreachable" that comes back is
//! none of an unconnected socket's business (it keeps receiving), and a
//! connected socket reports it as `ConnectionRefused` once, then stays
//! usable.
//!
//! tests/net/udp_round_trip.rs shows the connected socket's first error; this
//! is what happens around and after it. Linux reports the ICMP error only
//! to connected sockets (without `IP_RECVERR`), as the next call's error,
//! and raises `EPOLLERR` for it, which the reactor turns into readiness
//! both ways: the error must be handed out once, and then cleared.

use std::io;
use std::time::Duration;

use ioloop::net::UdpSocket;
use ioloop::time::timeout;
use testkit::util;

const SAFETY: Duration = Duration::from_secs(10);

/// An address nobody listens on: a socket bound, then closed.
async fn closed_port() -> io::Result<std::net::SocketAddr> {
    let gone = UdpSocket::bind("127.0.0.1:0").await?;
    gone.local_addr()
}

#[test]
fn an_unconnected_socket_that_sent_to_a_closed_port_keeps_receiving() -> io::Result<()> {
    util::within(SAFETY * 2, || {
        ioloop::block_on(async {
            let nobody = closed_port().await?;
            let socket = UdpSocket::bind("127.0.0.1:0").await?;
            let friend = UdpSocket::bind("127.0.0.1:0").await?;
            let mut buf = [0; 32];
            for i in 0..10u8 {
                // Into the void: no error now, none later.
                assert_eq!(socket.send_to(b"anyone?", nobody).await?, 7);
                friend.send_to(&[i], socket.local_addr()?).await?;
                let (n, from) = timeout(SAFETY, socket.recv_from(&mut buf)).await??;
                assert_eq!((&buf[..n], from), (&[i][..], friend.local_addr()?));
            }
            // And it still sends to the living.
            socket.send_to(b"still here", friend.local_addr()?).await?;
            let (n, _) = timeout(SAFETY, friend.recv_from(&mut buf)).await??;
            assert_eq!(&buf[..n], b"still here");
            io::Result::Ok(())
        })
    })
}

#[test]
fn a_connected_socket_reports_connection_refused_once_and_stays_usable() -> io::Result<()> {
    util::within(SAFETY * 2, || {
        ioloop::block_on(async {
            let nobody = closed_port().await?;
            let socket = UdpSocket::bind("127.0.0.1:0").await?;
            socket.connect(nobody).await?;
            socket.send(b"anyone?").await?;
            // The refusal comes back as the next call's error: once.
            let mut buf = [0; 32];
            let err = timeout(SAFETY, socket.recv(&mut buf))
                .await?
                .expect_err("the ICMP error was not reported");
            assert_eq!(err.kind(), io::ErrorKind::ConnectionRefused);

            // Someone binds the port after all: the socket, still connected
            // to it, sends and receives as if nothing had happened, and the
            // error is not reported again.
            let revived = UdpSocket::bind(nobody).await?;
            revived.connect(socket.local_addr()?).await?;
            for i in 0..10u8 {
                socket.send(&[i]).await?;
                let n = timeout(SAFETY, revived.recv(&mut buf)).await??;
                assert_eq!(&buf[..n], [i]);
                revived.send(&[i, i]).await?;
                let n = timeout(SAFETY, socket.recv(&mut buf)).await??;
                assert_eq!(&buf[..n], [i, i]);
            }

            // A second refusal is reported, again once.
            drop(revived);
            socket.send(b"anyone now?").await?;
            let err = timeout(SAFETY, socket.recv(&mut buf))
                .await?
                .expect_err("the second ICMP error was not reported");
            assert_eq!(err.kind(), io::ErrorKind::ConnectionRefused);
            // With nothing more coming, a receive now waits (it does not
            // keep returning the old error, nor spin).
            let before = ioloop::Handle::current().metrics().ticks;
            assert!(
                timeout(Duration::from_millis(100), socket.recv(&mut buf))
                    .await
                    .is_err(),
                "a receive with nothing to receive did not wait"
            );
            let ticks = ioloop::Handle::current().metrics().ticks - before;
            assert!(ticks < 20, "{ticks} ticks while waiting 100 ms");
            io::Result::Ok(())
        })
    })
}
