//! Unix stream scenarios: names, refusals, data, half-close and close.
//! On the kernel each path is a fresh file under the system's temporary
//! directory, removed at the end; in a simulation the same path names a
//! listener of the host, with no file behind it.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

use ioloop::io::{AsyncReadExt, AsyncWriteExt};
use ioloop::net::unix::SocketAddr;
use std::net::Shutdown;

use ioloop::net::{UnixDatagram, UnixListener, UnixStream};

use super::{Transcript, pattern};

/// A path no socket has: the same sequence in both runs.
fn path() -> PathBuf {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    std::env::temp_dir().join(format!("ioloop-kernel-{}-{n}.sock", std::process::id()))
}

/// Removes a socket's file, if a kernel's bind made one.
fn unlink(path: &Path) {
    let _ = std::fs::remove_file(path);
}

/// What an address is: unnamed, or the path `path`, or another.
fn name_of(addr: &io::Result<SocketAddr>, path: &Path) -> String {
    match addr {
        Ok(addr) if addr.is_unnamed() => "unnamed".into(),
        Ok(addr) if addr.as_pathname() == Some(path) => "the path".into(),
        Ok(addr) => format!("another: {addr:?}"),
        Err(err) => super::transcript::error(err),
    }
}

/// A listener at a fresh path, a client connected and the server side.
async fn connected() -> io::Result<(PathBuf, UnixListener, UnixStream, UnixStream)> {
    let path = path();
    let listener = UnixListener::bind(&path)?;
    let client = UnixStream::connect(&path).await?;
    let (server, _) = listener.accept().await?;
    Ok((path, listener, client, server))
}

pub async fn both_ends_and_the_listener_name_what_the_kernel_names() -> io::Result<Transcript> {
    let mut t = Transcript::new();
    let path = path();
    let listener = UnixListener::bind(&path)?;
    t.note(format!(
        "listener: {}",
        name_of(&listener.local_addr(), &path)
    ));
    let client = UnixStream::connect(&path).await?;
    let (server, from) = listener.accept().await?;
    t.note(format!("accepted from: {}", name_of(&Ok(from), &path)));
    t.note(format!(
        "client local: {}",
        name_of(&client.local_addr(), &path)
    ));
    t.note(format!(
        "client peer: {}",
        name_of(&client.peer_addr(), &path)
    ));
    t.note(format!(
        "server local: {}",
        name_of(&server.local_addr(), &path)
    ));
    t.note(format!(
        "server peer: {}",
        name_of(&server.peer_addr(), &path)
    ));
    let (a, b) = UnixStream::pair()?;
    t.note(format!(
        "pair: {} {}",
        name_of(&a.local_addr(), &path),
        name_of(&b.peer_addr(), &path)
    ));
    unlink(&path);
    Ok(t)
}

pub async fn connect_to_a_path_with_no_socket() -> io::Result<Transcript> {
    let mut t = Transcript::new();
    let path = path();
    t.see("connect", &UnixStream::connect(&path).await.map(drop));
    Ok(t)
}

pub async fn bind_to_a_path_in_use() -> io::Result<Transcript> {
    let mut t = Transcript::new();
    let path = path();
    let _listener = UnixListener::bind(&path)?;
    t.see("bind again", &UnixListener::bind(&path).map(drop));
    unlink(&path);
    Ok(t)
}

pub async fn two_paths_name_two_listeners() -> io::Result<Transcript> {
    let mut t = Transcript::new();
    let (a, b) = (path(), path());
    let (first, second) = (UnixListener::bind(&a)?, UnixListener::bind(&b)?);
    for (i, at) in [&a, &b, &a].into_iter().enumerate() {
        let mut client = UnixStream::connect(at).await?;
        client.write_all(&[i as u8]).await?;
    }
    let mut byte = [0];
    for (name, listener, at) in [("first", &first, &a), ("second", &second, &b)] {
        let (mut server, _) = listener.accept().await?;
        server.read_exact(&mut byte).await?;
        t.note(format!(
            "{name}: byte {} at {}",
            byte[0],
            name_of(&server.local_addr(), at)
        ));
    }
    let (mut server, _) = first.accept().await?;
    server.read_exact(&mut byte).await?;
    t.note(format!("first again: byte {}", byte[0]));
    unlink(&a);
    unlink(&b);
    Ok(t)
}

pub async fn bind_and_connect_the_empty_path() -> io::Result<Transcript> {
    let mut t = Transcript::new();
    let bound = UnixListener::bind("").and_then(|l| l.local_addr());
    t.see("bind, unnamed", &bound.map(|a| a.is_unnamed()));
    t.see("connect", &UnixStream::connect("").await.map(drop));
    Ok(t)
}

pub async fn a_closed_listeners_path_removed_is_free_again() -> io::Result<Transcript> {
    let mut t = Transcript::new();
    let path = path();
    drop(UnixListener::bind(&path)?);
    unlink(&path);
    t.see("connect", &UnixStream::connect(&path).await.map(drop));
    let listener = UnixListener::bind(&path)?;
    let client = UnixStream::connect(&path).await?;
    let (server, _) = listener.accept().await?;
    t.note(format!(
        "then connected: {}",
        name_of(&server.local_addr(), &path)
    ));
    drop(client);
    unlink(&path);
    Ok(t)
}

pub async fn a_closed_listeners_path_left_refuses() -> io::Result<Transcript> {
    let mut t = Transcript::new();
    let path = path();
    drop(UnixListener::bind(&path)?);
    t.see("connect", &UnixStream::connect(&path).await.map(drop));
    t.see("bind", &UnixListener::bind(&path).map(drop));
    unlink(&path);
    Ok(t)
}

pub async fn connections_wait_in_the_backlog_and_are_accepted_in_order() -> io::Result<Transcript> {
    let mut t = Transcript::new();
    let path = path();
    let listener = UnixListener::bind(&path)?;
    let mut clients = Vec::new();
    for i in 0..16u8 {
        let mut client = UnixStream::connect(&path).await?;
        client.write_all(&[i]).await?;
        clients.push(client);
    }
    let mut order = Vec::new();
    for _ in 0..16 {
        let (mut server, _) = listener.accept().await?;
        let mut byte = [0];
        server.read_exact(&mut byte).await?;
        order.push(byte[0]);
    }
    t.note(format!("accepted: {order:?}"));
    unlink(&path);
    Ok(t)
}

pub async fn echo_a_megabyte_both_ways() -> io::Result<Transcript> {
    let mut t = Transcript::new();
    let (path, _listener, client, server) = connected().await?;
    let payload = pattern(7, 1 << 20);
    let (mut read, mut write) = server.into_split();
    let echo = ioloop::spawn_local(async move {
        ioloop::io::copy(&mut read, &mut write).await?;
        write.close().await
    });
    let (mut from, mut to) = client.into_split();
    let sent = payload.clone();
    let sender = ioloop::spawn_local(async move {
        to.write_all(&sent).await?;
        to.close().await?;
        Ok::<_, io::Error>(to)
    });
    let mut back = Vec::new();
    t.see("read_to_end", &from.read_to_end(&mut back).await);
    t.check("the echo is the payload", back == payload);
    t.see("sender", &sender.await.map_err(io::Error::other)?.map(drop));
    t.see("echo", &echo.await.map_err(io::Error::other)?);
    unlink(&path);
    Ok(t)
}

pub async fn peek_then_read_and_zero_length_calls() -> io::Result<Transcript> {
    let mut t = Transcript::new();
    let (path, _listener, mut client, server) = connected().await?;
    client.write_all(b"peeked").await?;
    let mut buf = [0; 16];
    t.see("peek", &server.peek(&mut buf).await);
    t.see("read", &(&server).read(&mut buf).await);
    t.see("write of nothing", &client.write(b"").await);
    t.see("read into nothing", &(&server).read(&mut []).await);
    unlink(&path);
    Ok(t)
}

pub async fn the_client_half_closes_and_the_server_answers() -> io::Result<Transcript> {
    let mut t = Transcript::new();
    let (path, _listener, mut client, mut server) = connected().await?;
    client.write_all(b"question").await?;
    client.shutdown(Shutdown::Write)?;
    let mut asked = Vec::new();
    t.see("server read_to_end", &server.read_to_end(&mut asked).await);
    t.see("client write after its shutdown", &client.write(b"x").await);
    server.write_all(b"answer").await?;
    drop(server);
    let mut answer = Vec::new();
    t.see("client read_to_end", &client.read_to_end(&mut answer).await);
    t.note(format!(
        "{:?} {:?}",
        String::from_utf8_lossy(&asked),
        String::from_utf8_lossy(&answer)
    ));
    t.see("read at the end", &client.read(&mut [0; 4]).await);
    unlink(&path);
    Ok(t)
}

pub async fn write_after_the_peer_closed() -> io::Result<Transcript> {
    let mut t = Transcript::new();
    let (path, _listener, client, mut server) = connected().await?;
    drop(client);
    t.see("read", &server.read(&mut [0; 8]).await);
    // Unlike TCP's, the first write fails: the peer is gone at once.
    t.see("write", &server.write(b"x").await);
    t.see("write again", &server.write(b"x").await);
    unlink(&path);
    Ok(t)
}

pub async fn close_with_unread_bytes() -> io::Result<Transcript> {
    let mut t = Transcript::new();
    let (path, _listener, mut client, server) = connected().await?;
    client.write_all(b"unread").await?;
    server.peek(&mut [0; 1]).await?;
    drop(server);
    t.see("read", &client.read(&mut [0; 8]).await);
    t.see("read again", &client.read(&mut [0; 8]).await);
    t.see("write", &client.write(b"x").await);
    unlink(&path);
    Ok(t)
}

pub async fn a_unix_datagram_socket() -> io::Result<Transcript> {
    let mut t = Transcript::new();
    t.see("pair", &UnixDatagram::pair().map(drop));
    Ok(t)
}
