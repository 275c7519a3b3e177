//! `StreamReader::read_line`: framing lines out of a byte stream however it
//! is cut into reads, the lesson's `inbuf` loop behind `await`.

use std::io;

use io_reader::{Step, chunks, scripted};
use io_run::run;
use ioloop::io::StreamReader;
use testkit::{io_reader, io_run};

/// Every line until end of stream, as owned strings.
async fn all_lines<R>(reader: &mut StreamReader<R>) -> io::Result<Vec<String>>
where
    R: futures_util::io::AsyncRead + Unpin,
{
    let mut lines = Vec::new();
    while let Some(line) = reader.read_line().await? {
        lines.push(String::from_utf8_lossy(line).into_owned());
    }
    Ok(lines)
}

#[test]
fn lines_split_across_chunks_come_out_whole() -> io::Result<()> {
    run(|| async {
        let (inner, _) = chunks(["he", "llo\nwo", "rld", "\n", "\nlast"]);
        let mut reader = StreamReader::new(inner);
        assert_eq!(
            all_lines(&mut reader).await?,
            ["hello", "world", "", "last"]
        );
        Ok(())
    })
}

#[test]
fn crlf_is_stripped_and_a_lone_cr_is_kept() -> io::Result<()> {
    run(|| async {
        // The "\r\n" of the second line is split between two reads.
        let (inner, _) = chunks(["a\r\nb\rc\r", "\n\r\n", "no newline\r"]);
        let mut reader = StreamReader::new(inner);
        let lines = all_lines(&mut reader).await?;
        // A last line without "\n" has no line ending to strip: as is.
        assert_eq!(lines, ["a", "b\rc", "", "no newline\r"]);
        Ok(())
    })
}

#[test]
fn clean_end_of_stream_is_none_and_stays_none() -> io::Result<()> {
    run(|| async {
        let (inner, _) = chunks(["only\n"]);
        let mut reader = StreamReader::new(inner);
        assert_eq!(reader.read_line().await?, Some(&b"only"[..]));
        assert_eq!(reader.read_line().await?, None);
        assert_eq!(reader.read_line().await?, None);

        let (inner, _) = chunks(Vec::<Vec<u8>>::new());
        let mut empty = StreamReader::new(inner);
        assert_eq!(empty.read_line().await?, None);
        Ok(())
    })
}

#[test]
fn a_line_written_one_byte_at_a_time_with_pauses() -> io::Result<()> {
    run(|| async {
        let text = b"one byte at a time\r\nthen the rest\n";
        let (inner, feed) = chunks(text.iter().map(|&b| vec![b]));
        let mut reader = StreamReader::new(inner);
        assert_eq!(reader.read_line().await?, Some(&b"one byte at a time"[..]));
        assert_eq!(reader.read_line().await?, Some(&b"then the rest"[..]));
        assert_eq!(reader.read_line().await?, None);
        // One read per byte and per pause: the reader really waited in between.
        assert!(
            feed.reads() >= text.len() * 2 - 1,
            "reads: {}",
            feed.reads()
        );
        Ok(())
    })
}

#[test]
fn ten_thousand_lines_in_one_chunk_come_out_in_order() -> io::Result<()> {
    run(|| async {
        let text: String = (0..10_000).map(|i| format!("line {i}\n")).collect();
        let (inner, feed) = chunks([text.as_bytes()]);
        let mut reader = StreamReader::new(inner);
        for i in 0..10_000 {
            let line = reader.read_line().await?.expect("a line");
            assert_eq!(line, format!("line {i}").as_bytes());
        }
        assert_eq!(reader.read_line().await?, None);
        // Read in chunks of at least 4 KiB, not once per line.
        let most = text.len() / 4096 + 2;
        assert!(
            feed.reads() <= most,
            "{} reads, expected at most {most}",
            feed.reads()
        );
        Ok(())
    })
}

#[test]
fn an_error_from_the_inner_reader_loses_no_bytes() -> io::Result<()> {
    run(|| async {
        let (inner, feed) = scripted();
        feed.push("hel");
        feed.step(Step::Fail(io::ErrorKind::ConnectionReset));
        feed.push("lo\n");
        feed.close();
        let mut reader = StreamReader::new(inner);
        let err = reader.read_line().await.unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::ConnectionReset);
        assert_eq!(reader.buffer(), b"hel");
        assert_eq!(reader.read_line().await?, Some(&b"hello"[..]));
        Ok(())
    })
}

#[test]
fn buffered_lines_come_before_a_read_error_unlike_asyncio() -> io::Result<()> {
    // asyncio raises the stored error at once; here no line the peer sent
    // before its reset is lost, and the error comes once they are read.
    run(|| async {
        let (inner, feed) = scripted();
        feed.push("a\nb\npart");
        feed.step(Step::Fail(io::ErrorKind::ConnectionReset));
        feed.close();
        let mut reader = StreamReader::new(inner);
        assert_eq!(reader.read_line().await?, Some(&b"a"[..]));
        assert_eq!(reader.read_line().await?, Some(&b"b"[..]));
        let err = reader.read_line().await.unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::ConnectionReset);
        assert_eq!(reader.buffer(), b"part");

        // read_until alike.
        let (inner, feed) = scripted();
        feed.push("x;y;part");
        feed.step(Step::Fail(io::ErrorKind::ConnectionReset));
        let mut reader = StreamReader::new(inner);
        assert_eq!(reader.read_until(b';').await?, Some(&b"x;"[..]));
        assert_eq!(reader.read_until(b';').await?, Some(&b"y;"[..]));
        let err = reader.read_until(b';').await.unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::ConnectionReset);
        assert_eq!(reader.buffer(), b"part");
        Ok(())
    })
}

#[test]
fn interrupted_reads_are_retried_quietly() -> io::Result<()> {
    run(|| async {
        let (inner, feed) = scripted();
        feed.push("a");
        feed.step(Step::Fail(io::ErrorKind::Interrupted));
        feed.push("b\n");
        feed.close();
        let mut reader = StreamReader::new(inner);
        assert_eq!(reader.read_line().await?, Some(&b"ab"[..]));
        Ok(())
    })
}

#[test]
fn lines_keep_coming_after_an_end_of_stream_that_was_not_final() -> io::Result<()> {
    // A terminal's ctrl-D: one read returns 0, later reads return data.
    run(|| async {
        let (inner, feed) = scripted();
        feed.push("partial");
        feed.step(Step::Eof);
        feed.push("next\n");
        feed.close();
        let mut reader = StreamReader::new(inner);
        assert_eq!(reader.read_line().await?, Some(&b"partial"[..]));
        assert_eq!(reader.read_line().await?, Some(&b"next"[..]));
        assert_eq!(reader.read_line().await?, None);
        Ok(())
    })
}

/// The line limit reads back as set (64 KiB until then), and `Debug`
/// shows the inner reader, how much is buffered and the limit.
#[test]
fn a_reader_shows_its_inner_reader_what_it_holds_and_its_limit() -> io::Result<()> {
    run(|| async {
        let mut reader = StreamReader::new(&b"one\ntwo"[..]);
        assert_eq!(reader.max_line_length(), 64 * 1024);
        assert_eq!(
            reader.max_line_length(),
            ioloop::io::DEFAULT_MAX_LINE_LENGTH
        );
        reader.set_max_line_length(10);
        assert_eq!(reader.max_line_length(), 10);
        assert_eq!(reader.read_line().await?, Some(&b"one"[..]));
        assert_eq!(
            format!("{reader:?}"),
            "StreamReader { inner: [], buffered: 3, max_line_length: 10 }"
        );
        Ok(())
    })
}
