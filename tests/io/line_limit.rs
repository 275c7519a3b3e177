//! The maximum line length: a line at the limit is accepted, one byte over
//! is `InvalidData` naming the limit, the reader goes on with the next
//! line, and memory stays within the limit plus one read chunk. A limit
//! (or a `read_exact`) near `usize::MAX` is no bound, never a panic.

use std::io;

use io_reader::{chunks, scripted};
use io_run::run;
use ioloop::io::{DEFAULT_MAX_LINE_LENGTH, StreamReader};
use testkit::{io_reader, io_run};

/// The reader's growth unit: the slack in the memory bound.
const CHUNK: usize = 8 * 1024;

/// `len` bytes of a line, cut into reads of `piece` bytes, then `\n`.
fn line_in_pieces(len: usize, piece: usize) -> Vec<Vec<u8>> {
    let line = vec![b'a'; len];
    let mut pieces: Vec<Vec<u8>> = line.chunks(piece).map(<[u8]>::to_vec).collect();
    pieces.push(b"\n".to_vec());
    pieces
}

fn assert_too_long(err: io::Error, limit: usize) {
    assert_eq!(err.kind(), io::ErrorKind::InvalidData, "{err}");
    assert!(
        err.to_string().contains(&limit.to_string()),
        "message: {err}"
    );
}

#[test]
fn a_line_exactly_at_the_default_limit_is_accepted() -> io::Result<()> {
    run(|| async {
        let mut pieces = line_in_pieces(DEFAULT_MAX_LINE_LENGTH, 1000);
        pieces.push(b"after\n".to_vec());
        let (inner, feed) = chunks(pieces);
        let mut reader = StreamReader::new(inner);
        let line = reader.read_line().await?.expect("a line");
        assert_eq!(line.len(), DEFAULT_MAX_LINE_LENGTH);
        assert!(line.iter().all(|&b| b == b'a'));
        // Checked before the next read, which may shrink the buffer.
        assert!(reader.capacity() <= DEFAULT_MAX_LINE_LENGTH + CHUNK);
        assert_eq!(reader.read_line().await?, Some(&b"after"[..]));
        assert!(feed.largest_offer() <= DEFAULT_MAX_LINE_LENGTH + CHUNK);
        Ok(())
    })
}

#[test]
fn one_byte_over_the_default_limit_is_invalid_data_then_the_next_line_reads() -> io::Result<()> {
    run(|| async {
        let mut pieces = line_in_pieces(DEFAULT_MAX_LINE_LENGTH + 1, 1000);
        pieces.push(b"next line\n".to_vec());
        let (inner, feed) = chunks(pieces);
        let mut reader = StreamReader::new(inner);
        assert_too_long(
            reader.read_line().await.unwrap_err(),
            DEFAULT_MAX_LINE_LENGTH,
        );
        assert!(reader.capacity() <= DEFAULT_MAX_LINE_LENGTH + CHUNK);
        assert_eq!(reader.read_line().await?, Some(&b"next line"[..]));
        assert_eq!(reader.read_line().await?, None);
        assert!(feed.largest_offer() <= DEFAULT_MAX_LINE_LENGTH + CHUNK);
        Ok(())
    })
}

#[test]
fn an_overlong_line_is_reported_before_its_end_and_its_rest_skipped() -> io::Result<()> {
    run(|| async {
        let (inner, feed) = scripted();
        let mut reader = StreamReader::new(inner);
        reader.set_max_line_length(100);
        // 150 bytes and no newline yet: the error does not wait for one.
        feed.push(vec![b'x'; 150]);
        assert_too_long(reader.read_line().await.unwrap_err(), 100);
        assert!(
            reader.buffer().is_empty(),
            "the overlong bytes were dropped"
        );
        // The rest of that line keeps arriving, then good lines.
        feed.push(vec![b'y'; 5000]);
        feed.push("yyy\nfine\n");
        feed.close();
        assert_eq!(reader.read_line().await?, Some(&b"fine"[..]));
        assert_eq!(reader.read_line().await?, None);
        Ok(())
    })
}

#[test]
fn an_overlong_line_in_one_read_goes_at_once() -> io::Result<()> {
    run(|| async {
        let (inner, _) = chunks(["1234\n12345\n123\n"]);
        let mut reader = StreamReader::new(inner);
        reader.set_max_line_length(4);
        assert_eq!(reader.read_line().await?, Some(&b"1234"[..]));
        assert_too_long(reader.read_line().await.unwrap_err(), 4);
        assert_eq!(reader.read_line().await?, Some(&b"123"[..]));
        assert_eq!(reader.read_line().await?, None);
        Ok(())
    })
}

#[test]
fn a_carriage_return_counts_toward_the_limit() -> io::Result<()> {
    run(|| async {
        let (inner, _) = chunks(["abc\r\nabcd\r\nok\r\n"]);
        let mut reader = StreamReader::new(inner);
        reader.set_max_line_length(4);
        assert_eq!(reader.read_line().await?, Some(&b"abc"[..]));
        assert_too_long(reader.read_line().await.unwrap_err(), 4);
        assert_eq!(reader.read_line().await?, Some(&b"ok"[..]));
        Ok(())
    })
}

#[test]
fn read_until_uses_the_same_limit() -> io::Result<()> {
    run(|| async {
        let (inner, _) = chunks(["abcd;abc", "de;", "x;"]);
        let mut reader = StreamReader::new(inner);
        reader.set_max_line_length(4);
        assert_eq!(reader.read_until(b';').await?, Some(&b"abcd;"[..]));
        assert_too_long(reader.read_until(b';').await.unwrap_err(), 4);
        assert_eq!(reader.read_until(b';').await?, Some(&b"x;"[..]));
        assert_eq!(reader.read_until(b';').await?, None);
        Ok(())
    })
}

#[test]
fn read_until_overlong_record_is_discarded_unlike_asyncio() -> io::Result<()> {
    // asyncio's LimitOverrunError leaves the record buffered; here it goes,
    // as read_line's overlong line goes, and the next record reads.
    run(|| async {
        let (inner, feed) = scripted();
        let mut reader = StreamReader::new(inner);
        reader.set_max_line_length(4);
        // Whole, delimiter included, in one read.
        feed.push("toolong;ok;");
        assert_too_long(reader.read_until(b';').await.unwrap_err(), 4);
        assert_eq!(reader.buffer(), b"ok;");
        assert_eq!(reader.read_until(b';').await?, Some(&b"ok;"[..]));
        // Reported before its delimiter came; the rest is skipped later.
        feed.push("abcdefgh");
        assert_too_long(reader.read_until(b';').await.unwrap_err(), 4);
        assert!(
            reader.buffer().is_empty(),
            "the overlong bytes were dropped"
        );
        feed.push("ij;next;");
        feed.close();
        assert_eq!(reader.read_until(b';').await?, Some(&b"next;"[..]));
        assert_eq!(reader.read_until(b';').await?, None);
        Ok(())
    })
}

#[test]
fn an_overlong_line_cut_off_by_end_of_stream_then_none() -> io::Result<()> {
    run(|| async {
        let (inner, _) = chunks(["abcdefgh", "ijkl"]);
        let mut reader = StreamReader::new(inner);
        reader.set_max_line_length(4);
        assert_too_long(reader.read_line().await.unwrap_err(), 4);
        assert_eq!(reader.read_line().await?, None);
        Ok(())
    })
}

#[test]
fn a_small_limit_keeps_the_buffer_small() -> io::Result<()> {
    run(|| async {
        let (inner, feed) = chunks(line_in_pieces(1_000_000, 10_000));
        let mut reader = StreamReader::new(inner);
        reader.set_max_line_length(16);
        assert_too_long(reader.read_line().await.unwrap_err(), 16);
        assert_eq!(reader.read_line().await?, None);
        assert!(
            reader.capacity() <= 16 + CHUNK,
            "capacity {}",
            reader.capacity()
        );
        assert!(feed.largest_offer() <= 16 + CHUNK);
        Ok(())
    })
}

#[test]
fn a_limit_of_zero_accepts_only_empty_lines() -> io::Result<()> {
    run(|| async {
        let (inner, _) = chunks(["\na\n\r\n\n"]);
        let mut reader = StreamReader::new(inner);
        reader.set_max_line_length(0);
        assert_eq!(reader.read_line().await?, Some(&b""[..]));
        assert_too_long(reader.read_line().await.unwrap_err(), 0);
        // "\r\n" is one byte before the "\n": over a limit of zero.
        assert_too_long(reader.read_line().await.unwrap_err(), 0);
        assert_eq!(reader.read_line().await?, Some(&b""[..]));
        Ok(())
    })
}

#[test]
fn max_line_length_of_usize_max_reads_lines_without_panicking() -> io::Result<()> {
    run(|| async {
        let lens = [0, 1, 100, CHUNK - 1, CHUNK, CHUNK + 1, 70_000, 200_000];
        let pieces: Vec<Vec<u8>> = lens
            .iter()
            .flat_map(|&len| line_in_pieces(len, 5000))
            .collect();
        let (inner, _) = chunks(pieces);
        let mut reader = StreamReader::new(inner);
        // The natural way to say "no limit".
        reader.set_max_line_length(usize::MAX);
        for len in lens {
            let line = reader.read_line().await?.expect("a line");
            assert_eq!(line.len(), len);
        }
        assert_eq!(reader.read_line().await?, None);
        Ok(())
    })
}

#[test]
fn a_limit_near_usize_max_does_not_overflow() -> io::Result<()> {
    let limits = [
        usize::MAX - 1,
        usize::MAX - CHUNK / 2,
        usize::MAX - CHUNK + 1,
        usize::MAX - CHUNK,
        usize::MAX - 2 * CHUNK,
        isize::MAX as usize + 1,
    ];
    for limit in limits {
        run(move || async move {
            let mut pieces = line_in_pieces(70_000, 5000);
            pieces.push(b"record;".to_vec());
            pieces.push(vec![b'f'; 20_000]);
            pieces.push(b"last\n".to_vec());
            let (inner, _) = chunks(pieces);
            let mut reader = StreamReader::new(inner);
            reader.set_max_line_length(limit);
            assert_eq!(reader.read_line().await?.map(<[u8]>::len), Some(70_000));
            assert_eq!(reader.read_until(b';').await?, Some(&b"record;"[..]));
            assert_eq!(reader.read_exact(20_000).await?, &[b'f'; 20_000][..]);
            assert_eq!(reader.read_line().await?, Some(&b"last"[..]));
            assert_eq!(reader.read_line().await?, None);
            Ok(())
        })?;
    }
    Ok(())
}

#[test]
fn read_exact_of_a_huge_n_ends_with_unexpected_eof_not_a_panic() -> io::Result<()> {
    // A short stream, and one long enough that the buffer has to grow.
    for len in [6, 100_000] {
        run(move || async move {
            let sent: Vec<u8> = (0..len).map(|i| i as u8).collect();
            let (inner, _) = chunks(sent.chunks(4000).map(<[u8]>::to_vec).collect::<Vec<_>>());
            let mut reader = StreamReader::new(inner);
            for n in [usize::MAX, usize::MAX - 1, usize::MAX - CHUNK] {
                let err = reader.read_exact(n).await.unwrap_err();
                assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof, "{err}");
                assert_eq!(reader.buffer(), &sent[..], "the bytes stay buffered");
            }
            assert_eq!(reader.read_exact(len).await?, &sent[..]);
            Ok(())
        })?;
    }
    Ok(())
}

/// How a record of `len` bytes and its terminator reach the reader.
#[derive(Clone, Copy, Debug)]
enum Split {
    /// The record, its terminator and the next record in one read.
    Whole,
    /// The record in one read; its terminator opens the next.
    TerminatorNext,
    /// The record in reads of 7 bytes, then the terminator.
    Pieces,
    /// A first read of exactly the limit's bytes (or all, if fewer), then
    /// the rest with the terminator.
    AtTheLimit,
}

/// The reads that deliver `len` bytes of `a`, the terminator `end`, and a
/// next record `next` + `end`, cut as `split` says, for a limit of `limit`.
fn delivered(len: usize, end: u8, split: Split, limit: usize) -> Vec<Vec<u8>> {
    let record = vec![b'a'; len];
    let tail = [&[end][..], b"next", &[end]].concat();
    match split {
        Split::Whole => vec![[&record[..], &tail].concat()],
        Split::TerminatorNext => vec![record, tail],
        Split::Pieces => {
            let mut reads: Vec<Vec<u8>> = record.chunks(7).map(<[u8]>::to_vec).collect();
            reads.push(tail);
            reads
        }
        Split::AtTheLimit => {
            let cut = len.min(limit);
            vec![record[..cut].to_vec(), [&record[cut..], &tail].concat()]
        }
    }
}

/// The line limit at its edge (issue 40's rule "every length limit at its
/// edge"): records of limit − 1, limit and limit + 1 bytes, for
/// `read_line` and `read_until`, with the terminator in the record's read
/// or the next, and split across reads (in small pieces, and right at the
/// limit): up to the limit each is returned whole, one byte over is
/// `InvalidData` naming the limit, and the next record reads either way.
#[test]
fn the_line_limit_at_its_edge_however_the_reads_split_it() -> io::Result<()> {
    for limit in [100, CHUNK, DEFAULT_MAX_LINE_LENGTH] {
        for len in [limit - 1, limit, limit + 1] {
            for split in [
                Split::Whole,
                Split::TerminatorNext,
                Split::Pieces,
                Split::AtTheLimit,
            ] {
                for end in [b'\n', b';'] {
                    let what =
                        format!("limit {limit}, {len} bytes, {split:?}, end {}", end as char);
                    run(move || async move {
                        let (inner, _) = chunks(delivered(len, end, split, limit));
                        let mut reader = StreamReader::new(inner);
                        reader.set_max_line_length(limit);
                        match read_record(&mut reader, end).await {
                            Ok(Some(record)) => {
                                assert!(len <= limit, "{what}: accepted over the limit");
                                assert!(record == vec![b'a'; len], "{what}: the record changed");
                            }
                            Ok(None) => panic!("{what}: no record"),
                            Err(err) => {
                                assert!(len > limit, "{what}: refused within the limit: {err}");
                                assert_too_long(err, limit);
                            }
                        }
                        let next = read_record(&mut reader, end).await?;
                        assert_eq!(next, Some(b"next".to_vec()), "{what}");
                        assert_eq!(read_record(&mut reader, end).await?, None, "{what}");
                        Ok(())
                    })?;
                }
            }
        }
    }
    Ok(())
}

/// The next record, without its terminator: `read_line`'s for `\n`, else
/// `read_until`'s.
async fn read_record(
    reader: &mut StreamReader<io_reader::ScriptedReader>,
    end: u8,
) -> io::Result<Option<Vec<u8>>> {
    match end {
        b'\n' => Ok(reader.read_line().await?.map(<[u8]>::to_vec)),
        _ => Ok(reader
            .read_until(end)
            .await?
            .map(|r| r[..r.len() - 1].to_vec())),
    }
}
