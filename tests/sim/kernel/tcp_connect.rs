//! TCP scenarios: connecting, accepting, binding, addresses.

use std::io;
use std::net::SocketAddr;

use ioloop::io::{AsyncReadExt, AsyncWriteExt};
use ioloop::net::{TcpListener, TcpSocket, TcpStream};

use super::{Transcript, free_port, listener, shape};

pub async fn connect_to_a_listener() -> io::Result<Transcript> {
    let mut t = Transcript::new();
    let listener = listener().await?;
    let at = listener.local_addr()?;
    t.note(format!("listener: {}", shape(&at)));
    let client = TcpStream::connect(at).await?;
    let (server, peer) = listener.accept().await?;
    t.note(format!("client local: {}", shape(&client.local_addr()?)));
    t.check("client's peer is the listener", client.peer_addr()? == at);
    t.check(
        "accept's address is the client",
        peer == client.local_addr()?,
    );
    t.check("server's peer is the client", server.peer_addr()? == peer);
    t.check("server's local is the listener", server.local_addr()? == at);
    t.check(
        "client and server on one address",
        client.local_addr()?.ip() == at.ip(),
    );
    Ok(t)
}

pub async fn connect_to_a_closed_port_is_refused() -> io::Result<Transcript> {
    let mut t = Transcript::new();
    let port = free_port().await?;
    let refused = TcpStream::connect(("127.0.0.1", port)).await;
    t.see("connect", &refused.map(drop));
    Ok(t)
}

pub async fn connect_again_once_the_port_listens() -> io::Result<Transcript> {
    let mut t = Transcript::new();
    let port = free_port().await?;
    t.see(
        "connect",
        &TcpStream::connect(("127.0.0.1", port)).await.map(drop),
    );
    let listener = TcpListener::bind(("127.0.0.1", port)).await?;
    let client = TcpStream::connect(("127.0.0.1", port)).await?;
    let (_server, peer) = listener.accept().await?;
    t.check("then connected", peer == client.local_addr()?);
    Ok(t)
}

pub async fn the_backlog_holds_connections_until_accepted_in_order() -> io::Result<Transcript> {
    let mut t = Transcript::new();
    let listener = listener().await?;
    let mut clients = Vec::new();
    for _ in 0..16 {
        clients.push(TcpStream::connect(listener.local_addr()?).await?);
    }
    t.note("16 connects done before any accept");
    let mut in_order = true;
    for client in &clients {
        let (_, peer) = listener.accept().await?;
        in_order &= peer == client.local_addr()?;
    }
    t.check("accepted in the order they connected", in_order);
    Ok(t)
}

pub async fn a_connection_closed_before_accept_is_accepted_with_its_bytes() -> io::Result<Transcript>
{
    let mut t = Transcript::new();
    let listener = listener().await?;
    let mut client = TcpStream::connect(listener.local_addr()?).await?;
    client.write_all(b"bye").await?;
    client.close().await?;
    drop(client);
    let (mut server, _) = listener.accept().await?;
    let mut got = Vec::new();
    t.see("read_to_end", &server.read_to_end(&mut got).await);
    t.note(format!("bytes: {:?}", String::from_utf8_lossy(&got)));
    Ok(t)
}

pub async fn a_listener_closed_with_connections_waiting_resets_them() -> io::Result<Transcript> {
    let mut t = Transcript::new();
    let listener = listener().await?;
    let mut client = TcpStream::connect(listener.local_addr()?).await?;
    drop(listener);
    let mut buf = [0; 8];
    t.see("read", &client.read(&mut buf).await);
    t.see("read again", &client.read(&mut buf).await);
    t.see("peer_addr", &client.peer_addr().map(|a| shape(&a)));
    Ok(t)
}

pub async fn bind_to_an_address_in_use() -> io::Result<Transcript> {
    let mut t = Transcript::new();
    let first = listener().await?;
    let again = TcpListener::bind(first.local_addr()?).await;
    t.see("bind", &again.map(drop));
    Ok(t)
}

pub async fn bind_to_an_address_no_interface_has() -> io::Result<Transcript> {
    let mut t = Transcript::new();
    // TEST-NET-1 (RFC 5737): on no interface of any host.
    let bound = TcpListener::bind("192.0.2.1:0").await;
    t.see("bind", &bound.map(drop));
    Ok(t)
}

pub async fn connect_to_the_unspecified_address() -> io::Result<Transcript> {
    let mut t = Transcript::new();
    let listener = listener().await?;
    let port = listener.local_addr()?.port();
    let client = TcpStream::connect(("0.0.0.0", port)).await?;
    let (_server, peer) = listener.accept().await?;
    t.note(format!("peer: {}", shape(&client.peer_addr()?)));
    t.check(
        "the peer is the listener",
        client.peer_addr()? == listener.local_addr()?,
    );
    t.check("accepted it", peer == client.local_addr()?);
    Ok(t)
}

pub async fn a_listener_on_the_unspecified_address() -> io::Result<Transcript> {
    let mut t = Transcript::new();
    let listener = TcpListener::bind("0.0.0.0:0").await?;
    let at = listener.local_addr()?;
    t.note(format!("listener: {}", shape(&at)));
    let client = TcpStream::connect(("127.0.0.1", at.port())).await?;
    let (server, _) = listener.accept().await?;
    t.note(format!("accepted: {}", shape(&server.local_addr()?)));
    t.check(
        "accepted on the address the client reached",
        server.local_addr()? == client.peer_addr()?,
    );
    let specific = SocketAddr::new(client.peer_addr()?.ip(), at.port());
    t.see(
        "bind the same port on the address",
        &TcpListener::bind(specific).await.map(drop),
    );
    Ok(t)
}

pub async fn options_set_and_read_back() -> io::Result<Transcript> {
    let mut t = Transcript::new();
    let (client, _server) = super::pair().await?;
    t.see("set_nodelay", &client.set_nodelay(true));
    t.see("nodelay", &client.nodelay());
    t.see("set_ttl", &client.set_ttl(9));
    t.see("ttl", &client.ttl());
    Ok(t)
}

pub async fn a_tcp_socket_built_by_hand() -> io::Result<Transcript> {
    let mut t = Transcript::new();
    let listener = listener().await?;
    match TcpSocket::new_v4() {
        Ok(socket) => {
            t.note("TcpSocket::new_v4: Ok");
            let stream = socket.connect(listener.local_addr()?).await;
            t.see("connect", &stream.map(drop));
        }
        Err(err) => t.see("TcpSocket::new_v4", &Err::<(), _>(err)),
    }
    Ok(t)
}

/// The two ends of a connection name each other: the client's local
/// address is what `accept` returned and the server's peer, the client's
/// peer is the listener's address and the server's local one.
pub async fn both_ends_name_each_other() -> io::Result<Transcript> {
    let mut t = Transcript::new();
    let listener = listener().await?;
    let client = TcpStream::connect(listener.local_addr()?).await?;
    let (server, from) = listener.accept().await?;
    t.check(
        "accept's address is the client's",
        from == client.local_addr()?,
    );
    t.check(
        "the server's peer is the client",
        server.peer_addr()? == client.local_addr()?,
    );
    t.check(
        "the client's peer is the listener",
        client.peer_addr()? == listener.local_addr()?,
    );
    t.check(
        "the server's own address is the listener's",
        server.local_addr()? == listener.local_addr()?,
    );
    t.note(format!("client: {}", shape(&client.local_addr()?)));
    Ok(t)
}

/// Fifty connections to one listener, made before any is accepted: each
/// is accepted, in the order made, from a port of its own, and carries
/// its own bytes.
pub async fn fifty_connections_each_from_a_port_of_its_own() -> io::Result<Transcript> {
    let mut t = Transcript::new();
    let listener = listener().await?;
    let mut clients = Vec::new();
    for i in 0..50u8 {
        let mut client = TcpStream::connect(listener.local_addr()?).await?;
        client.write_all(&[i]).await?;
        clients.push(client);
    }
    let mut ports = std::collections::BTreeSet::new();
    let mut in_order = true;
    for (i, client) in clients.iter().enumerate() {
        let (mut server, from) = listener.accept().await?;
        ports.insert(from.port());
        let mut byte = [0];
        server.read_exact(&mut byte).await?;
        in_order &= from == client.local_addr()? && usize::from(byte[0]) == i;
    }
    t.check("accepted in the order made, each with its bytes", in_order);
    t.note(format!("distinct ports: {}", ports.len()));
    Ok(t)
}
