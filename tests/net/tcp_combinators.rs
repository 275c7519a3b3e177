//! futures-util's combinators run over `TcpStream` as over any
//! `AsyncRead + AsyncWrite`: `io::copy`, `read_to_end`, `BufReader::lines`.

use std::io;

use futures_util::StreamExt;
use futures_util::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader, Cursor};
use ioloop::net::{TcpListener, TcpStream};
use net_run::run;
use testkit::net_run;

#[test]
fn copy_a_buffer_in_and_read_to_end_out() -> io::Result<()> {
    run(|| async {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let mut client = TcpStream::connect(listener.local_addr()?).await?;
        let (mut server, _) = listener.accept().await?;
        let data: Vec<u8> = (0..300_000u32).map(|i| (i * 7 % 256) as u8).collect();

        let sending = {
            let data = data.clone();
            ioloop::spawn(async move {
                let copied = futures_util::io::copy(Cursor::new(data), &mut client).await?;
                client.close().await?;
                Ok::<_, io::Error>(copied)
            })
        };
        let mut received = Vec::new();
        server.read_to_end(&mut received).await?;

        assert_eq!(sending.await.unwrap()?, data.len() as u64);
        assert_eq!(received, data);
        Ok(())
    })
}

#[test]
fn lines_over_a_buffered_stream() -> io::Result<()> {
    run(|| async {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let mut client = TcpStream::connect(listener.local_addr()?).await?;
        let (server, _) = listener.accept().await?;
        let sending = ioloop::spawn(async move {
            for i in 0..100 {
                client.write_all(format!("line {i}\n").as_bytes()).await?;
            }
            client.close().await
        });
        let lines: Vec<String> = BufReader::new(server)
            .lines()
            .map(|line| line.expect("a line"))
            .collect()
            .await;
        sending.await.unwrap()?;
        assert_eq!(lines.len(), 100);
        assert_eq!(lines[42], "line 42");
        Ok(())
    })
}
