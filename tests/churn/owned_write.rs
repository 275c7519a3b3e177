//! Issue 30: a large payload handed to `StreamWriter::write_owned` is
//! queued as it is and sent as the socket takes it, never copied whole;
//! `write` copies what the socket refuses. Counted by this binary's
//! allocator, over a peer that reads nothing until told to.

use std::io::{self, Read};
use std::time::Duration;

use ioloop::io::StreamWriter;
use ioloop::net::{TcpListener, TcpStream};
use testkit::account::{self, live_bytes};

const SIZE: usize = 32 << 20;

/// Writes a header, `SIZE` bytes (owned or copied), a trailer, and checks
/// the peer gets exactly those; returns how much the heap grew while the
/// payload was queued.
fn send_payload(owned: bool) -> io::Result<isize> {
    let rt = account::runtime()?;
    rt.block_on(async {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let client = TcpStream::connect(listener.local_addr()?).await?;
        let (server, _) = listener.accept().await?;
        let payload: Vec<u8> = (0..SIZE).map(|i| (i % 251) as u8).collect();
        let mut expected = b"$payload\r\n".to_vec();
        expected.extend_from_slice(&payload);
        expected.extend_from_slice(b"\r\n");
        let (go, wait) = std::sync::mpsc::channel::<()>();
        let mut peer =
            std::net::TcpStream::from(std::os::fd::AsFd::as_fd(&client).try_clone_to_owned()?);
        drop(client);
        peer.set_nonblocking(false)?;
        let n = expected.len();
        let reader = std::thread::spawn(move || {
            wait.recv().unwrap();
            let mut got = vec![0; n];
            peer.read_exact(&mut got).map(|()| got)
        });
        let mut writer = StreamWriter::new(&server);
        let before = live_bytes();
        writer.write(b"$payload\r\n");
        if owned {
            writer.write_owned(payload);
        } else {
            writer.write(&payload);
            drop(payload);
        }
        writer.write(b"\r\n");
        let grew = live_bytes() - before;
        // The peer reads nothing yet: most of the payload is still queued.
        assert!(writer.buffered() > SIZE / 2, "{}", writer.buffered());
        go.send(()).unwrap();
        ioloop::time::timeout(Duration::from_secs(60), writer.drain()).await??;
        let got = ioloop::spawn_blocking(move || reader.join().unwrap())
            .await
            .unwrap()?;
        assert!(got == expected, "bytes lost or out of order");
        Ok(grew)
    })
}

#[test]
fn write_owned_queues_a_large_payload_without_copying_it() -> io::Result<()> {
    let _serial = account::serial();
    let owned = testkit::util::within(Duration::from_secs(120), || send_payload(true))?;
    let copied = testkit::util::within(Duration::from_secs(120), || send_payload(false))?;
    // Copied: the refused part of 32 MiB. Owned: a box and a queue slot.
    assert!(
        copied > (SIZE / 2) as isize,
        "write copied only {copied} bytes?"
    );
    assert!(
        owned < 64 * 1024,
        "write_owned grew the heap by {owned} bytes"
    );
    Ok(())
}
