//! Connections, made, used and closed over and over: TCP on 127.0.0.1,
//! Unix streams through a listener and as pairs. What the process holds
//! (heap, descriptors, threads) comes back to where it was.

use std::io;
use std::time::Duration;

use futures_util::{AsyncReadExt, AsyncWriteExt};
use ioloop::net::{TcpListener, TcpStream, UnixListener, UnixStream};
use testkit::account::{self, Held};
use testkit::net_unix::TempDir;
use testkit::util::within;

/// Cycles per churn.
const CYCLES: usize = 10_000;

/// What a churn of connections may leave: the runtime's tables settle a
/// little; no connection may stay.
const SLACK: isize = 64 * 1024;

/// Runs `test` on a fresh runtime, on a thread of its own, within two
/// minutes, holding the accounting lock.
fn run<T>(test: impl FnOnce() -> T + Send + 'static) -> io::Result<()>
where
    T: Future<Output = io::Result<()>> + 'static,
{
    let _serial = account::serial();
    within(Duration::from_secs(120), || {
        let rt = account::runtime()?;
        rt.block_on(test())
    })
}

/// Warms up with 100 runs of `cycle`, then checks that `CYCLES` more leave
/// the heap, descriptors and runtime threads where they were.
async fn cycles_leave_nothing<F, T>(what: &str, cycle: F) -> io::Result<()>
where
    F: Fn() -> T,
    T: Future<Output = io::Result<()>>,
{
    for _ in 0..100 {
        cycle().await?;
    }
    let before = Held::now();
    for _ in 0..CYCLES {
        cycle().await?;
    }
    before.assert_back(what, SLACK);
    Ok(())
}

/// One byte each way over a connected pair, then both dropped.
async fn ping<S>(mut a: S, mut b: S) -> io::Result<()>
where
    S: futures_util::AsyncRead + futures_util::AsyncWrite + Unpin,
{
    let mut byte = [0u8; 1];
    a.write_all(b"p").await?;
    b.read_exact(&mut byte).await?;
    b.write_all(b"q").await?;
    a.read_exact(&mut byte).await?;
    assert_eq!(&byte, b"q");
    Ok(())
}

/// 10,000 TCP connections on 127.0.0.1: connect, accept, a byte each way,
/// close. The accepted side closes with a reset (`SO_LINGER` 0), so the
/// cycles leave no `TIME_WAIT` behind to use up the ephemeral ports that
/// other tests on the machine share; the descriptors and registrations are
/// the same either way.
#[test]
fn tcp_connect_accept_close_cycles_leave_nothing() -> io::Result<()> {
    run(|| async {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let cycle = || async {
            let client = TcpStream::connect(addr).await?;
            let (server, _) = listener.accept().await?;
            server.set_linger(Some(Duration::ZERO))?;
            ping(client, server).await
        };
        cycles_leave_nothing("10,000 TCP connections", cycle).await
    })
}

/// 10,000 Unix stream connections through a listener: connect, accept, a
/// byte each way, close.
#[test]
fn unix_connect_accept_close_cycles_leave_nothing() -> io::Result<()> {
    run(|| async {
        let dir = TempDir::new()?;
        let path = dir.join("churn.sock");
        let listener = UnixListener::bind(&path)?;
        let cycle = || async {
            let client = UnixStream::connect(&path).await?;
            let (server, _) = listener.accept().await?;
            ping(client, server).await
        };
        cycles_leave_nothing("10,000 Unix connections", cycle).await
    })
}

/// 10,000 Unix stream pairs: made, a byte each way, dropped.
#[test]
fn unix_stream_pairs_made_and_dropped_leave_nothing() -> io::Result<()> {
    run(|| async {
        let cycle = || async {
            let (a, b) = UnixStream::pair()?;
            ping(a, b).await
        };
        cycles_leave_nothing("10,000 Unix stream pairs", cycle).await
    })
}

/// 10,000 UDP sockets and 10,000 Unix datagram pairs: made, a datagram
/// each way, dropped.
#[test]
fn datagram_sockets_made_and_dropped_leave_nothing() -> io::Result<()> {
    run(|| async {
        let udp = || async {
            let a = ioloop::net::UdpSocket::bind("127.0.0.1:0").await?;
            let b = ioloop::net::UdpSocket::bind("127.0.0.1:0").await?;
            a.send_to(b"p", b.local_addr()?).await?;
            let mut byte = [0u8; 1];
            let (_, from) = b.recv_from(&mut byte).await?;
            b.send_to(b"q", from).await?;
            a.recv_from(&mut byte).await?;
            Ok(())
        };
        cycles_leave_nothing("10,000 UDP socket pairs", udp).await?;
        let unix = || async {
            let (a, b) = ioloop::net::UnixDatagram::pair()?;
            a.send(b"p").await?;
            let mut byte = [0u8; 1];
            b.recv(&mut byte).await?;
            Ok(())
        };
        cycles_leave_nothing("10,000 Unix datagram pairs", unix).await
    })
}
