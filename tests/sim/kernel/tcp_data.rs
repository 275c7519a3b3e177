//! TCP scenarios: bytes both ways, short writes, peeking, half-closes and
//! shutdowns.

use std::io::{self, IoSliceMut};
use std::net::Shutdown;
use std::time::Duration;

use ioloop::io::{AsyncReadExt, AsyncWriteExt};

use super::{Transcript, pair, pattern, shape};

pub async fn echo_a_small_payload() -> io::Result<Transcript> {
    let mut t = Transcript::new();
    let (mut client, mut server) = pair().await?;
    client.write_all(b"hello").await?;
    let mut buf = [0; 5];
    server.read_exact(&mut buf).await?;
    server.write_all(&buf).await?;
    let mut back = [0; 5];
    t.see("read_exact", &client.read_exact(&mut back).await);
    t.note(format!("echo: {:?}", String::from_utf8_lossy(&back)));
    Ok(t)
}

pub async fn echo_a_large_payload() -> io::Result<Transcript> {
    const LEN: usize = 160 * 1024;
    let mut t = Transcript::new();
    let (client, server) = pair().await?;
    let echo = ioloop::spawn_local(async move {
        let (mut read, mut write) = server.into_split();
        let copied = ioloop::io::copy(&mut read, &mut write).await?;
        write.close().await?;
        Ok::<_, io::Error>(copied)
    });
    let (mut read, mut write) = client.into_split();
    let writer = ioloop::spawn_local(async move {
        write.write_all(&pattern(0, LEN)).await?;
        write.close().await
    });
    let mut back = Vec::new();
    t.see("read_to_end", &read.read_to_end(&mut back).await);
    t.see("writer", &writer.await.map_err(io::Error::other)?);
    t.see("server copied", &echo.await.map_err(io::Error::other)?);
    t.check("the echo is what was sent", back == pattern(0, LEN));
    Ok(t)
}

pub async fn partial_writes_under_a_full_buffer_lose_nothing() -> io::Result<Transcript> {
    const MORE: usize = 96 * 1024;
    let mut t = Transcript::new();
    let (client, mut server) = pair().await?;
    // The peer reads nothing: the buffers fill, and a write stops short.
    let mut sent = 0;
    let stopped = loop {
        match client.try_write(&pattern(sent, 64 * 1024)) {
            Ok(n) => sent += n,
            Err(err) => break err,
        }
    };
    t.see("try_write until it stops", &Err::<(), _>(stopped));
    t.check("something was taken first", sent > 0);
    let total = sent + MORE;
    let (_read, mut write) = client.into_split();
    let writer = ioloop::spawn_local(async move {
        write.write_all(&pattern(sent, MORE)).await?;
        write.close().await
    });
    let mut got = Vec::new();
    t.see(
        "read_to_end",
        &server.read_to_end(&mut got).await.map(|n| n == total),
    );
    t.see("writer", &writer.await.map_err(io::Error::other)?);
    t.check("every byte arrived, in order", got == pattern(0, total));
    Ok(t)
}

pub async fn many_small_writes_arrive_as_one_stream() -> io::Result<Transcript> {
    let mut t = Transcript::new();
    let (mut client, mut server) = pair().await?;
    let writer = ioloop::spawn_local(async move {
        for i in 0..1000 {
            client.write_all(&pattern(i * 7, 7)).await?;
        }
        client.close().await
    });
    let mut got = Vec::new();
    t.see("read_to_end", &server.read_to_end(&mut got).await);
    t.see("writer", &writer.await.map_err(io::Error::other)?);
    t.check("the bytes in order", got == pattern(0, 7000));
    Ok(t)
}

pub async fn zero_length_reads_and_writes() -> io::Result<Transcript> {
    let mut t = Transcript::new();
    let (mut client, mut server) = pair().await?;
    t.see("read into nothing", &client.read(&mut []).await);
    t.see("try_read into nothing", &client.try_read(&mut []));
    t.see("write nothing", &client.write(&[]).await);
    t.see("try_write nothing", &client.try_write(&[]));
    t.see("write_all nothing", &client.write_all(&[]).await);
    client.write_all(b"x").await?;
    client.close().await?;
    let mut got = Vec::new();
    t.see("the peer reads", &server.read_to_end(&mut got).await);
    t.note(format!("bytes: {got:?}"));
    t.see("read into nothing at the end", &server.read(&mut []).await);
    t.see(
        "try_read into nothing at the end",
        &server.try_read(&mut []),
    );
    Ok(t)
}

pub async fn peek_sees_what_the_next_read_takes() -> io::Result<Transcript> {
    let mut t = Transcript::new();
    let (mut client, mut server) = pair().await?;
    client.write_all(b"hello").await?;
    let mut one = [0; 1];
    t.see("peek 1 byte", &server.peek(&mut one).await);
    t.note(format!("peeked: {:?}", one[0] as char));
    t.see("peek 1 byte again", &server.peek(&mut one).await);
    let mut five = [0; 5];
    t.see("read_exact 5", &server.read_exact(&mut five).await);
    t.note(format!("read: {:?}", String::from_utf8_lossy(&five)));
    client.shutdown(Shutdown::Write)?;
    t.see("peek at the end", &server.peek(&mut five).await);
    t.see("read at the end", &server.read(&mut five).await);
    Ok(t)
}

pub async fn read_exact_cut_short_by_the_end() -> io::Result<Transcript> {
    let mut t = Transcript::new();
    let (mut client, mut server) = pair().await?;
    client.write_all(b"abc").await?;
    drop(client);
    let mut buf = [0; 5];
    t.see("read_exact 5 of 3", &server.read_exact(&mut buf).await);
    t.see("read after", &server.read(&mut buf).await);
    Ok(t)
}

pub async fn the_client_half_closes_first() -> io::Result<Transcript> {
    let mut t = Transcript::new();
    let (mut client, mut server) = pair().await?;
    client.write_all(b"request").await?;
    t.see("client shutdown(Write)", &client.shutdown(Shutdown::Write));
    let mut got = Vec::new();
    t.see("server read_to_end", &server.read_to_end(&mut got).await);
    t.note(format!("server got: {:?}", String::from_utf8_lossy(&got)));
    t.see("client writes after", &client.write(b"more").await);
    t.see("server writes", &server.write_all(b"reply").await);
    drop(server);
    got.clear();
    t.see("client read_to_end", &client.read_to_end(&mut got).await);
    t.note(format!("client got: {:?}", String::from_utf8_lossy(&got)));
    t.see("client peer_addr", &client.peer_addr().map(|a| shape(&a)));
    Ok(t)
}

pub async fn the_server_half_closes_first() -> io::Result<Transcript> {
    let mut t = Transcript::new();
    let (mut client, mut server) = pair().await?;
    server.write_all(b"greeting").await?;
    t.see("server close", &server.close().await);
    let mut got = Vec::new();
    t.see("client read_to_end", &client.read_to_end(&mut got).await);
    t.note(format!("client got: {:?}", String::from_utf8_lossy(&got)));
    t.see("server writes after", &server.write(b"more").await);
    t.see("client writes", &client.write_all(b"thanks").await);
    t.see("client close", &client.close().await);
    got.clear();
    t.see("server read_to_end", &server.read_to_end(&mut got).await);
    t.note(format!("server got: {:?}", String::from_utf8_lossy(&got)));
    Ok(t)
}

pub async fn the_end_of_stream_reads_zero_again_and_again() -> io::Result<Transcript> {
    let mut t = Transcript::new();
    let (client, mut server) = pair().await?;
    drop(client);
    let mut buf = [0; 8];
    for _ in 0..3 {
        t.see("read", &server.read(&mut buf).await);
    }
    t.see("try_read", &server.try_read(&mut buf));
    t.see("peek", &server.peek(&mut buf).await);
    t.see("readable", &server.readable().await);
    t.see("read", &server.read(&mut buf).await);
    Ok(t)
}

pub async fn shutdown_twice() -> io::Result<Transcript> {
    let mut t = Transcript::new();
    let (client, mut server) = pair().await?;
    t.see("shutdown(Write)", &client.shutdown(Shutdown::Write));
    t.see("shutdown(Write) again", &client.shutdown(Shutdown::Write));
    t.see("shutdown(Read)", &client.shutdown(Shutdown::Read));
    t.see("shutdown(Both)", &client.shutdown(Shutdown::Both));
    let mut got = Vec::new();
    t.see(
        "the peer reads to its end",
        &server.read_to_end(&mut got).await,
    );
    Ok(t)
}

pub async fn shutdown_read_then_read() -> io::Result<Transcript> {
    let mut t = Transcript::new();
    let (_client, mut server) = pair().await?;
    t.see("shutdown(Read)", &server.shutdown(Shutdown::Read));
    let mut buf = [0; 8];
    t.see("read", &server.read(&mut buf).await);
    t.see("read again", &server.read(&mut buf).await);
    t.see("try_read", &server.try_read(&mut buf));
    Ok(t)
}

pub async fn shutdown_both_then_read_and_write() -> io::Result<Transcript> {
    let mut t = Transcript::new();
    let (mut client, mut server) = pair().await?;
    t.see("shutdown(Both)", &client.shutdown(Shutdown::Both));
    let mut buf = [0; 8];
    t.see("read", &client.read(&mut buf).await);
    t.see("write", &client.write(b"x").await);
    t.see("try_write", &client.try_write(b"x"));
    t.see("the peer reads", &server.read(&mut buf).await);
    Ok(t)
}

pub async fn shutdown_after_both_ends_closed() -> io::Result<Transcript> {
    let mut t = Transcript::new();
    let (mut client, mut server) = pair().await?;
    t.see("client shutdown(Write)", &client.shutdown(Shutdown::Write));
    let mut got = Vec::new();
    t.see("server read_to_end", &server.read_to_end(&mut got).await);
    t.see("server shutdown(Write)", &server.shutdown(Shutdown::Write));
    t.see("client read_to_end", &client.read_to_end(&mut got).await);
    t.see(
        "client shutdown(Write) again",
        &client.shutdown(Shutdown::Write),
    );
    t.see("client peer_addr", &client.peer_addr().map(|a| shape(&a)));
    t.see("client local_addr", &client.local_addr().map(|a| shape(&a)));
    t.see("client write", &client.write(b"x").await);
    Ok(t)
}

/// `write_vectored` with 1, 3, 1,024, 1,025 and 2,000 slices of 7 bytes:
/// each call takes something, never more than 1,024 slices' worth (the
/// kernel's `IOV_MAX`), and the bytes of every call arrive whole and in
/// order.
pub async fn vectored_writes_of_1_to_2000_slices_arrive_in_order() -> io::Result<Transcript> {
    const SLICE: usize = 7;
    const COUNTS: [usize; 5] = [1, 3, 1024, 1025, 2000];
    let mut t = Transcript::new();
    let (client, mut server) = pair().await?;
    let total: usize = COUNTS.iter().map(|n| n * SLICE).sum();
    let reader = ioloop::spawn_local(async move {
        let mut got = Vec::new();
        server.read_to_end(&mut got).await?;
        Ok::<_, io::Error>(got)
    });
    let (_read, mut write) = client.into_split();
    let mut sent = 0;
    for count in COUNTS {
        let bytes = pattern(sent, count * SLICE);
        let mut done = 0;
        let mut first = None;
        while done < bytes.len() {
            let slices: Vec<_> = bytes[done..].chunks(SLICE).map(io::IoSlice::new).collect();
            let n = write.write_vectored(&slices).await?;
            first.get_or_insert(n);
            done += n;
        }
        let first = first.unwrap_or(0);
        t.check(
            &format!("the first write of {count} slices took some, at most 1,024 slices"),
            first > 0 && first <= 1024 * SLICE,
        );
        sent += done;
    }
    write.close().await?;
    let got = reader.await.map_err(io::Error::other)??;
    t.check("every byte arrived, in order", got == pattern(0, total));
    Ok(t)
}

/// A reader that takes one byte at a time, and one that asks for far
/// more than is there, each get the stream whole and then its end.
pub async fn reads_of_one_byte_and_of_a_megabyte_take_the_stream_whole() -> io::Result<Transcript> {
    let mut t = Transcript::new();
    for size in [1, 1 << 20] {
        let (mut client, mut server) = pair().await?;
        let writer = ioloop::spawn_local(async move {
            client.write_all(&pattern(0, 3000)).await?;
            client.close().await
        });
        let mut got = Vec::new();
        let mut buf = vec![0; size];
        let mut reads = 0;
        loop {
            let n = server.read(&mut buf).await?;
            if n == 0 {
                break;
            }
            reads += 1;
            got.extend_from_slice(&buf[..n]);
        }
        t.see("writer", &writer.await.map_err(io::Error::other)?);
        t.check(
            &format!("reads of {size}: the bytes in order"),
            got == pattern(0, 3000),
        );
        t.check(
            &format!("reads of {size}: one read per byte, or at most as many as bytes"),
            if size == 1 {
                reads == 3000
            } else {
                reads <= 3000
            },
        );
        t.see("read after the end", &server.read(&mut buf).await);
    }
    Ok(t)
}

pub async fn a_vectored_read_skips_empty_buffers() -> io::Result<Transcript> {
    let mut t = Transcript::new();
    let (mut client, server) = pair().await?;
    client.write_all(b"abcd").await?;
    // Until the four bytes are all there (a simulated segment may cut them).
    while server.peek(&mut [0; 4]).await? < 4 {
        ioloop::time::sleep(Duration::from_millis(1)).await;
    }
    let (mut empty, mut four) = ([0u8; 0], [0u8; 4]);
    let bufs = &mut [IoSliceMut::new(&mut empty), IoSliceMut::new(&mut four)];
    t.see("try_read_vectored", &server.try_read_vectored(bufs));
    t.note(format!("got: {four:?}"));
    let only_empty = &mut [IoSliceMut::new(&mut empty)];
    t.see(
        "into an empty buffer alone",
        &server.try_read_vectored(only_empty),
    );
    Ok(t)
}
