//! Accepting and connecting: round trips, addresses, bursts of clients, the
//! stream of incoming connections, refused connects, sockets from std.

use std::io;
use std::time::Duration;

use futures_util::{AsyncReadExt, AsyncWriteExt, StreamExt};
use ioloop::net::{TcpListener, TcpStream};

use net_run::run;
use testkit::net_run;

#[test]
fn accept_and_connect_round_trip_with_agreeing_addresses() -> io::Result<()> {
    run(|| async {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        assert!(addr.ip().is_loopback() && addr.port() != 0);
        let mut client = TcpStream::connect(addr).await?;
        let (mut server, peer) = listener.accept().await?;
        assert_eq!(peer, client.local_addr()?);
        assert_eq!(server.peer_addr()?, client.local_addr()?);
        assert_eq!(server.local_addr()?, client.peer_addr()?);
        assert_eq!(client.peer_addr()?, addr);

        client.write_all(b"hello").await?;
        let mut buf = [0; 5];
        server.read_exact(&mut buf).await?;
        assert_eq!(&buf, b"hello");
        server.write_all(b"world").await?;
        client.read_exact(&mut buf).await?;
        assert_eq!(&buf, b"world");
        Ok(())
    })
}

#[test]
fn two_hundred_concurrent_connects_are_all_accepted() -> io::Result<()> {
    const CLIENTS: u32 = 200;
    run(|| async {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        // Every client connects at once, sends its number, and expects it
        // back: the burst lands in the listen backlog, not on the floor.
        let clients: Vec<_> = (0..CLIENTS)
            .map(|i| {
                ioloop::spawn(async move {
                    let mut stream = TcpStream::connect(addr).await?;
                    stream.write_all(&i.to_be_bytes()).await?;
                    let mut back = [0; 4];
                    stream.read_exact(&mut back).await?;
                    Ok::<_, io::Error>(u32::from_be_bytes(back))
                })
            })
            .collect();
        let mut servers = Vec::new();
        for _ in 0..CLIENTS {
            let (mut stream, _) = listener.accept().await?;
            servers.push(ioloop::spawn(async move {
                let mut buf = [0; 4];
                stream.read_exact(&mut buf).await?;
                stream.write_all(&buf).await
            }));
        }
        let mut echoed = Vec::new();
        for client in clients {
            echoed.push(client.await.unwrap()?);
        }
        for server in servers {
            server.await.unwrap()?;
        }
        assert_eq!(echoed, (0..CLIENTS).collect::<Vec<_>>());
        Ok(())
    })
}

#[test]
fn incoming_yields_each_connection() -> io::Result<()> {
    run(|| async {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let clients = ioloop::spawn(async move {
            let mut locals = Vec::new();
            for _ in 0..3 {
                let mut stream = TcpStream::connect(addr).await?;
                stream.write_all(b"x").await?;
                locals.push(stream.local_addr()?);
            }
            Ok::<_, io::Error>(locals)
        });
        let mut peers = Vec::new();
        let mut incoming = listener.incoming();
        while peers.len() < 3 {
            let mut stream = incoming.next().await.expect("never ends")?;
            let mut x = [0; 1];
            stream.read_exact(&mut x).await?;
            peers.push(stream.peer_addr()?);
        }
        assert_eq!(peers, clients.await.unwrap()?);
        Ok(())
    })
}

#[test]
fn connect_to_a_closed_port_is_refused() -> io::Result<()> {
    run(|| async {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        drop(listener);
        let err = TcpStream::connect(addr).await.unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::ConnectionRefused);
        Ok(())
    })
}

/// Host names are resolved (tests/net/names.rs); a string that is no
/// address at all is refused before any lookup.
#[test]
fn malformed_addresses_are_refused() -> io::Result<()> {
    run(|| async {
        let err = TcpStream::connect("localhost").await.unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
        let err = TcpListener::bind("127.0.0.1:port").await.unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
        Ok(())
    })
}

#[test]
fn a_cancelled_accept_loses_no_connection() -> io::Result<()> {
    run(|| async {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let timed_out = ioloop::time::timeout(Duration::from_millis(10), listener.accept()).await;
        assert!(timed_out.is_err(), "nobody connected yet");
        let client = TcpStream::connect(listener.local_addr()?).await?;
        let (_server, peer) = listener.accept().await?;
        assert_eq!(peer, client.local_addr()?);
        Ok(())
    })
}

#[test]
fn sockets_from_std_are_made_non_blocking() -> io::Result<()> {
    run(|| async {
        let std_listener = std::net::TcpListener::bind("127.0.0.1:0")?;
        let addr = std_listener.local_addr()?;
        let listener = TcpListener::from_std(std_listener)?;
        let std_client = std::net::TcpStream::connect(addr)?;
        let mut client = TcpStream::from_std(std_client)?;
        let (mut server, _) = listener.accept().await?;
        // The read below runs first (a spawned task starts on the next
        // tick): a blocking socket would stall the whole loop in it, and
        // the writer would never run.
        let writer = ioloop::spawn(async move {
            client.write_all(b"late").await?;
            Ok::<_, io::Error>(client)
        });
        let mut buf = [0; 4];
        server.read_exact(&mut buf).await?;
        assert_eq!(&buf, b"late");
        writer.await.unwrap()?;
        Ok(())
    })
}

#[test]
fn an_empty_read_or_write_returns_zero_at_once() -> io::Result<()> {
    run(|| async {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let mut client = TcpStream::connect(listener.local_addr()?).await?;
        let (_server, _) = listener.accept().await?;
        // Nothing was sent: a real read would wait forever.
        assert_eq!(client.read(&mut []).await?, 0);
        assert_eq!(client.write(&[]).await?, 0);
        Ok(())
    })
}

/// Issue 30: binding outside a runtime failed with an error naming the
/// internal `Registration::new`; it now says what the caller did and what
/// to do instead.
#[test]
fn binding_outside_a_runtime_says_where_sockets_are_made() {
    let err = poll_ready_once(ioloop::net::TcpListener::bind("127.0.0.1:0"))
        .expect_err("no runtime runs on this thread");
    let text = err.to_string();
    assert!(text.contains("outside an ioloop runtime"), "{text}");
    assert!(text.contains("block_on"), "{text}");
    assert!(!text.contains("Registration"), "{text}");
}

/// Polls `future` once with a waker that does nothing: `bind` to a literal
/// address completes on its first poll.
fn poll_ready_once<F: std::future::Future>(future: F) -> F::Output {
    let mut future = std::pin::pin!(future);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    match future.as_mut().poll(&mut cx) {
        std::task::Poll::Ready(out) => out,
        std::task::Poll::Pending => panic!("bind to a literal address did not complete at once"),
    }
}
