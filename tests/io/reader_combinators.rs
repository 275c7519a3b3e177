//! `StreamReader` as `AsyncRead` + `AsyncBufRead` and `StreamWriter` as
//! `AsyncWrite`: futures-util's combinators run over them, and see the same
//! stream as the inherent methods.

use std::io;

use futures_util::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt};
use futures_util::stream::TryStreamExt;
use io_reader::chunks;
use io_run::run;
use io_writer::{Act, Rng, planned, script_then};
use ioloop::io::{StreamReader, StreamWriter};
use testkit::{io_reader, io_run, io_writer};

#[test]
fn read_to_end_after_read_line_gets_the_rest_in_order() -> io::Result<()> {
    run(|| async {
        let (inner, _) = chunks(["status ok\nbo", "dy ", "bytes\n", "and more"]);
        let mut reader = StreamReader::new(inner);
        assert_eq!(reader.read_line().await?, Some(&b"status ok"[..]));
        let mut rest = Vec::new();
        reader.read_to_end(&mut rest).await?;
        assert_eq!(rest, b"body bytes\nand more");
        Ok(())
    })
}

#[test]
fn lines_from_futures_util_over_a_stream_reader() -> io::Result<()> {
    run(|| async {
        let (inner, _) = chunks(["one\r\ntw", "o\nthree"]);
        let lines: Vec<String> = StreamReader::new(inner).lines().try_collect().await?;
        assert_eq!(lines, ["one", "two", "three"]);
        Ok(())
    })
}

#[test]
fn the_extension_trait_read_line_works_when_called_by_its_path() -> io::Result<()> {
    run(|| async {
        let (inner, _) = chunks(["first\nsecond\n"]);
        let mut reader = StreamReader::new(inner);
        let mut line = String::new();
        AsyncBufReadExt::read_line(&mut reader, &mut line).await?;
        assert_eq!(line, "first\n");
        assert_eq!(reader.read_line().await?, Some(&b"second"[..]));
        Ok(())
    })
}

#[test]
fn a_large_read_into_an_empty_buffer_goes_straight_to_the_inner_reader() -> io::Result<()> {
    run(|| async {
        let (inner, feed) = chunks([b"x\n".to_vec(), vec![7; 100_000]]);
        let mut reader = StreamReader::new(inner);
        assert_eq!(reader.read_line().await?, Some(&b"x"[..]));
        let mut big = vec![0; 65536];
        let n = reader.read(&mut big).await?;
        assert_eq!(n, 65536);
        assert!(big.iter().all(|&b| b == 7));
        // The caller's 64 KiB buffer reached the inner reader unchanged.
        assert_eq!(feed.largest_offer(), 65536);
        assert!(reader.capacity() <= 8 * 1024);
        Ok(())
    })
}

#[test]
fn small_reads_are_served_from_the_buffer() -> io::Result<()> {
    run(|| async {
        let (inner, feed) = chunks(["abcdefghij"]);
        let mut reader = StreamReader::new(inner);
        let mut two = [0; 2];
        let mut got = Vec::new();
        loop {
            let n = reader.read(&mut two).await?;
            if n == 0 {
                break;
            }
            got.extend_from_slice(&two[..n]);
        }
        assert_eq!(got, b"abcdefghij");
        // One read for the bytes, one for the end: not one per two bytes.
        assert_eq!(feed.reads(), 2);
        Ok(())
    })
}

#[test]
fn copy_buf_from_a_stream_reader_into_a_stream_writer() -> io::Result<()> {
    run(|| async {
        let mut rng = Rng::new(7);
        let data = rng.bytes(300_000);
        let pieces: Vec<Vec<u8>> = data.chunks(7_777).map(<[u8]>::to_vec).collect();
        let (inner, _) = chunks(pieces);
        let reader = StreamReader::new(inner);
        // A writer that takes at most 1000 bytes a call and often says "later".
        let (sink, probe) = planned(Box::new(move |_, _| match rng.below(4) {
            0 => Act::Pending,
            _ => Act::Take(1 + rng.below(1000)),
        }));
        let mut writer = StreamWriter::new(sink);
        let copied = futures_util::io::copy_buf(reader, &mut writer).await?;
        AsyncWriteExt::close(&mut writer).await?;
        assert_eq!(copied, data.len() as u64);
        assert_eq!(probe.received(), data);
        assert_eq!(probe.closed_after(), Some(data.len()));
        Ok(())
    })
}

#[test]
fn write_all_through_async_write_respects_the_high_water_mark() -> io::Result<()> {
    run(|| async {
        let (sink, probe) = planned(script_then([Act::WouldBlock], Act::Take(100)));
        let mut writer = StreamWriter::new(sink);
        writer.set_write_buffer_limits(1000, 200);
        let mut expected = Vec::new();
        for i in 0..50u8 {
            let slice = vec![i; 300];
            writer.write_all(&slice).await?;
            expected.extend_from_slice(&slice);
            // Never more than the high-water mark plus the slice just written.
            assert!(writer.buffered() <= 1000 + 300, "{}", writer.buffered());
        }
        AsyncWriteExt::flush(&mut writer).await?;
        assert_eq!(writer.buffered(), 0);
        assert_eq!(probe.received(), expected);
        Ok(())
    })
}

#[test]
fn the_streams_and_their_futures_are_send_when_the_inner_stream_is() {
    fn assert_send<T: Send>(_: &T) {}
    let mut reader = StreamReader::new(&b"x\n"[..]);
    let mut writer = StreamWriter::new(Vec::new());
    assert_send(&reader);
    assert_send(&writer);
    assert_send(&reader.read_line());
    assert_send(&reader.read_until(b';'));
    assert_send(&reader.read_exact(1));
    assert_send(&writer.drain());
    assert_send(&writer.flush());
    assert_send(&writer.close());
}
