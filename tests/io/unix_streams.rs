//! The streams over a real socket (a Unix socket pair through the reactor):
//! 16 MiB to a slow reader arrives intact with the writer's buffer bounded,
//! a line trickling in byte by byte is framed whole, and a combinator reads
//! the rest of a stream after `read_line`.

use std::io::{self, Read, Write};
use std::os::unix::net::UnixStream;
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use futures_util::io::AsyncReadExt;
use io_unix::Fnv;
use io_writer::Rng;
use ioloop::io::{StreamReader, StreamWriter};
use testkit::{io_unix, io_writer, util};

/// Safety net against a hang; never what the test measures.
const SAFETY: Duration = Duration::from_secs(60);

const TOTAL: usize = 16 << 20;
const CHUNK: usize = 64 * 1024;

/// Waits for `start`, then reads to end of stream in small pieces with
/// short pauses, like a slow client; returns how many bytes came and their
/// checksum.
fn slow_reader(mut peer: UnixStream, start: mpsc::Receiver<()>) -> io::Result<(usize, Fnv)> {
    // If the writer is gone without a word, read anyway: its error is the news.
    let _ = start.recv();
    let mut piece = [0; 16 * 1024];
    let (mut total, mut sum) = (0, Fnv::default());
    loop {
        let n = peer.read(&mut piece)?;
        if n == 0 {
            return Ok((total, sum));
        }
        total += n;
        sum.update(&piece[..n]);
        thread::sleep(Duration::from_micros(100));
    }
}

/// Sends 16 MiB of random bytes in 64 KiB writes, draining after each, with
/// the given limits; checks the writer's buffer after every step.
///
/// The peer starts reading only once a write has been refused in part, so
/// the socket buffer is sure to fill and `drain` sure to wait, whatever the
/// relative speed of the two threads.
fn sixteen_mib_to_a_slow_reader(high: usize, low: usize) -> io::Result<()> {
    util::within(SAFETY, move || {
        let (ours, peer) = io_unix::pair_unregistered()?;
        let (start, started) = mpsc::channel();
        let reader = thread::spawn(move || slow_reader(peer, started));
        let data = Rng::new(16).bytes(TOTAL);
        let mut sent = Fnv::default();
        sent.update(&data);
        let refused = ioloop::block_on(async move {
            let mut writer = StreamWriter::new(io_unix::register(ours)?);
            writer.set_write_buffer_limits(high, low);
            let mut refused = 0;
            for chunk in data.chunks(CHUNK) {
                writer.write(chunk);
                assert!(writer.buffered() <= high + CHUNK, "{}", writer.buffered());
                if writer.buffered() > 0 {
                    refused += 1;
                    // Ignored: the reader never hangs up before it is told.
                    let _ = start.send(());
                }
                writer.drain().await?;
                assert!(writer.buffered() <= high, "{}", writer.buffered());
            }
            writer.close().await?;
            assert_eq!(writer.buffered(), 0);
            Ok::<_, io::Error>(refused)
        })?;
        let (received, received_sum) = reader.join().expect("reader thread")?;
        assert_eq!(received, TOTAL);
        assert_eq!(received_sum, sent, "checksums differ");
        assert!(refused > 0, "the peer never pushed back");
        Ok(())
    })
}

#[test]
fn sixteen_mib_to_a_slow_reader_with_the_default_limits() -> io::Result<()> {
    sixteen_mib_to_a_slow_reader(0, 0)
}

#[test]
fn sixteen_mib_to_a_slow_reader_with_streaming_limits() -> io::Result<()> {
    sixteen_mib_to_a_slow_reader(256 * 1024, 64 * 1024)
}

#[test]
fn a_line_trickling_in_one_byte_at_a_time() -> io::Result<()> {
    util::within(SAFETY, || {
        let (ours, mut peer) = io_unix::pair_unregistered()?;
        let writer = thread::spawn(move || -> io::Result<()> {
            for &b in b"slow line\r\n" {
                peer.write_all(&[b])?;
                // A pause so each byte arrives, and is read, on its own.
                thread::sleep(Duration::from_millis(2));
            }
            peer.write_all(b"second\n")
        });
        ioloop::block_on(async {
            let mut reader = StreamReader::new(io_unix::register(ours)?);
            assert_eq!(reader.read_line().await?, Some(&b"slow line"[..]));
            assert_eq!(reader.read_line().await?, Some(&b"second"[..]));
            assert_eq!(reader.read_line().await?, None);
            Ok::<_, io::Error>(())
        })?;
        writer.join().expect("writer thread")
    })
}

#[test]
fn read_to_end_over_a_socket_after_a_header_line() -> io::Result<()> {
    util::within(SAFETY, || {
        let (ours, mut peer) = io_unix::pair_unregistered()?;
        let body = Rng::new(3).bytes(1 << 20);
        let expected = body.clone();
        let writer = thread::spawn(move || -> io::Result<()> {
            peer.write_all(b"LENGTH 1048576\n")?;
            peer.write_all(&body)
        });
        let got = ioloop::block_on(async {
            let mut reader = StreamReader::new(io_unix::register(ours)?);
            assert_eq!(reader.read_line().await?, Some(&b"LENGTH 1048576"[..]));
            let mut rest = Vec::new();
            reader.read_to_end(&mut rest).await?;
            Ok::<_, io::Error>(rest)
        })?;
        writer.join().expect("writer thread")?;
        assert!(got == expected, "the body differs");
        Ok(())
    })
}

#[test]
fn an_echo_of_lines_through_both_streams() -> io::Result<()> {
    // The lesson's LineEchoServer's loop, over one socket: read a line,
    // write the reply, drain.
    util::within(SAFETY, || {
        let (ours, mut peer) = io_unix::pair_unregistered()?;
        let client = thread::spawn(move || -> io::Result<Vec<u8>> {
            let lines: String = (0..1000).map(|i| format!("msg {i}\n")).collect();
            peer.write_all(lines.as_bytes())?;
            peer.shutdown(std::net::Shutdown::Write)?;
            let mut replies = Vec::new();
            peer.read_to_end(&mut replies)?;
            Ok(replies)
        });
        ioloop::block_on(async {
            // One socket, read and written through `&`, as `&TcpStream` is.
            let stream = io_unix::register(ours)?;
            let (mut reader, mut writer) = (StreamReader::new(&stream), StreamWriter::new(&stream));
            writer.write(b"Hello!\n");
            while let Some(line) = reader.read_line().await? {
                writer.write(b"[echo] ");
                writer.write(line);
                writer.write(b"\n");
                writer.drain().await?;
            }
            writer.close().await
        })?;
        let replies = client.join().expect("client thread")?;
        let expected: String = std::iter::once("Hello!\n".to_string())
            .chain((0..1000).map(|i| format!("[echo] msg {i}\n")))
            .collect();
        assert_eq!(String::from_utf8_lossy(&replies), expected);
        Ok(())
    })
}
