//! The streams over TCP on 127.0.0.1: 16 MiB to a slow peer arrives byte
//! for byte with the writer's buffer bounded, and a `read_line` dropped
//! mid-line by a timeout loses nothing.

use std::io::{self, Read, Write};
use std::net::TcpStream as StdStream;
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use io_unix::Fnv;
use io_writer::Rng;
use ioloop::io::{StreamReader, StreamWriter};
use ioloop::net::TcpListener;
use ioloop::time::timeout;
use testkit::{io_unix, io_writer, util};

const SAFETY: Duration = Duration::from_secs(60);
const TOTAL: usize = 16 << 20;
const CHUNK: usize = 64 * 1024;

#[test]
fn sixteen_mib_through_a_slow_tcp_peer_arrive_intact_with_bounded_memory() -> io::Result<()> {
    util::within(SAFETY, || {
        let data = Rng::new(7).bytes(TOTAL);
        let mut sent = Fnv::default();
        sent.update(&data);
        let (addr_tx, addr_rx) = mpsc::channel();
        let (start_tx, start_rx) = mpsc::channel::<()>();
        // The slow peer: connects, waits until the server has been pushed
        // back once, then reads in small pieces with pauses.
        let peer = thread::spawn(move || -> io::Result<(usize, Fnv)> {
            let mut s = StdStream::connect(addr_rx.recv().expect("address"))?;
            s.set_read_timeout(Some(SAFETY))?;
            let _ = start_rx.recv(); // if the server failed, read its EOF
            let (mut total, mut sum, mut piece) = (0, Fnv::default(), [0u8; 8192]);
            loop {
                let n = s.read(&mut piece)?;
                if n == 0 {
                    return Ok((total, sum));
                }
                total += n;
                sum.update(&piece[..n]);
                thread::sleep(Duration::from_micros(50));
            }
        });
        let pushed_back = ioloop::block_on(async move {
            let listener = TcpListener::bind("127.0.0.1:0").await?;
            addr_tx.send(listener.local_addr()?).expect("peer waits");
            let (stream, _) = listener.accept().await?;
            let mut writer = StreamWriter::new(&stream);
            let mut pushed_back = 0;
            let mut peak = 0;
            for chunk in data.chunks(CHUNK) {
                writer.write(chunk);
                peak = peak.max(writer.buffered());
                if writer.buffered() > 0 {
                    pushed_back += 1;
                    let _ = start_tx.send(());
                }
                writer.drain().await?;
                assert_eq!(writer.buffered(), 0, "drain sends everything by default");
            }
            writer.close().await?;
            // Memory: never more than one chunk queued, whatever the peer did.
            assert!(peak <= CHUNK, "peak {peak}");
            Ok::<_, io::Error>(pushed_back)
        })?;
        let (received, received_sum) = peer.join().expect("peer thread")?;
        assert_eq!(received, TOTAL);
        assert_eq!(received_sum, sent, "checksums differ");
        assert!(pushed_back > 0, "the slow peer never pushed back");
        Ok(())
    })
}

#[test]
fn read_line_dropped_mid_line_by_a_timeout_loses_nothing_over_tcp() -> io::Result<()> {
    util::within(SAFETY, || {
        let (addr_tx, addr_rx) = mpsc::channel();
        let (half_tx, half_rx) = mpsc::channel::<()>();
        let (rest_tx, rest_rx) = mpsc::channel::<()>();
        let client = thread::spawn(move || -> io::Result<()> {
            let mut s = StdStream::connect(addr_rx.recv().expect("address"))?;
            s.write_all(b"first half, ")?;
            let _ = half_tx.send(());
            let _ = rest_rx.recv(); // after the server's read timed out
            s.write_all(b"second half\nnext\n")
        });
        ioloop::block_on(async move {
            let listener = TcpListener::bind("127.0.0.1:0").await?;
            addr_tx.send(listener.local_addr()?).expect("client waits");
            let (stream, _) = listener.accept().await?;
            let mut reader = StreamReader::new(&stream);
            half_rx.recv().expect("client wrote");
            // The line cannot be complete yet: each read_line times out,
            // and is dropped, until the first half sits in the inbuf.
            while reader.buffer().len() < b"first half, ".len() {
                let cut = timeout(Duration::from_millis(20), reader.read_line()).await;
                assert!(cut.is_err(), "the line cannot be complete yet");
            }
            assert_eq!(reader.buffer(), b"first half, ");
            rest_tx.send(()).expect("client waits");
            let line = timeout(SAFETY, reader.read_line()).await??;
            assert_eq!(line, Some(&b"first half, second half"[..]));
            assert_eq!(reader.read_line().await?, Some(&b"next"[..]));
            assert_eq!(reader.read_line().await?, None);
            Ok::<_, io::Error>(())
        })?;
        client.join().expect("client thread")
    })
}

/// Bytes the kernel has received on the TCP socket `fd`, urgent data
/// included (`tcpi_bytes_received`). `FIONREAD` would not do: it stops at
/// the urgent mark.
fn received(fd: std::os::fd::RawFd) -> u64 {
    // SAFETY: tcp_info is plain data, valid when zeroed.
    let mut info: libc::tcp_info = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::tcp_info>() as libc::socklen_t;
    // SAFETY: `info` and `len` are valid and writable for the call, and
    // `len` says how much of `info` the kernel may fill.
    let rc = unsafe {
        libc::getsockopt(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            (&raw mut info).cast(),
            &mut len,
        )
    };
    assert_eq!(rc, 0, "TCP_INFO: {}", io::Error::last_os_error());
    info.tcpi_bytes_received
}

/// Item 4 of the correctness issue: `abc`, then `!` sent as urgent data
/// (`MSG_OOB`), then `def`, all queued before the reader looks. `recv`
/// stops at the urgent mark, so the first read is short with bytes still
/// queued; clearing readiness on that short read left the reader waiting
/// for an edge that never came.
#[test]
fn urgent_data_does_not_stall_the_reader() -> io::Result<()> {
    use futures_util::AsyncReadExt;
    use std::os::fd::AsRawFd;
    util::within(Duration::from_secs(10), || {
        ioloop::block_on(async {
            let listener = TcpListener::bind("127.0.0.1:0").await?;
            let mut peer = StdStream::connect(listener.local_addr()?)?;
            peer.set_nodelay(true)?;
            let (conn, _) = listener.accept().await?;
            let mut buf = [0u8; 64];
            // A first read finds nothing and waits: readiness is cleared,
            // as on a connection between two requests.
            let waiting = timeout(Duration::from_millis(1), (&conn).read(&mut buf)).await;
            assert!(waiting.is_err(), "nothing was sent yet");
            peer.write_all(b"abc")?;
            socket2::SockRef::from(&peer).send_out_of_band(b"!")?;
            peer.write_all(b"def")?;
            // All of it queued before the loop next polls the OS, so one
            // event reports it all.
            while received(conn.as_raw_fd()) < 7 {
                thread::yield_now();
            }
            let mut got = Vec::new();
            while got.len() < 6 {
                let n = (&conn).read(&mut buf).await?;
                assert!(n > 0, "end of stream after {got:?}");
                got.extend_from_slice(&buf[..n]);
            }
            // Urgent data is not inline: the `!` is not in the stream.
            assert_eq!(got, b"abcdef");
            Ok(())
        })
    })
}
