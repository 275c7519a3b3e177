//! UDP in the simulated world as on Linux (issue 40, bugs 7 and 8): no
//! datagram lost with faults off, and the kernel's errors, kind and code.

use std::io;

use ioloop::net::UdpSocket;
use ioloop::sim::{Sim, run_seed, run_seeds};

/// An echo server on `server:53` that answers each datagram with its
/// length.
fn with_length_server(sim: &mut Sim) -> &mut Sim {
    sim.host("server", || async {
        let socket = UdpSocket::bind("0.0.0.0:53").await?;
        let mut buf = vec![0; 65_536];
        loop {
            let (n, from) = socket.recv_from(&mut buf).await?;
            socket.send_to(&(n as u64).to_le_bytes(), from).await?;
        }
    })
}

#[test]
fn one_datagram_to_an_idle_server_arrives_whatever_the_seeds_buffers() {
    // Linux queues a datagram into an empty socket whatever its size, and
    // its default UDP buffer (212,992 bytes) is the seed's TCP buffers'
    // business no more: one of 1,400 bytes, then one of 65,507 (the
    // largest), each answered.
    let ran = run_seeds(0..64, |seed| {
        let mut sim = Sim::new(seed);
        with_length_server(&mut sim).client("client", || async {
            let socket = UdpSocket::bind("0.0.0.0:0").await?;
            socket.connect("server:53").await?;
            for len in [1_400, 65_507] {
                socket.send(&vec![7; len]).await?;
                let mut answer = [0; 8];
                socket.recv(&mut answer).await?;
                assert_eq!(u64::from_le_bytes(answer), len as u64);
            }
            Ok(())
        });
        sim
    })
    .unwrap_or_else(|failure| panic!("{failure}"));
    assert!(ran > 0);
}

/// `result`'s error, as (kind, raw OS error).
fn error<T: std::fmt::Debug>(result: io::Result<T>) -> (io::ErrorKind, Option<i32>) {
    let err = result.expect_err("an error");
    (err.kind(), err.raw_os_error())
}

#[test]
fn the_simulated_udp_errors_are_the_kernels() {
    run_seed(1, |seed| {
        let mut sim = Sim::new(seed);
        sim.host("server", || async {
            let _socket = UdpSocket::bind("0.0.0.0:53").await?;
            std::future::pending().await
        })
        .client("client", || async {
            let socket = UdpSocket::bind("0.0.0.0:0").await?;
            // Unconnected, `send` has no destination: EDESTADDRREQ.
            assert_eq!(error(socket.send(b"x").await).1, Some(libc::EDESTADDRREQ));
            // One byte past the largest IPv4 datagram: EMSGSIZE.
            assert_eq!(
                error(socket.send_to(&[0; 65_508], "server:53").await).1,
                Some(libc::EMSGSIZE)
            );
            // Connected to a port where no one receives: the refusal comes
            // back and the next receive reports it, then the socket waits
            // again.
            socket.connect("server:54").await?;
            socket.send(b"anyone?").await?;
            let mut buf = [0; 8];
            assert_eq!(
                error(socket.recv(&mut buf).await),
                (io::ErrorKind::ConnectionRefused, Some(libc::ECONNREFUSED))
            );
            assert_eq!(
                error(socket.try_recv(&mut buf)),
                (io::ErrorKind::WouldBlock, Some(libc::EAGAIN))
            );
            Ok(())
        });
        sim
    })
    .unwrap_or_else(|failure| panic!("{failure}"));
}
