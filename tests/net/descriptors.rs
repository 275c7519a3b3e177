//! A socket's file descriptor: `as_raw_fd` names the socket `as_fd`
//! borrows, and dropping a socket takes it out of the loop's epoll set even
//! while a duplicate of its descriptor keeps the socket itself open (the
//! kernel removes an epoll entry on its own only when the last descriptor
//! of the socket closes, so the runtime's `deregister` is what does it
//! here).

use std::io;
use std::os::fd::{AsFd, AsRawFd, OwnedFd, RawFd};

use ioloop::net::{TcpListener, TcpStream, UdpSocket, UnixStream};
use net_run::run;
use testkit::net_run;

/// What /proc says descriptor `fd` of this process is, like
/// `socket:[123]` or `anon_inode:[eventpoll]`.
fn what_is(fd: RawFd) -> io::Result<String> {
    Ok(std::fs::read_link(format!("/proc/self/fd/{fd}"))?
        .to_string_lossy()
        .into_owned())
}

/// The inode number of the socket behind `fd`, in hex as epoll's fdinfo
/// prints it.
fn socket_inode(fd: &OwnedFd) -> io::Result<String> {
    let link = what_is(fd.as_raw_fd())?;
    let number = link
        .strip_prefix("socket:[")
        .and_then(|rest| rest.strip_suffix(']'))
        .and_then(|n| n.parse::<u64>().ok())
        .ok_or_else(|| io::Error::other(format!("not a socket: {link}")))?;
    Ok(format!("{number:x}"))
}

/// How many entries of this process's epoll descriptors watch the socket
/// of inode `ino` (hex); one epoll set held by two descriptors (mio's
/// registry is cloned by `dup`) counts twice. Each epoll descriptor's
/// fdinfo has a line
/// `tfd: N events: E data: D pos:0 ino:I sdev:S` per watched descriptor.
fn watched(ino: &str) -> io::Result<usize> {
    let mut count = 0;
    for entry in std::fs::read_dir("/proc/self/fd")? {
        let fd: RawFd = match entry?.file_name().to_string_lossy().parse() {
            Ok(fd) => fd,
            Err(_) => continue,
        };
        // A descriptor closed since the listing is no epoll set of ours.
        if what_is(fd).ok().as_deref() != Some("anon_inode:[eventpoll]") {
            continue;
        }
        let Ok(info) = std::fs::read_to_string(format!("/proc/self/fdinfo/{fd}")) else {
            continue;
        };
        count += info
            .lines()
            .filter(|line| line.starts_with("tfd:"))
            .filter(|line| line.split_whitespace().any(|w| w == format!("ino:{ino}")))
            .count();
    }
    Ok(count)
}

/// `as_raw_fd` is the descriptor `as_fd` borrows, and it is a socket.
fn same_descriptor(socket: &(impl AsFd + AsRawFd)) -> io::Result<()> {
    let raw = socket.as_raw_fd();
    assert_eq!(raw, socket.as_fd().as_raw_fd());
    assert!(what_is(raw)?.starts_with("socket:["), "{}", what_is(raw)?);
    Ok(())
}

/// Registered while alive, out of the epoll set once dropped, though a
/// duplicate (`dup`) keeps the socket open.
fn leaves_the_epoll_set(socket: impl AsFd) -> io::Result<OwnedFd> {
    let dup = socket.as_fd().try_clone_to_owned()?;
    let ino = socket_inode(&dup)?;
    assert!(watched(&ino)? > 0, "a live socket is watched");
    drop(socket);
    assert_eq!(watched(&ino)?, 0, "a dropped socket is still watched");
    Ok(dup)
}

/// A listener, both ends of a TCP connection, a UDP socket and a Unix
/// stream pair.
async fn one_of_each() -> io::Result<(
    TcpListener,
    TcpStream,
    TcpStream,
    UdpSocket,
    (UnixStream, UnixStream),
)> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let client = TcpStream::connect(listener.local_addr()?).await?;
    let (server, _) = listener.accept().await?;
    let udp = UdpSocket::bind("127.0.0.1:0").await?;
    Ok((listener, client, server, udp, UnixStream::pair()?))
}

#[test]
fn as_raw_fd_names_the_socket_of_every_type() -> io::Result<()> {
    run(|| async {
        let (listener, client, server, udp, (a, b)) = one_of_each().await?;
        same_descriptor(&listener)?;
        same_descriptor(&client)?;
        same_descriptor(&server)?;
        same_descriptor(&udp)?;
        same_descriptor(&a)?;
        assert_ne!(client.as_raw_fd(), server.as_raw_fd());
        assert_ne!(a.as_raw_fd(), b.as_raw_fd());
        Ok(())
    })
}

#[test]
fn a_dropped_socket_leaves_the_epoll_set_while_a_duplicate_lives() -> io::Result<()> {
    run(|| async {
        let (listener, client, server, udp, (a, b)) = one_of_each().await?;
        let dups = [
            leaves_the_epoll_set(client)?,
            leaves_the_epoll_set(server)?,
            leaves_the_epoll_set(listener)?,
            leaves_the_epoll_set(udp)?,
            leaves_the_epoll_set(a)?,
            leaves_the_epoll_set(b)?,
        ];
        // The duplicates still hold the sockets: the kernel did not do it.
        for dup in &dups {
            assert!(what_is(dup.as_raw_fd())?.starts_with("socket:["));
        }
        Ok(())
    })
}
