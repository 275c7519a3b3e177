//! `TcpSocket`: options set before bind, listen and connect. Two listeners
//! sharing a port with `SO_REUSEPORT`, `SO_REUSEADDR` against a port held
//! in `TIME_WAIT`, a listen backlog, connecting from a chosen address, and
//! each option's setter and getter.

use std::future::{Future, poll_fn};
use std::io;
use std::net::SocketAddr;
use std::pin::pin;
use std::task::Poll;
use std::time::Duration;

use futures_util::AsyncReadExt;
use ioloop::net::{TcpListener, TcpSocket, TcpStream};
use net_run::run;
use testkit::net_run;

fn loopback() -> SocketAddr {
    "127.0.0.1:0".parse().unwrap()
}

fn reuseport_listener(addr: SocketAddr) -> io::Result<TcpListener> {
    let socket = TcpSocket::new_v4()?;
    socket.set_reuseport(true)?;
    assert!(socket.reuseport()?);
    socket.bind(addr)?;
    socket.listen(16)
}

/// Both listeners hold the port at once; the kernel hands a connection to
/// one of them (by a hash of the addresses), so which one is found out,
/// that one is closed, and the next connection must go to the other.
#[test]
fn two_reuseport_listeners_on_one_port_both_accept() -> io::Result<()> {
    run(|| async {
        let a = reuseport_listener(loopback())?;
        let port = a.local_addr()?;
        let b = reuseport_listener(port)?;
        assert_eq!(b.local_addr()?, port);

        let first = TcpStream::connect(port).await?;
        let took_it = {
            let mut from_a = pin!(a.accept());
            let mut from_b = pin!(b.accept());
            poll_fn(|cx| {
                if let Poll::Ready(accepted) = from_a.as_mut().poll(cx) {
                    return Poll::Ready(accepted.map(|(s, _)| ('a', s)));
                }
                from_b
                    .as_mut()
                    .poll(cx)
                    .map(|accepted| accepted.map(|(s, _)| ('b', s)))
            })
            .await?
        };
        let (which, server) = took_it;
        assert_eq!(server.peer_addr()?, first.local_addr()?);

        // Close the listener that took the first: the other takes the next.
        let other = if which == 'a' {
            drop(a);
            b
        } else {
            drop(b);
            a
        };
        let second = TcpStream::connect(port).await?;
        let (server, peer) = other.accept().await?;
        assert_eq!(peer, second.local_addr()?);
        assert_eq!(server.local_addr()?, port);
        Ok(())
    })
}

/// A port whose last connection this side closed first sits in
/// `TIME_WAIT` (or `FIN_WAIT_2` on the way there): binding it again needs
/// `SO_REUSEADDR`.
#[test]
fn reuseaddr_binds_a_port_held_in_time_wait() -> io::Result<()> {
    run(|| async {
        let socket = TcpSocket::new_v4()?;
        assert!(!socket.reuseaddr()?, "off by default");
        socket.set_reuseaddr(true)?;
        assert!(socket.reuseaddr()?);
        socket.bind(loopback())?;
        let port = socket.local_addr()?;
        let listener = socket.listen(16)?;

        let mut client = TcpStream::connect(port).await?;
        let (server, _) = listener.accept().await?;
        drop(server); // the server closes first: its side will wait
        let mut rest = Vec::new();
        assert_eq!(client.read_to_end(&mut rest).await?, 0);
        drop(client);
        drop(listener);

        let without = TcpSocket::new_v4()?;
        let err = without.bind(port).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::AddrInUse, "{err}");

        let with = TcpSocket::new_v4()?;
        with.set_reuseaddr(true)?;
        with.bind(port)?;
        let again = with.listen(16)?;
        assert_eq!(again.local_addr()?, port);
        let _client = TcpStream::connect(port).await?;
        again.accept().await?;
        Ok(())
    })
}

/// A listener holds up to its backlog of connections nobody has accepted
/// yet: each client's connect completes before any accept.
#[test]
fn the_listen_backlog_holds_unaccepted_connections() -> io::Result<()> {
    const BACKLOG: u32 = 8;
    run(|| async {
        let socket = TcpSocket::new_v4()?;
        socket.bind(loopback())?;
        let listener = socket.listen(BACKLOG)?;
        let addr = listener.local_addr()?;
        let mut clients = Vec::new();
        for _ in 0..BACKLOG {
            clients.push(TcpStream::connect(addr).await?);
        }
        for _ in 0..BACKLOG {
            let (_server, peer) = listener.accept().await?;
            assert!(clients.iter().any(|c| c.local_addr().unwrap() == peer));
        }
        Ok(())
    })
}

/// An unbound socket listens on a free port of the wildcard address.
#[test]
fn listen_without_bind_picks_a_port() -> io::Result<()> {
    run(|| async {
        let listener = TcpSocket::new_v4()?.listen(16)?;
        let addr = listener.local_addr()?;
        assert!(addr.ip().is_unspecified());
        assert_ne!(addr.port(), 0);
        Ok(())
    })
}

#[test]
fn connect_from_a_chosen_address() -> io::Result<()> {
    run(|| async {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let target = listener.local_addr()?;

        let socket = TcpSocket::new_v4()?;
        socket.set_nodelay(true)?;
        socket.bind(loopback())?;
        let from = socket.local_addr()?;
        let client = socket.connect(target).await?;
        assert_eq!(client.local_addr()?, from);
        assert_eq!(client.peer_addr()?, target);
        assert!(client.nodelay()?, "the option set before connect stays");
        let (_server, peer) = listener.accept().await?;
        assert_eq!(peer, from);

        drop(listener);
        let refused = TcpSocket::new_v4()?.connect(target).await.unwrap_err();
        assert_eq!(refused.kind(), io::ErrorKind::ConnectionRefused);
        Ok(())
    })
}

/// A connect the kernel refuses on the spot (not `EINPROGRESS`: an IPv4
/// socket given an IPv6 address) fails with the kernel's own error, at
/// once, rather than waiting for a connection that was never started.
#[test]
fn a_connect_refused_on_the_spot_fails_with_the_kernels_error() -> io::Result<()> {
    run(|| async {
        let v6: SocketAddr = "[::1]:9".parse().unwrap();
        let connect = TcpSocket::new_v4()?.connect(v6);
        let failed = ioloop::time::timeout(Duration::from_secs(5), connect)
            .await
            .expect("the connect returns at once")
            .unwrap_err();
        assert_eq!(failed.raw_os_error(), Some(libc::EAFNOSUPPORT), "{failed}");
        Ok(())
    })
}

#[test]
fn connect_over_ipv6_where_the_machine_has_it() -> io::Result<()> {
    run(|| async {
        let Ok(listener) = TcpListener::bind("[::1]:0").await else {
            println!("no IPv6 loopback here: skipped");
            return Ok(());
        };
        let client = TcpSocket::new_v6()?.connect(listener.local_addr()?).await?;
        assert!(client.local_addr()?.is_ipv6());
        listener.accept().await?;
        Ok(())
    })
}

/// Linux doubles buffer sizes (half is its bookkeeping), so the getter
/// returns at least what was set: 32 KiB doubled stays under the default
/// caps (`net.core.{w,r}mem_max`, 208 KiB).
#[test]
fn options_round_trip() -> io::Result<()> {
    let socket = TcpSocket::new_v4()?;
    socket.set_send_buffer_size(32 * 1024)?;
    assert!(socket.send_buffer_size()? >= 32 * 1024);
    socket.set_recv_buffer_size(32 * 1024)?;
    assert!(socket.recv_buffer_size()? >= 32 * 1024);

    assert_eq!(socket.linger()?, None);
    socket.set_linger(Some(Duration::from_secs(3)))?;
    assert_eq!(socket.linger()?, Some(Duration::from_secs(3)));
    socket.set_linger(None)?;
    assert_eq!(socket.linger()?, None);

    assert!(!socket.nodelay()?);
    socket.set_nodelay(true)?;
    assert!(socket.nodelay()?);

    socket.set_reuseport(true)?;
    assert!(socket.reuseport()?);
    socket.set_reuseport(false)?;
    assert!(!socket.reuseport()?);
    Ok(())
}

/// `SO_KEEPALIVE` and `IP_TOS` set on the socket are the connected
/// stream's, read back on it (the listener's side, a plain accept, has
/// keep-alive off).
#[test]
fn keepalive_and_tos_carry_over_to_the_connected_stream() -> io::Result<()> {
    run(|| async {
        let listener = TcpListener::bind(loopback()).await?;
        let socket = TcpSocket::new_v4()?;
        assert!(!socket.keepalive()?, "off by default");
        socket.set_keepalive(true)?;
        assert!(socket.keepalive()?);
        socket.set_tos(0x10)?;
        assert_eq!(socket.tos()?, 0x10);
        socket.set_ttl(21)?;
        assert_eq!(socket.ttl()?, 21);

        let stream = socket.connect(listener.local_addr()?).await?;
        assert!(stream.keepalive()?);
        assert_eq!((stream.tos()?, stream.ttl()?), (0x10, 21));
        let (server, _) = listener.accept().await?;
        assert!(!server.keepalive()?);
        server.set_keepalive(true)?;
        assert!(server.keepalive()?);

        let err = TcpSocket::new_v4()?.set_tos(256).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
        Ok(())
    })
}

#[test]
fn sockets_are_non_blocking_and_close_on_exec() -> io::Result<()> {
    use std::os::fd::AsRawFd;
    let socket = TcpSocket::new_v4()?;
    let fd = socket.as_raw_fd();
    let fl = fcntl_get(fd, libc::F_GETFL);
    assert_ne!(fl & libc::O_NONBLOCK, 0, "O_NONBLOCK");
    let fd_flags = fcntl_get(fd, libc::F_GETFD);
    assert_ne!(fd_flags & libc::FD_CLOEXEC, 0, "FD_CLOEXEC");
    Ok(())
}

/// `fcntl(fd, cmd)` for a getter command.
fn fcntl_get(fd: i32, cmd: i32) -> i32 {
    // SAFETY: F_GETFL and F_GETFD take no argument and only read the
    // descriptor's flags; `fd` is open for the duration of the call.
    let flags = unsafe { libc::fcntl(fd, cmd) };
    assert!(flags >= 0, "fcntl: {}", io::Error::last_os_error());
    flags
}

/// A std stream made elsewhere, not yet connected, configured and
/// connected through `TcpSocket`.
#[test]
fn from_std_stream_connects() -> io::Result<()> {
    run(|| async {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let raw = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None)?;
        let socket = TcpSocket::from_std_stream(raw.into())?;
        let client = socket.connect(listener.local_addr()?).await?;
        let (_server, peer) = listener.accept().await?;
        assert_eq!(peer, client.local_addr()?);
        Ok(())
    })
}
