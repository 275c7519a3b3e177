//! `read_until` and `read_exact`: delimited records and exact-size frames,
//! mixed freely with `read_line` on the same buffer.

use std::io;

use io_reader::{Step, chunks, scripted};
use io_run::run;
use ioloop::io::StreamReader;
use testkit::{io_reader, io_run};

#[test]
fn read_until_keeps_the_delimiter_and_ends_after_the_last_one() -> io::Result<()> {
    run(|| async {
        let (inner, _) = chunks(["a\0b", "c\0", "\0"]);
        let mut reader = StreamReader::new(inner);
        assert_eq!(reader.read_until(0).await?, Some(&b"a\0"[..]));
        assert_eq!(reader.read_until(0).await?, Some(&b"bc\0"[..]));
        assert_eq!(reader.read_until(0).await?, Some(&b"\0"[..]));
        assert_eq!(reader.read_until(0).await?, None);
        Ok(())
    })
}

#[test]
fn read_until_at_end_of_stream_with_a_partial_record_is_unexpected_eof() -> io::Result<()> {
    run(|| async {
        let (inner, _) = chunks(["a;b", "c;", "ta", "il"]);
        let mut reader = StreamReader::new(inner);
        assert_eq!(reader.read_until(b';').await?, Some(&b"a;"[..]));
        assert_eq!(reader.read_until(b';').await?, Some(&b"bc;"[..]));
        // asyncio's IncompleteReadError: an error, the partial bytes kept.
        for _ in 0..2 {
            let err = reader.read_until(b';').await.unwrap_err();
            assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof);
            let msg = err.to_string();
            assert!(msg.contains("4 bytes") && msg.contains("0x3b"), "{msg}");
            assert_eq!(reader.buffer(), b"tail");
        }
        // read_line, like asyncio's readline, returns them as a last line.
        assert_eq!(reader.read_line().await?, Some(&b"tail"[..]));
        assert_eq!(reader.read_until(b';').await?, None);
        Ok(())
    })
}

#[test]
fn read_until_goes_on_after_an_end_of_stream_that_was_not_final() -> io::Result<()> {
    run(|| async {
        let (inner, feed) = scripted();
        feed.push("par");
        feed.step(Step::Eof);
        feed.push("t;");
        feed.close();
        let mut reader = StreamReader::new(inner);
        let err = reader.read_until(b';').await.unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof);
        assert_eq!(reader.read_until(b';').await?, Some(&b"part;"[..]));
        Ok(())
    })
}

#[test]
fn read_until_and_read_line_share_the_stream() -> io::Result<()> {
    run(|| async {
        let (inner, _) = chunks(["key=val", "ue\nk2=v2\n"]);
        let mut reader = StreamReader::new(inner);
        assert_eq!(reader.read_until(b'=').await?, Some(&b"key="[..]));
        assert_eq!(reader.read_line().await?, Some(&b"value"[..]));
        assert_eq!(reader.read_until(b'=').await?, Some(&b"k2="[..]));
        assert_eq!(reader.read_line().await?, Some(&b"v2"[..]));
        assert_eq!(reader.read_line().await?, None);
        Ok(())
    })
}

#[test]
fn read_exact_across_chunks_and_mixed_with_lines() -> io::Result<()> {
    run(|| async {
        // A length-prefixed body after a header line, like a tiny protocol.
        let (inner, _) = chunks(["LEN 11\nhello", " ", "world", "BYE\n"]);
        let mut reader = StreamReader::new(inner);
        let header = reader.read_line().await?.expect("header").to_vec();
        let len: usize = std::str::from_utf8(&header[4..]).unwrap().parse().unwrap();
        assert_eq!(reader.read_exact(len).await?, b"hello world");
        assert_eq!(reader.read_exact(0).await?, b"");
        assert_eq!(reader.read_line().await?, Some(&b"BYE"[..]));
        Ok(())
    })
}

#[test]
fn read_exact_at_end_of_stream_is_unexpected_eof_and_keeps_the_bytes() -> io::Result<()> {
    run(|| async {
        let (inner, _) = chunks(["ab", "c"]);
        let mut reader = StreamReader::new(inner);
        let err = reader.read_exact(5).await.unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof);
        assert!(err.to_string().contains("3 of 5"), "{err}");
        assert_eq!(reader.buffer(), b"abc");
        // Asking again for what is there succeeds.
        assert_eq!(reader.read_exact(3).await?, b"abc");
        assert_eq!(reader.read_line().await?, None);
        Ok(())
    })
}

#[test]
fn read_exact_after_an_end_of_stream_that_was_not_final() -> io::Result<()> {
    run(|| async {
        let (inner, feed) = scripted();
        feed.push("ab");
        feed.step(Step::Eof);
        feed.push("cde");
        feed.close();
        let mut reader = StreamReader::new(inner);
        assert!(reader.read_exact(5).await.is_err());
        assert_eq!(reader.read_exact(5).await?, b"abcde");
        Ok(())
    })
}

#[test]
fn read_exact_may_go_past_the_line_limit_and_gives_the_memory_back() -> io::Result<()> {
    run(|| async {
        let big: Vec<u8> = (0..200_000u32).map(|i| i as u8).collect();
        let (inner, _) = chunks([big.clone(), b"small\n".to_vec()]);
        let mut reader = StreamReader::new(inner);
        reader.set_max_line_length(1000);
        assert_eq!(reader.read_exact(big.len()).await?, &big[..]);
        assert_eq!(reader.read_line().await?, Some(&b"small"[..]));
        // The 200 KB buffer was released once empty.
        assert!(
            reader.capacity() <= 1000 + 8 * 1024,
            "capacity {}",
            reader.capacity()
        );
        Ok(())
    })
}

#[test]
fn an_empty_buffer_at_its_bound_is_kept_and_one_byte_past_it_given_back() -> io::Result<()> {
    run(|| async {
        const CHUNK: usize = 8 * 1024;
        let line = vec![b'x'; CHUNK];
        let first = [&line[..], b"\n"].concat();
        let (inner, _) = chunks([first, b"a\n".to_vec(), b"b\n".to_vec(), b"c\n".to_vec()]);
        let mut reader = StreamReader::new(inner);
        reader.set_max_line_length(CHUNK);
        assert_eq!(reader.read_line().await?, Some(&line[..]));
        // Grown to its bound, the line limit plus a chunk, and now empty.
        assert_eq!(reader.capacity(), 2 * CHUNK);
        // The bound one byte above it, then at it: the buffer is kept.
        for (limit, next) in [(CHUNK + 1, &b"a"[..]), (CHUNK, b"b")] {
            reader.set_max_line_length(limit);
            assert_eq!(reader.read_line().await?, Some(next));
            assert_eq!(reader.capacity(), 2 * CHUNK, "limit {limit}");
        }
        // One byte below it: given back, and a chunk allocated for the read.
        reader.set_max_line_length(CHUNK - 1);
        assert_eq!(reader.read_line().await?, Some(&b"c"[..]));
        assert_eq!(reader.capacity(), CHUNK);
        Ok(())
    })
}
