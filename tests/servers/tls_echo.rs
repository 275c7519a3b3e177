//! `tls_echo` (examples/tls_echo): futures-rustls on ioloop's sockets with
//! no glue. Client and server in one process, on one loop: the handshake
//! against the server's fresh self-signed certificate, the greeting, 1,000
//! lines of 1 KiB each echoed byte for byte, and a clean close.

#[path = "../../examples/tls_echo/serve.rs"]
mod serve;
#[path = "../../examples/tls_echo/tls.rs"]
mod tls;

use std::io;
use std::sync::mpsc;
use std::time::Duration;

use futures_rustls::rustls::pki_types::ServerName;
use futures_util::io::AsyncReadExt;
use ioloop::io::{StreamReader, StreamWriter};
use ioloop::net::{TcpListener, TcpStream};
use ioloop::time::timeout;

/// Safety net against a hang; never what the test measures.
const SAFETY: Duration = Duration::from_secs(60);
const LINES: usize = 1000;

#[test]
fn lines_echo_through_tls_byte_for_byte() -> io::Result<()> {
    let identity = tls::Identity::self_signed("localhost")?;
    let (ends_tx, ends) = mpsc::channel();
    ioloop::block_on(timeout(SAFETY, async {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let acceptor = identity.acceptor()?;
        let on_end = move |_, end: &serve::End| {
            let _ = ends_tx.send(end.to_string());
        };
        drop(ioloop::spawn_local(serve::serve(
            listener, acceptor, on_end,
        )));

        let tcp = TcpStream::connect(addr).await?;
        let name = ServerName::try_from("localhost").expect("a valid name");
        let tls = identity.connector()?.connect(name, tcp).await?;
        let (read_half, write_half) = tls.split();
        let mut reader = StreamReader::new(read_half);
        let mut writer = StreamWriter::new(write_half);
        assert_eq!(reader.read_line().await?, Some(&b"Hello!"[..]));
        for i in 0..LINES {
            // 1 KiB, different on every line, and its newline: one write,
            // one TLS record (two small segments would meet Nagle).
            let mut line: Vec<u8> = (0..1024).map(|j| b'a' + ((i * 7 + j) % 26) as u8).collect();
            line.push(b'\n');
            writer.write(&line);
            writer.drain().await?;
            let echoed = reader.read_line().await?.expect("an echo");
            assert_eq!(&echoed[..7], b"[echo] ");
            assert_eq!(&echoed[7..], &line[..1024], "line {i}");
        }
        writer.close().await?;
        assert_eq!(
            reader.read_line().await?,
            None,
            "the server closed after us"
        );
        Ok::<_, io::Error>(())
    }))
    .expect("the TLS conversation hung")?;
    let end = ends
        .recv_timeout(SAFETY)
        .expect("the server reported the end");
    assert_eq!(end, format!("closed after {LINES} line(s)"));
    Ok(())
}
