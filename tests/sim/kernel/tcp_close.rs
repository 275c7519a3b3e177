//! TCP scenarios: closes, resets, and writes to a peer that has gone.

use std::io;

use ioloop::io::{AsyncReadExt, AsyncWriteExt};

use super::{Transcript, pair, pattern, shape};

pub async fn close_with_unread_bytes_resets_a_waiting_reader() -> io::Result<Transcript> {
    let mut t = Transcript::new();
    let (mut client, server) = pair().await?;
    client.write_all(b"unread").await?;
    let closer = ioloop::spawn_local(async move {
        // The bytes are there, unread: closing now is a reset.
        server.peek(&mut [0; 1]).await?;
        drop(server);
        Ok::<_, io::Error>(())
    });
    let mut buf = [0; 8];
    t.see("read", &client.read(&mut buf).await);
    t.see("read again", &client.read(&mut buf).await);
    t.see("peer_addr", &client.peer_addr().map(|a| shape(&a)));
    t.see("local_addr", &client.local_addr().map(|a| shape(&a)));
    t.see("closer", &closer.await.map_err(io::Error::other)?);
    Ok(t)
}

pub async fn close_with_unread_bytes_resets_the_writer() -> io::Result<Transcript> {
    let mut t = Transcript::new();
    let (mut client, server) = pair().await?;
    client.write_all(b"unread").await?;
    // Nothing to read yet: the client's readiness is cleared, so that
    // `readable` below waits for the reset (and takes nothing from it).
    t.see("try_read", &client.try_read(&mut [0; 8]));
    server.peek(&mut [0; 1]).await?;
    drop(server);
    t.see("readable", &client.readable().await);
    t.see("write", &client.write(b"x").await);
    t.see("write again", &client.write(b"x").await);
    t.see("try_write", &client.try_write(b"x"));
    let mut buf = [0; 8];
    t.see("read", &client.read(&mut buf).await);
    Ok(t)
}

pub async fn bytes_sent_before_a_reset_are_read_first() -> io::Result<Transcript> {
    let mut t = Transcript::new();
    let (mut client, mut server) = pair().await?;
    server.write_all(b"last words").await?;
    client.write_all(b"?").await?;
    server.peek(&mut [0; 1]).await?;
    drop(server);
    let mut buf = [0; 10];
    t.see("read_exact 10", &client.read_exact(&mut buf).await);
    t.note(format!("got: {:?}", String::from_utf8_lossy(&buf)));
    t.see("read", &client.read(&mut buf).await);
    t.see("read again", &client.read(&mut buf).await);
    Ok(t)
}

pub async fn write_after_the_peer_closed() -> io::Result<Transcript> {
    let mut t = Transcript::new();
    let (client, mut server) = pair().await?;
    drop(client);
    let mut buf = [0; 8];
    t.see("read", &server.read(&mut buf).await);
    // The first write is taken; the closed socket answers it with a reset,
    // which a later write reports.
    t.see("write", &server.write(b"x").await);
    let failed = loop {
        if let Err(err) = server.write(b"x").await {
            break err;
        }
    };
    t.see("writes until one fails", &Err::<(), _>(failed));
    t.see("write again", &server.write(b"x").await);
    t.see("read", &server.read(&mut buf).await);
    t.see("peer_addr", &server.peer_addr().map(|a| shape(&a)));
    Ok(t)
}

pub async fn a_writer_blocked_on_a_full_buffer_sees_the_reset() -> io::Result<Transcript> {
    let mut t = Transcript::new();
    let (client, server) = pair().await?;
    let (_read, mut write) = client.into_split();
    let writer = ioloop::spawn_local(async move {
        let chunk = pattern(0, 64 * 1024);
        let failed = loop {
            if let Err(err) = write.write_all(&chunk).await {
                break err;
            }
        };
        (Err::<(), _>(failed), write.write_all(b"x").await)
    });
    // Something arrived, unread: closing is a reset, and the writer,
    // waiting for room the peer will never make, hears of it.
    server.peek(&mut [0; 1]).await?;
    drop(server);
    let (sent, again) = writer.await.map_err(io::Error::other)?;
    t.see("write_all until one fails", &sent);
    t.see("write_all again", &again);
    Ok(t)
}

pub async fn a_close_with_queued_bytes_still_delivers_them() -> io::Result<Transcript> {
    const LEN: usize = 128 * 1024;
    let mut t = Transcript::new();
    let (mut client, mut server) = pair().await?;
    let writer = ioloop::spawn_local(async move {
        client.write_all(&pattern(0, LEN)).await?;
        // Closed at once, the bytes still queued in the kernel.
        drop(client);
        Ok::<_, io::Error>(())
    });
    let mut got = Vec::new();
    t.see("read_to_end", &server.read_to_end(&mut got).await);
    t.see("writer", &writer.await.map_err(io::Error::other)?);
    t.check("every byte, then the end", got == pattern(0, LEN));
    Ok(t)
}

pub async fn dropping_the_write_half_ends_the_stream() -> io::Result<Transcript> {
    let mut t = Transcript::new();
    let (client, mut server) = pair().await?;
    let (mut read, mut write) = client.into_split();
    write.write_all(b"half").await?;
    drop(write);
    let mut got = Vec::new();
    t.see("server read_to_end", &server.read_to_end(&mut got).await);
    t.note(format!("server got: {:?}", String::from_utf8_lossy(&got)));
    t.see("server writes", &server.write_all(b"still here").await);
    drop(server);
    got.clear();
    t.see(
        "client read half reads to its end",
        &read.read_to_end(&mut got).await,
    );
    t.note(format!("client got: {:?}", String::from_utf8_lossy(&got)));
    Ok(t)
}
