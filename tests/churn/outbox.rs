//! Issue 30's outbox: a stream dropped with gathered bytes its peer has
//! not taken stays open until they are sent (its wakes hold it). That must
//! end: when the peer reads them, when the peer goes, or when the runtime
//! shuts down. Heap and descriptors come back each way.

use std::io::{self, Read};
use std::time::Duration;

use ioloop::io::StreamWriter;
use ioloop::net::{TcpListener, TcpSocket, TcpStream};
use testkit::account::{self, Held};
use testkit::util::within;

/// Streams per round.
const STREAMS: usize = 200;

/// What a round may leave: the runtime's tables settle a little.
const SLACK: isize = 64 * 1024;

/// How the peers of the dropped streams end.
#[derive(Clone, Copy, Debug)]
enum Peer {
    /// They read everything, then close.
    Reads,
    /// They close without reading.
    Goes,
    /// They stay open, reading nothing, until the runtime is dropped.
    Stays,
}

/// `STREAMS` server-side streams, each dropped right after writing more
/// than its kernel buffers hold in small gathered writes, with its peer
/// (a std socket) treated as `peer` says. Returns the peers still open.
fn round(peer: Peer) -> io::Result<Vec<std::net::TcpStream>> {
    let rt = account::runtime()?;
    let peers = rt.block_on(async {
        let socket = TcpSocket::new_v4()?;
        socket.set_recv_buffer_size(4096)?;
        socket.bind("127.0.0.1:0".parse().unwrap())?;
        let listener: TcpListener = socket.listen(1024)?;
        let addr = listener.local_addr()?;
        let mut peers = Vec::new();
        for _ in 0..STREAMS {
            let client = std::net::TcpStream::connect(addr)?;
            let (server, _) = listener.accept().await?;
            server.set_send_buffer_size(4096)?;
            let mut writer = StreamWriter::new(server);
            // Gathered until the kernel refuses, then the writer keeps the
            // rest; both are dropped here with bytes unsent.
            for _ in 0..4096 {
                writer.write(b"0123456789abcdef");
            }
            ioloop::yield_now().await; // the outbox is sent, in part
            drop(writer);
            peers.push(client);
        }
        match peer {
            Peer::Reads => {
                // Every byte the outbox held arrives, then the end of file.
                let peers = std::mem::take(&mut peers);
                ioloop::spawn_blocking(move || {
                    for mut client in peers {
                        let mut rest = Vec::new();
                        client.read_to_end(&mut rest).unwrap();
                        assert!(!rest.is_empty() && rest.len() % 16 == 0, "{}", rest.len());
                    }
                })
                .await
                .unwrap();
            }
            Peer::Goes => {
                peers.clear();
                // Time for the ends of file to reach the lingering streams,
                // whose next sends fail and let go (what is left when the
                // runtime drops is freed then, as with `Stays`).
                ioloop::time::sleep(Duration::from_millis(50)).await;
            }
            Peer::Stays => {}
        }
        io::Result::Ok(peers)
    })?;
    drop(rt);
    Ok(peers)
}

#[test]
fn streams_dropped_with_bytes_unsent_are_freed_however_their_peers_end() -> io::Result<()> {
    let _serial = account::serial();
    within(Duration::from_secs(120), || {
        for peer in [Peer::Reads, Peer::Goes, Peer::Stays] {
            round(peer)?; // warm up
            let before = Held::now();
            let open = round(peer)?;
            drop(open);
            before.assert_back(&format!("{peer:?}"), SLACK);
        }
        io::Result::Ok(())
    })
}

/// The stream kept open by its outbox is the same socket: a `TcpStream`
/// dropped mid-outbox does not leak its descriptor while the runtime runs
/// on, once its peer has read.
#[test]
fn a_lingering_stream_closes_once_its_peer_has_read() -> io::Result<()> {
    let _serial = account::serial();
    within(Duration::from_secs(60), || {
        let rt = account::runtime()?;
        rt.block_on(async {
            let listener = TcpListener::bind("127.0.0.1:0").await?;
            // The blocking pool's thread, which the read below needs, is
            // started first: it stays, idle, and is no stream's.
            ioloop::spawn_blocking(|| ()).await.unwrap();
            let before = Held::now();
            let client = std::net::TcpStream::connect(listener.local_addr()?)?;
            let (server, _): (TcpStream, _) = listener.accept().await?;
            let mut writer = StreamWriter::new(server);
            for _ in 0..65_536 {
                writer.write(b"0123456789abcdef");
            }
            ioloop::yield_now().await;
            drop(writer);
            let mut client = client;
            let got = ioloop::spawn_blocking(move || {
                let mut rest = Vec::new();
                client.read_to_end(&mut rest).map(|_| rest.len())
            })
            .await
            .unwrap()?;
            assert!(got > 0 && got % 16 == 0, "{got}");
            // The server's socket is closed: the client read end of file.
            before.assert_back("a lingering stream", SLACK);
            io::Result::Ok(())
        })
    })
}

/// An `OutBuf` sent empty keeps up to 64 KiB of capacity for the next
/// reply and gives a larger one back: its capacity at 64 KiB − 1, 64 KiB
/// and 64 KiB + 1 bytes (a first push of `n` bytes allocates exactly `n`),
/// measured as the heap bytes the send's end gives back.
#[test]
fn an_emptied_outbuf_keeps_64_kib_of_capacity_and_gives_back_more() {
    use std::task::{Context, Poll, Waker};

    use ioloop::io::OutBuf;

    let _serial = account::serial();
    let keep = 64 * 1024;
    for (len, gives_back) in [(keep - 1, false), (keep, false), (keep + 1, true)] {
        let mut outbuf = OutBuf::default();
        outbuf.push(&vec![7; len]);
        let mut peer = Vec::with_capacity(len);
        let before = account::live_bytes();
        let mut cx = Context::from_waker(Waker::noop());
        let sent = outbuf.poll_send_down_to(&mut cx, &mut peer, 0);
        assert!(matches!(sent, Poll::Ready(Ok(()))));
        assert!(outbuf.is_empty() && peer.len() == len);
        // Other threads of the binary may allocate meanwhile (it runs
        // under `cargo test` too): half the buffer tells the two apart.
        let given_back = before - account::live_bytes();
        let half = len as isize / 2;
        assert_eq!(
            given_back > half,
            gives_back,
            "{len} bytes: {given_back} given back"
        );
    }
}
