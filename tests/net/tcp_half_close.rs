//! Half-close: a side that shuts down its write side can still read, and
//! its peer reads end of file after the last byte.

use std::io;
use std::net::Shutdown;

use futures_util::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt};
use ioloop::net::{TcpListener, TcpStream};
use net_run::run;
use testkit::net_run;

/// The server of these tests: reads lines until end of file, then answers
/// one reply per line and closes.
async fn answer_after_eof(stream: TcpStream) -> io::Result<usize> {
    let (reader, mut writer) = TcpStream::split(&stream);
    let mut lines = futures_util::io::BufReader::new(reader).lines();
    let mut received = Vec::new();
    while let Some(line) = futures_util::StreamExt::next(&mut lines).await {
        received.push(line?);
    }
    for line in &received {
        writer
            .write_all(format!("[echo] {line}\n").as_bytes())
            .await?;
    }
    Ok(received.len())
}

#[test]
fn client_shuts_down_writing_and_still_receives_every_reply() -> io::Result<()> {
    run(|| async {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let mut client = TcpStream::connect(listener.local_addr()?).await?;
        let (server, _) = listener.accept().await?;
        let server = ioloop::spawn(answer_after_eof(server));

        client.write_all(b"one\ntwo\nthree\n").await?;
        client.shutdown(Shutdown::Write)?;
        let mut replies = String::new();
        client.read_to_string(&mut replies).await?;

        assert_eq!(server.await.unwrap()?, 3);
        assert_eq!(replies, "[echo] one\n[echo] two\n[echo] three\n");
        // Our write side is gone for good.
        let err = client.write_all(b"more").await.unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::BrokenPipe);
        // Flushing or closing what is shut has nothing to do: no error.
        client.flush().await?;
        client.close().await?;
        Ok(())
    })
}

#[test]
fn closing_through_async_write_is_a_half_close_too() -> io::Result<()> {
    run(|| async {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let client = TcpStream::connect(listener.local_addr()?).await?;
        let (server, _) = listener.accept().await?;
        let server = ioloop::spawn(answer_after_eof(server));

        let (mut reader, mut writer) = client.into_split();
        writer.write_all(b"a\nb\n").await?;
        writer.close().await?; // poll_close: shutdown(Write)
        let mut replies = String::new();
        reader.read_to_string(&mut replies).await?;
        drop(writer); // already shut down: drop does not do it again

        assert_eq!(server.await.unwrap()?, 2);
        assert_eq!(replies, "[echo] a\n[echo] b\n");
        Ok(())
    })
}

#[test]
fn dropping_the_owned_write_half_sends_end_of_file() -> io::Result<()> {
    run(|| async {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let client = TcpStream::connect(listener.local_addr()?).await?;
        let (server, _) = listener.accept().await?;
        let server = ioloop::spawn(answer_after_eof(server));

        let (mut reader, mut writer) = client.into_split();
        writer.write_all(b"last words\n").await?;
        drop(writer);
        let mut replies = String::new();
        reader.read_to_string(&mut replies).await?;

        assert_eq!(server.await.unwrap()?, 1);
        assert_eq!(replies, "[echo] last words\n");
        Ok(())
    })
}
