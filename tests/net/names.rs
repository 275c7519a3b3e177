//! Host names and the other forms of `ToSocketAddrs`: connecting and
//! binding by name, `lookup_host`, a name that does not resolve, several
//! addresses tried in turn, and literals that never leave the loop thread.
//!
//! Where a test needs a port to refuse connections, it holds a socket
//! bound to it but not listening: nothing else can take the port, and a
//! connect to it is refused at once.

use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::time::Duration;

use ioloop::net::{TcpListener, TcpSocket, TcpStream, UdpSocket, lookup_host};
use net_run::run;
use testkit::{net_run, util};

/// A socket bound to `addr` and never listening: connects to it are
/// refused, and no one else can listen there while it lives.
fn refusing(addr: SocketAddr) -> io::Result<TcpSocket> {
    let socket = if addr.is_ipv4() {
        TcpSocket::new_v4()?
    } else {
        TcpSocket::new_v6()?
    };
    socket.bind(addr)?;
    Ok(socket)
}

/// The address of a fresh [`refusing`] socket on 127.0.0.1.
fn closed_port() -> io::Result<(TcpSocket, SocketAddr)> {
    let socket = refusing((Ipv4Addr::LOCALHOST, 0).into())?;
    let addr = socket.local_addr()?;
    Ok((socket, addr))
}

async fn accepts_from(listener: &TcpListener, client: &TcpStream) -> io::Result<()> {
    let (_server, peer) = listener.accept().await?;
    assert_eq!(peer, client.local_addr()?);
    Ok(())
}

#[test]
fn connect_to_localhost_by_name() -> io::Result<()> {
    run(|| async {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        // If "localhost" also names ::1, that port must refuse, not belong
        // to some other server.
        let _v6_held = refusing((Ipv6Addr::LOCALHOST, addr.port()).into());

        let client = TcpStream::connect(format!("localhost:{}", addr.port()).as_str()).await?;
        assert_eq!(client.peer_addr()?, addr);
        accepts_from(&listener, &client).await?;

        let client = TcpStream::connect(("localhost", addr.port())).await?;
        accepts_from(&listener, &client).await?;
        let client = TcpStream::connect((String::from("localhost"), addr.port())).await?;
        accepts_from(&listener, &client).await?;
        let client = TcpStream::connect(format!("localhost:{}", addr.port())).await?;
        accepts_from(&listener, &client).await?;
        let by_ref = format!("localhost:{}", addr.port());
        let client = TcpStream::connect(&by_ref).await?;
        accepts_from(&listener, &client).await?;

        // The future is `Send`, in generic code too: it can be spawned.
        async fn connect_generic(addr: impl ioloop::net::ToSocketAddrs) -> io::Result<TcpStream> {
            TcpStream::connect(addr).await
        }
        let name = by_ref.clone();
        let client = ioloop::spawn(connect_generic(name)).await.unwrap()?;
        accepts_from(&listener, &client).await?;
        Ok(())
    })
}

#[test]
fn connect_to_localhost_over_ipv6_where_the_machine_has_it() -> io::Result<()> {
    run(|| async {
        let Ok(listener) = TcpListener::bind("[::1]:0").await else {
            println!("skipped: no IPv6 loopback here ([::1]:0 does not bind)");
            return Ok(());
        };
        let addr = listener.local_addr()?;
        if !lookup_host(("localhost", 0)).await?.any(|a| a.is_ipv6()) {
            println!("skipped: \"localhost\" does not resolve to ::1 here (see /etc/hosts)");
            return Ok(());
        }
        // 127.0.0.1 on the same port must refuse (if it comes first, the
        // connect moves on to ::1), not belong to another server.
        let Ok(_v4_held) = refusing((Ipv4Addr::LOCALHOST, addr.port()).into()) else {
            println!("skipped: port {} is taken on 127.0.0.1", addr.port());
            return Ok(());
        };
        let client = TcpStream::connect(("localhost", addr.port())).await?;
        assert_eq!(client.peer_addr()?, addr);
        accepts_from(&listener, &client).await?;
        Ok(())
    })
}

#[test]
fn lookup_host_finds_localhost() -> io::Result<()> {
    run(|| async {
        let addrs: Vec<SocketAddr> = lookup_host("localhost:80").await?.collect();
        assert!(
            addrs.contains(&(Ipv4Addr::LOCALHOST, 80).into()),
            "localhost:80 resolved to {addrs:?}"
        );
        // Literals come back as they are.
        let literal: SocketAddr = "[::1]:443".parse().unwrap();
        assert_eq!(lookup_host(literal).await?.collect::<Vec<_>>(), [literal]);
        let two = [literal, "10.0.0.1:1".parse().unwrap()];
        assert_eq!(lookup_host(&two[..]).await?.collect::<Vec<_>>(), two);
        Ok(())
    })
}

/// `.invalid` never resolves (RFC 6761), whatever the resolver.
#[test]
fn a_name_that_does_not_resolve_is_an_error_naming_it() -> io::Result<()> {
    const HOST: &str = "no-such-host.ioloop.invalid";
    run(|| async {
        let names_it = |err: io::Error| {
            assert!(err.to_string().contains(HOST), "{err}");
            println!("the error: {err} (kind {:?})", err.kind());
        };
        names_it(lookup_host((HOST, 80)).await.err().unwrap());
        names_it(TcpStream::connect(format!("{HOST}:80")).await.unwrap_err());
        names_it(TcpListener::bind((HOST, 0)).await.unwrap_err());
        let udp = UdpSocket::bind("127.0.0.1:0").await?;
        names_it(udp.send_to(b"x", (HOST, 9)).await.unwrap_err());
        names_it(udp.connect((HOST, 9)).await.unwrap_err());
        Ok(())
    })
}

#[test]
fn connect_tries_each_address_in_turn() -> io::Result<()> {
    run(|| async {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let open = listener.local_addr()?;
        let (_held, closed) = closed_port()?;
        let client = TcpStream::connect(&[closed, open][..]).await?;
        assert_eq!(client.peer_addr()?, open);
        accepts_from(&listener, &client).await?;
        Ok(())
    })
}

/// With every address failing, the error is the last one's. A link-local
/// IPv6 address without a scope fails differently from a refusal
/// (`EINVAL`, or `EAFNOSUPPORT` without IPv6), which tells first from last.
#[test]
fn when_all_fail_connect_returns_the_last_error() -> io::Result<()> {
    run(|| async {
        let (_held, closed) = closed_port()?;
        let unroutable: SocketAddr = "[fe80::1]:80".parse().unwrap();
        let other = TcpStream::connect(unroutable).await.unwrap_err();
        assert_ne!(other.kind(), io::ErrorKind::ConnectionRefused, "{other}");

        let err = TcpStream::connect(&[unroutable, closed][..])
            .await
            .unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::ConnectionRefused, "{err}");
        let err = TcpStream::connect(&[closed, unroutable][..])
            .await
            .unwrap_err();
        assert_eq!(err.kind(), other.kind(), "{err}");

        let none: &[SocketAddr] = &[];
        let err = TcpStream::connect(none).await.unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput, "{err}");
        Ok(())
    })
}

#[test]
fn bind_takes_the_first_address_that_binds() -> io::Result<()> {
    run(|| async {
        let taken = TcpListener::bind("127.0.0.1:0").await?;
        let taken_addr = taken.local_addr()?;
        let any_port: SocketAddr = (Ipv4Addr::LOCALHOST, 0).into();
        let listener = TcpListener::bind(&[taken_addr, any_port][..]).await?;
        assert_ne!(listener.local_addr()?, taken_addr);

        let udp_taken = UdpSocket::bind("127.0.0.1:0").await?;
        let udp = UdpSocket::bind(&[udp_taken.local_addr()?, any_port][..]).await?;
        assert_ne!(udp.local_addr()?, udp_taken.local_addr()?);

        let err = TcpListener::bind(&[taken_addr][..]).await.unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::AddrInUse);
        Ok(())
    })
}

#[test]
fn udp_by_name() -> io::Result<()> {
    run(|| async {
        let server = UdpSocket::bind("localhost:0").await?;
        let port = server.local_addr()?.port();
        assert!(server.local_addr()?.ip().is_loopback());
        let client = UdpSocket::bind(("localhost", 0)).await?;
        client.send_to(b"by name", ("localhost", port)).await?;
        let mut buf = [0; 16];
        let (n, from) = server.recv_from(&mut buf).await?;
        assert_eq!((&buf[..n], from), (&b"by name"[..], client.local_addr()?));

        client.connect(format!("localhost:{port}")).await?;
        assert_eq!(client.peer_addr()?, server.local_addr()?);
        client.send(b"connected").await?;
        let (n, _) = server.recv_from(&mut buf).await?;
        assert_eq!(&buf[..n], b"connected");
        Ok(())
    })
}

/// A literal address never goes to the blocking pool. The pool starts its
/// threads on demand, so on a fresh runtime `blocking_threads` stays 0
/// until some job needs one; a name, looked up at the end, shows the
/// counter does see a lookup.
#[test]
fn literals_take_no_trip_to_the_blocking_pool() -> io::Result<()> {
    util::within(net_run::SAFETY_NET, || {
        let rt = ioloop::Builder::new()
            // The lookup's thread must still be there when counted.
            .thread_keep_alive(Duration::from_secs(600))
            .build()?;
        rt.block_on(async {
            let pool_threads = || ioloop::Handle::current().metrics().blocking_threads;
            assert_eq!(pool_threads(), 0);

            let listener = TcpListener::bind("127.0.0.1:0").await?;
            let addr = listener.local_addr()?;
            let port = addr.port();
            let _a = TcpStream::connect(addr).await?;
            let _b = TcpStream::connect(format!("127.0.0.1:{port}")).await?;
            let _c = TcpStream::connect(("127.0.0.1", port)).await?;
            let _d = TcpStream::connect((String::from("127.0.0.1"), port)).await?;
            let _e = TcpStream::connect((IpAddr::V4(Ipv4Addr::LOCALHOST), port)).await?;
            let _f = TcpStream::connect(&[addr][..]).await?;
            let _g = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await?;
            let udp = UdpSocket::bind("127.0.0.1:0").await?;
            udp.send_to(b"x", udp.local_addr()?).await?;
            udp.send_to(b"x", ("127.0.0.1", udp.local_addr()?.port()))
                .await?;
            udp.connect(udp.local_addr()?).await?;
            let _ = lookup_host("[::1]:80").await?;
            assert_eq!(pool_threads(), 0, "a literal went to the blocking pool");

            let _ = lookup_host("localhost:80").await?;
            assert!(pool_threads() >= 1, "a name is looked up on the pool");
            Ok(())
        })
    })
}
