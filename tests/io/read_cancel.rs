//! Cancel safety: a `read_line`, `read_until` or `read_exact` future
//! dropped half-way (here, by `timeout`) loses nothing, and the next call
//! returns the whole record.

use std::io::{self, Write};
use std::time::Duration;

use io_reader::scripted;
use io_run::run;
use ioloop::io::StreamReader;
use ioloop::time::timeout;
use testkit::{io_reader, io_run, io_unix};

/// Long enough for the read to get what the peer has already sent; the
/// outcome does not depend on it, only how long the test waits.
const GIVE_UP: Duration = Duration::from_millis(20);

#[test]
fn read_line_dropped_mid_line_then_called_again_returns_the_whole_line() -> io::Result<()> {
    run(|| async {
        let (inner, feed) = scripted();
        let mut reader = StreamReader::new(inner);
        feed.push("hel");
        let first = timeout(GIVE_UP, reader.read_line()).await;
        assert!(first.is_err(), "no line yet, so the timeout fires");
        // The future is gone; the half line is still in the reader.
        assert_eq!(reader.buffer(), b"hel");
        feed.push("lo\r\nnext\n");
        assert_eq!(reader.read_line().await?, Some(&b"hello"[..]));
        assert_eq!(reader.read_line().await?, Some(&b"next"[..]));
        Ok(())
    })
}

#[test]
fn read_line_under_timeout_over_a_real_socket() -> io::Result<()> {
    run(|| async {
        let (ours, mut peer) = io_unix::pair()?;
        let mut reader = StreamReader::new(ours);
        peer.write_all(b"hel")?;
        assert!(timeout(GIVE_UP, reader.read_line()).await.is_err());
        // `write_all` finished before the read began, so the bytes were there.
        assert_eq!(reader.buffer(), b"hel");
        peer.write_all(b"lo\n")?;
        assert_eq!(reader.read_line().await?, Some(&b"hello"[..]));
        drop(peer);
        assert_eq!(reader.read_line().await?, None);
        Ok(())
    })
}

#[test]
fn many_timeouts_in_a_row_lose_nothing() -> io::Result<()> {
    run(|| async {
        let (inner, feed) = scripted();
        let mut reader = StreamReader::new(inner);
        let line = b"a line fed in pieces between timeouts";
        for piece in line.chunks(3) {
            feed.push(piece);
            let attempt = timeout(Duration::from_millis(1), reader.read_line()).await;
            assert!(attempt.is_err());
        }
        feed.push("\n");
        assert_eq!(reader.read_line().await?, Some(&line[..]));
        Ok(())
    })
}

#[test]
fn read_exact_dropped_half_way_keeps_what_it_gathered() -> io::Result<()> {
    run(|| async {
        let (inner, feed) = scripted();
        let mut reader = StreamReader::new(inner);
        feed.push("abc");
        assert!(timeout(GIVE_UP, reader.read_exact(5)).await.is_err());
        assert_eq!(reader.buffer(), b"abc");
        feed.push("de");
        assert_eq!(reader.read_exact(5).await?, b"abcde");
        Ok(())
    })
}

#[test]
fn read_until_dropped_then_read_line_searches_afresh() -> io::Result<()> {
    // The dropped search for ';' got through "ab\n"; the search for '\n'
    // must not trust that and skip it.
    run(|| async {
        let (inner, feed) = scripted();
        let mut reader = StreamReader::new(inner);
        feed.push("ab\n");
        assert!(timeout(GIVE_UP, reader.read_until(b';')).await.is_err());
        assert_eq!(reader.read_line().await?, Some(&b"ab"[..]));
        feed.push("x;");
        assert_eq!(reader.read_until(b';').await?, Some(&b"x;"[..]));
        Ok(())
    })
}

#[test]
fn an_overlong_line_being_skipped_survives_a_timeout() -> io::Result<()> {
    run(|| async {
        let (inner, feed) = scripted();
        let mut reader = StreamReader::new(inner);
        reader.set_max_line_length(10);
        feed.push(vec![b'x'; 50]);
        assert!(reader.read_line().await.is_err());
        // Still inside the overlong line when the timeout strikes.
        feed.push(vec![b'x'; 50]);
        assert!(timeout(GIVE_UP, reader.read_line()).await.is_err());
        feed.push("xx\nkept\n");
        assert_eq!(reader.read_line().await?, Some(&b"kept"[..]));
        Ok(())
    })
}
