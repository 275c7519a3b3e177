//! Resets and vanished peers: the task talking to that peer gets an
//! `io::Error`, and everything else goes on. Shutting down or closing
//! after a reset is no error: there is nothing left to shut.

use std::io;
use std::net::Shutdown;

use futures_util::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use ioloop::io::StreamWriter;
use ioloop::net::{TcpListener, TcpStream};
use net_run::run;
use socket2::SockRef;
use testkit::net_run;

/// Closes `stream` with `SO_LINGER` 0: the kernel sends a reset instead of
/// an orderly end of file.
fn reset(stream: TcpStream) -> io::Result<()> {
    SockRef::from(&stream).set_linger(Some(std::time::Duration::ZERO))?;
    drop(stream);
    Ok(())
}

/// A client whose peer has reset the connection, the reset already seen
/// by a read: the kernel has processed it, so no race is left.
async fn reset_by_the_peer(listener: &TcpListener) -> io::Result<TcpStream> {
    let client = TcpStream::connect(listener.local_addr()?).await?;
    let (server, _) = listener.accept().await?;
    reset(server)?;
    read_until_the_reset(&client).await?;
    Ok(client)
}

/// Reads until `ConnectionReset`, or the end of stream reads give after it.
async fn read_until_the_reset(mut reader: impl AsyncRead + Unpin) -> io::Result<()> {
    let mut buf = [0; 64];
    loop {
        match reader.read(&mut buf).await {
            Ok(0) => return Ok(()),
            Ok(_) => {}
            Err(err) if err.kind() == io::ErrorKind::ConnectionReset => return Ok(()),
            Err(err) => return Err(err),
        }
    }
}

/// Echoes until end of file or an error, and returns which it was.
async fn echo(mut stream: TcpStream) -> io::Result<u64> {
    let mut buf = [0; 1024];
    let mut total = 0;
    loop {
        let n = stream.read(&mut buf).await?;
        if n == 0 {
            return Ok(total);
        }
        stream.write_all(&buf[..n]).await?;
        total += n as u64;
    }
}

fn is_gone(err: &io::Error) -> bool {
    matches!(
        err.kind(),
        io::ErrorKind::ConnectionReset | io::ErrorKind::BrokenPipe
    )
}

#[test]
fn a_reset_mid_stream_fails_that_task_and_the_server_keeps_serving() -> io::Result<()> {
    run(|| async {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;

        // Mid-stream: the echo has answered once, and a second message is
        // on its way when the client resets.
        let mut doomed = TcpStream::connect(addr).await?;
        let (stream, _) = listener.accept().await?;
        let handler = ioloop::spawn(echo(stream));
        doomed.write_all(b"first").await?;
        let mut buf = [0; 5];
        doomed.read_exact(&mut buf).await?;
        doomed.write_all(b"second").await?;
        reset(doomed)?;
        let err = handler.await.unwrap().unwrap_err();
        assert!(is_gone(&err), "the handler got {err:?}");

        // The listener, the loop and a new client are unaffected.
        let mut client = TcpStream::connect(addr).await?;
        let (stream, _) = listener.accept().await?;
        let handler = ioloop::spawn(echo(stream));
        client.write_all(b"still here").await?;
        let mut buf = [0; 10];
        client.read_exact(&mut buf).await?;
        assert_eq!(&buf, b"still here");
        client.close().await?;
        assert_eq!(handler.await.unwrap()?, 10);
        Ok(())
    })
}

#[test]
fn a_peer_reset_reaches_both_the_reader_and_the_writer() -> io::Result<()> {
    run(|| async {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let client = TcpStream::connect(listener.local_addr()?).await?;
        let (server, _) = listener.accept().await?;
        let (mut reader, mut writer) = client.into_split();
        // The reader waits first, so the reset has to wake it.
        let reading = ioloop::spawn(async move {
            let mut buf = [0; 16];
            reader.read(&mut buf).await
        });
        ioloop::yield_now().await;
        reset(server)?;
        let err = reading.await.unwrap().unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::ConnectionReset);
        let err = writer.write_all(b"anyone?").await.unwrap_err();
        assert!(is_gone(&err), "the writer got {err:?}");
        Ok(())
    })
}

#[test]
fn writing_to_a_peer_that_has_gone_is_an_error_not_a_crash() -> io::Result<()> {
    run(|| async {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let mut client = TcpStream::connect(listener.local_addr()?).await?;
        let (server, _) = listener.accept().await?;
        drop(server);
        // The first writes may still be accepted locally: the peer's reset
        // answers them. Keep writing until the error arrives.
        let err = loop {
            match client.write_all(&[7; 1024]).await {
                Ok(()) => ioloop::yield_now().await,
                Err(err) => break err,
            }
        };
        assert!(is_gone(&err), "got {err:?}");
        // And again: still an error, still no crash.
        let err = client.write_all(b"x").await.unwrap_err();
        assert!(is_gone(&err), "got {err:?}");
        Ok(())
    })
}

#[test]
fn a_gathered_write_that_meets_a_reset_fails_the_next_flush() -> io::Result<()> {
    run(|| async {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let client = reset_by_the_peer(&listener).await?;
        let mut writer = StreamWriter::new(&client);
        // Gathered: accepted at once, sent for the outbox when this poll
        // returns; that send meets the reset, its bytes are dropped and the
        // outbox keeps the error, with nothing queued.
        writer.write(b"anyone?");
        assert_eq!(writer.buffered(), 0);
        ioloop::yield_now().await;
        let err = writer.flush().await.unwrap_err();
        assert!(is_gone(&err), "the flush got {err:?}");
        Ok(())
    })
}

#[test]
fn shutdown_write_after_the_peer_reset_is_ok() -> io::Result<()> {
    run(|| async {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let client = reset_by_the_peer(&listener).await?;
        // Linux says NotConnected here: nothing the caller could act on.
        client.shutdown(Shutdown::Write)?;
        client.shutdown(Shutdown::Write)?;
        client.shutdown(Shutdown::Both)?;
        Ok(())
    })
}

#[test]
fn close_after_the_peer_reset_is_ok() -> io::Result<()> {
    run(|| async {
        let listener = TcpListener::bind("127.0.0.1:0").await?;

        let mut client = reset_by_the_peer(&listener).await?;
        AsyncWriteExt::close(&mut client).await?;

        let client = reset_by_the_peer(&listener).await?;
        let (_reader, mut writer) = TcpStream::split(&client);
        writer.close().await?;

        let (_reader, mut writer) = reset_by_the_peer(&listener).await?.into_split();
        writer.close().await?;

        let (_reader, writer) = reset_by_the_peer(&listener).await?.into_split();
        let mut writer = StreamWriter::new(writer);
        writer.close().await?;

        let mut writer = StreamWriter::new(reset_by_the_peer(&listener).await?);
        AsyncWriteExt::close(&mut writer).await?;
        Ok(())
    })
}
