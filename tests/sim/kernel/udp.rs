//! UDP scenarios: sizes, connected sockets, refusals, truncation, peeking,
//! order, binding.

use std::io;

use ioloop::net::UdpSocket;

use super::{Transcript, pattern, shape};

/// A UDP socket on 127.0.0.1 (the host's own address in a simulation).
async fn socket() -> io::Result<UdpSocket> {
    UdpSocket::bind("127.0.0.1:0").await
}

/// An address where no UDP socket receives: one just handed out and
/// taken back.
async fn nobody() -> io::Result<std::net::SocketAddr> {
    socket().await?.local_addr()
}

/// Receives one datagram into a buffer of `room` bytes: its length, its
/// bytes, and whether it came from `from`.
async fn take(
    socket: &UdpSocket,
    room: usize,
    from: &UdpSocket,
) -> io::Result<(usize, Vec<u8>, bool)> {
    let mut buf = vec![0; room];
    let (n, sender) = socket.recv_from(&mut buf).await?;
    buf.truncate(n);
    Ok((n, buf, sender == from.local_addr()?))
}

pub async fn datagrams_of_0_1_1472_and_65507_bytes() -> io::Result<Transcript> {
    let mut t = Transcript::new();
    let (a, b) = (socket().await?, socket().await?);
    for len in [0, 1, 1472, 65_507] {
        let sent = a.send_to(&pattern(len, len), b.local_addr()?).await;
        t.see(&format!("send_to {len} bytes"), &sent);
        let (n, bytes, from_a) = take(&b, 65_536, &a).await?;
        t.note(format!(
            "recv_from: {n} bytes, as sent: {}, from the sender: {from_a}",
            bytes == pattern(len, len)
        ));
    }
    Ok(t)
}

pub async fn a_65508_byte_datagram_is_too_long() -> io::Result<Transcript> {
    let mut t = Transcript::new();
    let (a, b) = (socket().await?, socket().await?);
    let too_long = vec![1; 65_508];
    t.see("send_to", &a.send_to(&too_long, b.local_addr()?).await);
    t.see("try_send_to", &a.try_send_to(&too_long, b.local_addr()?));
    a.connect(b.local_addr()?).await?;
    t.see("send, connected", &a.send(&too_long).await);
    // Nothing went: the next datagram is the first one b sees.
    a.send(b"next").await?;
    let (n, bytes, _) = take(&b, 65_536, &a).await?;
    t.note(format!(
        "b got {n} bytes: {:?}",
        String::from_utf8_lossy(&bytes)
    ));
    Ok(t)
}

pub async fn send_on_an_unconnected_socket() -> io::Result<Transcript> {
    let mut t = Transcript::new();
    let a = socket().await?;
    t.see("send", &a.send(b"to whom?").await);
    t.see("try_send", &a.try_send(b"to whom?"));
    t.see("peer_addr", &a.peer_addr().map(|a| shape(&a)));
    Ok(t)
}

pub async fn connect_then_send_and_recv() -> io::Result<Transcript> {
    let mut t = Transcript::new();
    let (a, b) = (socket().await?, socket().await?);
    t.see("a connects to b", &a.connect(b.local_addr()?).await);
    t.see("b connects to a", &b.connect(a.local_addr()?).await);
    t.check("a's peer is b", a.peer_addr()? == b.local_addr()?);
    t.see("a sends", &a.send(b"ping").await);
    let mut buf = [0; 16];
    t.see("b recv", &b.recv(&mut buf).await);
    t.see("b sends", &b.send(b"pong!").await);
    t.see("a recv", &a.recv(&mut buf).await);
    t.note(format!("a got: {:?}", String::from_utf8_lossy(&buf[..5])));
    Ok(t)
}

pub async fn a_connected_socket_takes_only_its_peers_datagrams() -> io::Result<Transcript> {
    let mut t = Transcript::new();
    let (a, peer, stranger) = (socket().await?, socket().await?, socket().await?);
    a.connect(peer.local_addr()?).await?;
    t.see(
        "the stranger sends",
        &stranger.send_to(b"stranger", a.local_addr()?).await,
    );
    t.see(
        "the peer sends",
        &peer.send_to(b"peer", a.local_addr()?).await,
    );
    let mut buf = [0; 16];
    let got = a.recv_from(&mut buf).await?;
    t.note(format!(
        "a got {:?}, from the peer: {}",
        String::from_utf8_lossy(&buf[..got.0]),
        got.1 == peer.local_addr()?
    ));
    t.see("try_recv", &a.try_recv(&mut buf));
    Ok(t)
}

pub async fn connected_to_a_port_with_no_one() -> io::Result<Transcript> {
    let mut t = Transcript::new();
    let a = socket().await?;
    a.connect(nobody().await?).await?;
    let mut buf = [0; 16];
    for round in 1..=2 {
        t.see(&format!("send {round}"), &a.send(b"anyone?").await);
        t.see(&format!("recv {round}"), &a.recv(&mut buf).await);
    }
    t.see("try_recv", &a.try_recv(&mut buf));
    Ok(t)
}

pub async fn a_refusal_is_reported_to_the_next_send() -> io::Result<Transcript> {
    let mut t = Transcript::new();
    let a = socket().await?;
    a.connect(nobody().await?).await?;
    let mut buf = [0; 16];
    // Nothing queued: readiness is cleared, so that `readable` waits for
    // the refusal (and takes nothing from it).
    t.see("try_recv", &a.try_recv(&mut buf));
    t.see("send", &a.send(b"anyone?").await);
    t.see("readable", &a.readable().await);
    t.see("send again", &a.send(b"anyone?").await);
    t.see("try_recv", &a.try_recv(&mut buf));
    t.see("send once more", &a.send(b"anyone?").await);
    t.see("readable", &a.readable().await);
    t.see("recv", &a.recv(&mut buf).await);
    t.see("try_recv", &a.try_recv(&mut buf));
    Ok(t)
}

pub async fn an_unconnected_sender_ignores_refusals() -> io::Result<Transcript> {
    let mut t = Transcript::new();
    let (a, b) = (socket().await?, socket().await?);
    t.see(
        "send_to nobody",
        &a.send_to(b"anyone?", nobody().await?).await,
    );
    t.see("b sends to a", &b.send_to(b"hello", a.local_addr()?).await);
    let (n, bytes, from_b) = take(&a, 16, &b).await?;
    t.note(format!(
        "a got {n}: {:?}, from b: {from_b}",
        String::from_utf8_lossy(&bytes)
    ));
    t.see("send_to b", &a.send_to(b"hi", b.local_addr()?).await);
    Ok(t)
}

pub async fn recv_into_a_smaller_buffer_truncates() -> io::Result<Transcript> {
    let mut t = Transcript::new();
    let (a, b) = (socket().await?, socket().await?);
    a.send_to(&pattern(0, 100), b.local_addr()?).await?;
    a.send_to(&pattern(100, 50), b.local_addr()?).await?;
    let (n, bytes, _) = take(&b, 10, &a).await?;
    t.note(format!(
        "first: {n} bytes, its start: {}",
        bytes == pattern(0, 10)
    ));
    let (n, bytes, _) = take(&b, 64, &a).await?;
    t.note(format!(
        "second: {n} bytes, whole: {}",
        bytes == pattern(100, 50)
    ));
    Ok(t)
}

pub async fn recv_into_an_empty_buffer_takes_the_datagram() -> io::Result<Transcript> {
    let mut t = Transcript::new();
    let (a, b) = (socket().await?, socket().await?);
    a.send_to(b"abc", b.local_addr()?).await?;
    a.send_to(b"defg", b.local_addr()?).await?;
    let (n, _, from_a) = take(&b, 0, &a).await?;
    t.note(format!("first: {n} bytes, from a: {from_a}"));
    let (n, bytes, _) = take(&b, 16, &a).await?;
    t.note(format!(
        "second: {n} bytes: {:?}",
        String::from_utf8_lossy(&bytes)
    ));
    Ok(t)
}

pub async fn peek_from_leaves_the_datagram() -> io::Result<Transcript> {
    let mut t = Transcript::new();
    let (a, b) = (socket().await?, socket().await?);
    a.send_to(b"first", b.local_addr()?).await?;
    a.send_to(b"second", b.local_addr()?).await?;
    let mut buf = [0; 3];
    let (n, from) = b.peek_from(&mut buf).await?;
    t.note(format!(
        "peek_from 3: {n} {:?}, from a: {}",
        String::from_utf8_lossy(&buf),
        from == a.local_addr()?
    ));
    let (n, bytes, _) = take(&b, 16, &a).await?;
    t.note(format!(
        "recv_from: {n} {:?}",
        String::from_utf8_lossy(&bytes)
    ));
    let (n, bytes, _) = take(&b, 16, &a).await?;
    t.note(format!(
        "recv_from: {n} {:?}",
        String::from_utf8_lossy(&bytes)
    ));
    t.see("try_recv_from", &b.try_recv_from(&mut buf).map(|(n, _)| n));
    Ok(t)
}

pub async fn datagrams_arrive_in_order() -> io::Result<Transcript> {
    let mut t = Transcript::new();
    let (a, b) = (socket().await?, socket().await?);
    for i in 0..50u32 {
        a.send_to(&i.to_le_bytes(), b.local_addr()?).await?;
    }
    let mut order = Vec::new();
    let mut buf = [0; 4];
    for _ in 0..50 {
        b.recv_from(&mut buf).await?;
        order.push(u32::from_le_bytes(buf));
    }
    t.check(
        "all 50, in the order sent",
        order == (0..50).collect::<Vec<_>>(),
    );
    Ok(t)
}

pub async fn bind_to_an_address_in_use() -> io::Result<Transcript> {
    let mut t = Transcript::new();
    let a = socket().await?;
    t.see("bind", &UdpSocket::bind(a.local_addr()?).await.map(drop));
    Ok(t)
}

pub async fn bind_to_an_address_no_interface_has() -> io::Result<Transcript> {
    let mut t = Transcript::new();
    // TEST-NET-1 (RFC 5737): on no interface of any host.
    t.see("bind", &UdpSocket::bind("192.0.2.1:0").await.map(drop));
    Ok(t)
}

pub async fn a_burst_to_an_idle_socket_keeps_the_first() -> io::Result<Transcript> {
    const SENT: u32 = 1000;
    let mut t = Transcript::new();
    let (a, b, c) = (socket().await?, socket().await?, socket().await?);
    let mut datagram = vec![0; 1400];
    for i in 0..SENT {
        datagram[..4].copy_from_slice(&i.to_le_bytes());
        a.send_to(&datagram, b.local_addr()?).await?;
    }
    // Once a's next datagram has reached c, each of those before it has
    // reached b, or been dropped there.
    a.send_to(b"done", c.local_addr()?).await?;
    c.recv_from(&mut [0; 4]).await?;
    let mut kept = Vec::new();
    while b.try_recv_from(&mut datagram).is_ok() {
        kept.push(u32::from_le_bytes(datagram[..4].try_into().unwrap()));
    }
    let first = (0..kept.len() as u32).collect::<Vec<_>>();
    t.check("some were kept", !kept.is_empty());
    t.check("some were dropped", kept.len() < SENT as usize);
    t.check("those kept are the first ones, in order", kept == first);
    Ok(t)
}

pub async fn send_to_an_address_from_a_connected_socket() -> io::Result<Transcript> {
    let mut t = Transcript::new();
    let (a, b, c) = (socket().await?, socket().await?, socket().await?);
    a.connect(b.local_addr()?).await?;
    t.see("send_to c", &a.send_to(b"to c", c.local_addr()?).await);
    let (n, bytes, from_a) = take(&c, 16, &a).await?;
    t.note(format!(
        "c got {n}: {:?}, from a: {from_a}",
        String::from_utf8_lossy(&bytes)
    ));
    t.see("send", &a.send(b"to b").await);
    let (n, bytes, from_a) = take(&b, 16, &a).await?;
    t.note(format!(
        "b got {n}: {:?}, from a: {from_a}",
        String::from_utf8_lossy(&bytes)
    ));
    Ok(t)
}

pub async fn connect_to_another_peer() -> io::Result<Transcript> {
    let mut t = Transcript::new();
    let (a, b, c) = (socket().await?, socket().await?, socket().await?);
    a.connect(b.local_addr()?).await?;
    t.see("connect again, to c", &a.connect(c.local_addr()?).await);
    t.check("a's peer is c", a.peer_addr()? == c.local_addr()?);
    t.see("send", &a.send(b"to c").await);
    let (n, _, from_a) = take(&c, 16, &a).await?;
    t.note(format!("c got {n}, from a: {from_a}"));
    t.see("b sends to a", &b.send_to(b"from b", a.local_addr()?).await);
    t.see("c sends to a", &c.send_to(b"from c", a.local_addr()?).await);
    let mut buf = [0; 16];
    let n = a.recv(&mut buf).await?;
    t.note(format!("a got {:?}", String::from_utf8_lossy(&buf[..n])));
    Ok(t)
}

pub async fn a_socket_bound_to_the_unspecified_address() -> io::Result<Transcript> {
    let mut t = Transcript::new();
    let a = UdpSocket::bind("0.0.0.0:0").await?;
    let b = socket().await?;
    t.note(format!("a: {}", shape(&a.local_addr()?)));
    let port = a.local_addr()?.port();
    b.send_to(b"hi", ("127.0.0.1", port)).await?;
    let mut buf = [0; 4];
    let (n, from) = a.recv_from(&mut buf).await?;
    t.note(format!("a got {n}, from b: {}", from == b.local_addr()?));
    a.send_to(b"back", from).await?;
    let (n, from_a) = b.recv_from(&mut buf).await?;
    t.note(format!(
        "b got {n}, from a's port: {}, from {}",
        from_a.port() == port,
        shape(&from_a)
    ));
    Ok(t)
}

/// Sending to port 0 is refused at once, connected or not.
pub async fn send_to_port_0() -> io::Result<Transcript> {
    let mut t = Transcript::new();
    let a = socket().await?;
    let mut zero = a.local_addr()?;
    zero.set_port(0);
    t.see("send_to port 0", &a.send_to(b"x", zero).await);
    t.see("connect to port 0", &a.connect(zero).await);
    t.see("send", &a.send(b"x").await);
    Ok(t)
}

/// `recv` on a socket that is not connected takes a datagram from
/// anyone, and `send` there has no one to send to. (Datagrams of two
/// senders are compared as a set: the kernel's loopback delivers them in
/// the order sent, the simulation with a latency each, as between hosts;
/// the guide says so.)
pub async fn recv_on_an_unconnected_socket_takes_from_anyone() -> io::Result<Transcript> {
    let mut t = Transcript::new();
    let (a, b, c) = (socket().await?, socket().await?, socket().await?);
    b.send_to(b"from b", a.local_addr()?).await?;
    c.send_to(b"from c", a.local_addr()?).await?;
    let mut buf = [0; 16];
    let mut got = Vec::new();
    for _ in 0..2 {
        let n = a.recv(&mut buf).await?;
        got.push(String::from_utf8_lossy(&buf[..n]).into_owned());
    }
    got.sort();
    t.note(format!("recv, sorted: {got:?}"));
    t.see("send unconnected", &a.send(b"x").await);
    Ok(t)
}
