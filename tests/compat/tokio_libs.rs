//! Libraries written against tokio's I/O traits, on ioloop's sockets
//! through `ioloop::compat::tokio::TokioIo` with no tokio runtime:
//! tokio-util's `Framed` with `LinesCodec` and `LengthDelimitedCodec`
//! (each at its length limit and on either side of it), and tokio-rustls.

#[path = "../../examples/tls_echo/tls.rs"]
mod tls;

use std::io;

use futures_util::{SinkExt, StreamExt};
use ioloop::compat::tokio::TokioIo;
use ioloop::net::{TcpListener, TcpStream};
use testkit::io_run;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_rustls::rustls::pki_types::ServerName;
use tokio_rustls::{TlsAcceptor, TlsConnector};
use tokio_util::bytes::Bytes;
use tokio_util::codec::{Framed, LengthDelimitedCodec, LinesCodec, LinesCodecError};

/// A connected pair on 127.0.0.1, each end a `TokioIo`.
async fn pair() -> io::Result<(TokioIo<TcpStream>, TokioIo<TcpStream>)> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let client = TcpStream::connect(listener.local_addr()?).await?;
    let (server, _) = listener.accept().await?;
    Ok((TokioIo::new(client), TokioIo::new(server)))
}

/// A server task answering each line with it upper-cased, over `Framed`
/// and `LinesCodec`: 1,000 lines there and back, in order; the client's
/// close ends the server's stream.
#[test]
fn framed_lines_echo_a_thousand_lines() -> io::Result<()> {
    io_run::run(|| async {
        let (client, server) = pair().await?;
        let server = ioloop::spawn(async move {
            let mut framed = Framed::new(server, LinesCodec::new());
            let mut count = 0usize;
            while let Some(line) = framed.next().await {
                framed
                    .send(line.map_err(io::Error::other)?.to_uppercase())
                    .await
                    .map_err(io::Error::other)?;
                count += 1;
            }
            io::Result::Ok(count)
        });
        let mut framed = Framed::new(client, LinesCodec::new());
        for i in 0..1000 {
            framed
                .send(format!("line {i}"))
                .await
                .map_err(io::Error::other)?;
            let echoed = framed
                .next()
                .await
                .expect("a reply")
                .map_err(io::Error::other)?;
            assert_eq!(echoed, format!("LINE {i}"));
        }
        framed.get_mut().shutdown().await?;
        assert!(
            framed.next().await.is_none(),
            "the server closed after the client"
        );
        assert_eq!(server.await.unwrap()?, 1000);
        Ok(())
    })
}

/// `LinesCodec::new_with_max_length(16)`: lines of 15 and 16 bytes pass, one
/// of 17 is an error the codec names, and `Framed` ends its stream after
/// an error (tokio-util's rule, kept over ioloop's socket).
#[test]
fn framed_lines_at_the_length_limit() -> io::Result<()> {
    io_run::run(|| async {
        let (mut client, server) = pair().await?;
        let mut framed = Framed::new(server, LinesCodec::new_with_max_length(16));
        let (fifteen, sixteen, seventeen) = ("a".repeat(15), "b".repeat(16), "c".repeat(17));
        client
            .write_all(format!("{fifteen}\n{sixteen}\n{seventeen}\nafter\n").as_bytes())
            .await?;
        client.flush().await?;
        assert_eq!(framed.next().await.unwrap().unwrap(), fifteen);
        assert_eq!(framed.next().await.unwrap().unwrap(), sixteen);
        match framed.next().await.unwrap() {
            Err(LinesCodecError::MaxLineLengthExceeded) => {}
            other => panic!("17 bytes against 16: {other:?}"),
        }
        assert!(framed.next().await.is_none(), "no frame after an error");
        Ok(())
    })
}

/// `LengthDelimitedCodec`: frames of 0, 1 and 64 KiB bytes round trip;
/// with a 1,024-byte limit, 1,023 and 1,024 pass and 1,025 is refused.
#[test]
fn framed_length_delimited_round_trips_and_keeps_its_limit() -> io::Result<()> {
    io_run::run(|| async {
        let (client, server) = pair().await?;
        let mut a = Framed::new(client, LengthDelimitedCodec::new());
        let mut b = Framed::new(server, LengthDelimitedCodec::new());
        for len in [0usize, 1, 64 * 1024] {
            let frame: Vec<u8> = (0..len).map(|i| (i % 253) as u8).collect();
            a.send(Bytes::from(frame.clone())).await?;
            let got = b.next().await.expect("a frame")?;
            assert_eq!(got.len(), len);
            assert!(got[..] == frame[..], "{len} bytes differ");
        }

        let (client, server) = pair().await?;
        let codec = || {
            LengthDelimitedCodec::builder()
                .max_frame_length(1024)
                .new_codec()
        };
        let mut a = Framed::new(client, LengthDelimitedCodec::new());
        let mut b = Framed::new(server, codec());
        for len in [1023usize, 1024] {
            a.send(Bytes::from(vec![7u8; len])).await?;
            assert_eq!(b.next().await.expect("a frame")?.len(), len);
        }
        a.send(Bytes::from(vec![7u8; 1025])).await?;
        let err = b
            .next()
            .await
            .expect("an error")
            .expect_err("over the limit");
        assert_eq!(err.kind(), io::ErrorKind::InvalidData);
        Ok(())
    })
}

/// tokio-rustls on `TokioIo`: the handshake against a fresh self-signed
/// certificate, 200 records of 4 KiB echoed byte for byte, and a
/// close_notify the server reads as the end of the stream.
#[test]
fn tokio_rustls_echoes_through_tls() -> io::Result<()> {
    let identity = tls::Identity::self_signed("localhost")?;
    let acceptor = TlsAcceptor::from(identity.server_config()?);
    let connector = TlsConnector::from(identity.client_config()?);
    io_run::run(move || async move {
        let (client, server) = pair().await?;
        let server = ioloop::spawn(async move {
            let mut tls = acceptor.accept(server).await?;
            let mut buf = vec![0; 8192];
            let mut echoed = 0usize;
            loop {
                let n = tls.read(&mut buf).await?;
                if n == 0 {
                    break;
                }
                tls.write_all(&buf[..n]).await?;
                tls.flush().await?;
                echoed += n;
            }
            tls.shutdown().await?;
            io::Result::Ok(echoed)
        });
        let name = ServerName::try_from("localhost").expect("a valid name");
        let mut tls = connector.connect(name, client).await?;
        for i in 0..200usize {
            let record: Vec<u8> = (0..4096).map(|j| ((i * 31 + j) % 256) as u8).collect();
            tls.write_all(&record).await?;
            tls.flush().await?;
            let mut got = vec![0; 4096];
            tls.read_exact(&mut got).await?;
            assert!(got == record, "record {i} differs");
        }
        tls.shutdown().await?;
        let mut rest = Vec::new();
        tls.read_to_end(&mut rest).await?;
        assert!(rest.is_empty());
        assert_eq!(server.await.unwrap()?, 200 * 4096);
        Ok(())
    })
}
