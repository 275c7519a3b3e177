//! Split streams: one task reads while another writes the same socket.

use std::io;

use futures_util::{AsyncReadExt, AsyncWriteExt};
use ioloop::net::{TcpListener, TcpStream};
use net_run::run;
use testkit::net_run;

/// More than the socket buffers hold on loopback, so the writer has to wait
/// for the reader: if the two did not run concurrently, neither would end.
const LEN: usize = 4 << 20;

fn pattern(i: usize) -> u8 {
    (i % 251) as u8
}

/// Echoes everything back through the halves of one borrowed stream,
/// until end of file.
async fn echo(stream: TcpStream) -> io::Result<u64> {
    let (reader, mut writer) = TcpStream::split(&stream);
    let copied = futures_util::io::copy(reader, &mut writer).await?;
    writer.close().await?;
    Ok(copied)
}

#[test]
fn owned_halves_in_two_tasks_move_data_both_ways() -> io::Result<()> {
    run(|| async {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let client = TcpStream::connect(listener.local_addr()?).await?;
        let (server, _) = listener.accept().await?;
        let server = ioloop::spawn(echo(server));

        let (mut reader, mut writer) = client.into_split();
        let writing = ioloop::spawn(async move {
            let data: Vec<u8> = (0..LEN).map(pattern).collect();
            for chunk in data.chunks(64 * 1024) {
                writer.write_all(chunk).await?;
            }
            Ok::<_, io::Error>(())
            // The write half drops here: the echo sees end of file.
        });
        let reading = ioloop::spawn(async move {
            let mut received = Vec::with_capacity(LEN);
            reader.read_to_end(&mut received).await?;
            Ok::<_, io::Error>(received)
        });

        writing.await.unwrap()?;
        let received = reading.await.unwrap()?;
        assert_eq!(server.await.unwrap()?, LEN as u64);
        assert_eq!(received.len(), LEN);
        let first_wrong = received
            .iter()
            .enumerate()
            .position(|(i, b)| *b != pattern(i));
        assert_eq!(first_wrong, None);
        Ok(())
    })
}

#[test]
fn borrowed_halves_read_and_write_concurrently_in_one_task() -> io::Result<()> {
    run(|| async {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let client = TcpStream::connect(listener.local_addr()?).await?;
        let (server, _) = listener.accept().await?;
        let server = ioloop::spawn(echo(server));

        let (mut reader, mut writer) = TcpStream::split(&client);
        let send = async {
            let data: Vec<u8> = (0..LEN).map(pattern).collect();
            writer.write_all(&data).await?;
            writer.close().await
        };
        let receive = async {
            let mut received = Vec::with_capacity(LEN);
            reader.read_to_end(&mut received).await?;
            Ok::<_, io::Error>(received)
        };
        let (sent, received) = futures_util::future::join(send, receive).await;
        sent?;
        let received = received?;
        assert_eq!(server.await.unwrap()?, LEN as u64);
        assert!(received.iter().enumerate().all(|(i, b)| *b == pattern(i)));
        assert_eq!(received.len(), LEN);
        Ok(())
    })
}
