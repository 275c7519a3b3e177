//! Properties of `StreamReader`'s framing, over generated streams: any byte
//! stream, cut into any reads (with pauses, retried `Interrupted`s and
//! failures between them), gives the lines a plain split gives, with the
//! line limit honoured and memory within the limit plus one read chunk;
//! and any mix of `read_line`, `read_until`, `read_exact` and plain reads,
//! each perhaps cancelled half-way or failed and retried, reads the stream
//! exactly once, in order.
//!
//! 1024 cases per property by default; `PROPTEST_CASES=N` runs more.

use std::io;

use futures_util::io::AsyncReadExt;
use ioloop::io::StreamReader;
use proptest::prelude::*;
use testkit::io_reader::ScriptedReader;

use crate::config;
use crate::drive::{drive, drive_at_most};
use crate::streams::{
    Answer, Cuts, INJECTED, Model, READ_CHUNK, cut_reader, cuts, cuts_without_failures, limit,
    reference_lines, stream,
};

/// A stream, a line limit and a way to cut the stream, the limit first
/// because the line lengths are drawn around it.
fn case(max_lines: usize, cuts: impl Strategy<Value = Cuts>) -> impl Strategy<Value = Case> {
    (limit(), cuts).prop_flat_map(move |(limit, cuts)| {
        stream(limit, max_lines).prop_map(move |stream| Case {
            limit,
            stream,
            cuts: cuts.clone(),
        })
    })
}

#[derive(Clone, Debug)]
struct Case {
    limit: usize,
    stream: Vec<u8>,
    cuts: Cuts,
}

/// One `read_line`, driven to its end, as an [`Answer`].
fn read_line(reader: &mut StreamReader<ScriptedReader>) -> io::Result<Answer> {
    match drive(reader.read_line()) {
        Ok(Some(line)) => Ok(Answer::Bytes(line.to_vec())),
        Ok(None) => Ok(Answer::End),
        Err(err) if err.kind() == io::ErrorKind::InvalidData => Ok(Answer::TooLong),
        Err(err) => Err(err),
    }
}

proptest! {
    #![proptest_config(config::config(1024, "proptest-regressions/prop_framing.txt"))]

    /// The headline property: `read_line` returns the reference split of
    /// the stream, whatever the cuts, and the buffer never grows past the
    /// limit plus one read chunk, the bound `set_max_line_length`
    /// documents.
    #[test]
    fn read_line_returns_the_lines_of_a_plain_split(case in case(16, cuts_without_failures())) {
        let Case { limit, stream, cuts } = case;
        let expected = reference_lines(&stream, limit);
        let (inner, feed) = cut_reader(&stream, &cuts);
        let mut reader = StreamReader::new(inner);
        reader.set_max_line_length(limit);
        let bound = limit + READ_CHUNK;

        let mut answers = Vec::new();
        // One more call than there are answers: a reader that never says
        // End fails the comparison instead of looping.
        for _ in 0..=expected.len() {
            let answer = read_line(&mut reader)?;
            let capacity = reader.capacity();
            prop_assert!(capacity <= bound, "capacity {capacity} > {bound}");
            let end = answer == Answer::End;
            answers.push(answer);
            if end {
                break;
            }
        }
        prop_assert_eq!(&answers, &expected);
        // The end of the stream is sticky.
        prop_assert_eq!(read_line(&mut reader)?, Answer::End);
        let offered = feed.largest_offer();
        prop_assert!(offered <= bound, "offered {offered} > {bound}");
    }

    /// Any mix of reads, each perhaps dropped after a few polls (as a
    /// `timeout` would) or failed by the inner reader and then retried,
    /// returns what a cursor over the stream says: nothing lost, nothing
    /// repeated, an overlong record dropped whole and the next one
    /// returned. Then `read_line` reads the rest to the end.
    #[test]
    fn any_mix_of_reads_matches_a_cursor_over_the_stream(
        case in case(12, cuts()),
        ops in prop::collection::vec((op(), cancel_after()), 0..=24),
    ) {
        let Case { limit, stream, cuts } = case;
        let (inner, feed) = cut_reader(&stream, &cuts);
        let mut reader = StreamReader::new(inner);
        reader.set_max_line_length(limit);
        let mut model = Model::new(&stream, limit);
        // read_exact may hold what its caller asked for (and gives it back
        // later, not at once): the bound is the largest hold so far.
        let mut hold = limit;
        // A plain read of a chunk or more into an empty reader offers the
        // caller's own buffer to the inner reader.
        let mut largest_room = 0;

        let lines_to_end = std::iter::repeat_n((Op::Line, None), stream.len() + 2);
        for (i, (op, cancel)) in ops.into_iter().chain(lines_to_end).enumerate() {
            match op {
                Op::Exact(n) => hold = hold.max(n),
                Op::Read(room) => largest_room = largest_room.max(room),
                _ => {}
            }
            let got = run(&mut reader, op, cancel)?;
            let expected = match (op, &got) {
                (Op::Line, _) => model.line(),
                (Op::Until(delimiter), _) => model.until(delimiter),
                (Op::Exact(n), _) => model.exact(n),
                (Op::Read(room), Answer::Bytes(bytes)) => {
                    if let Err(why) = model.read(bytes, room) {
                        return Err(TestCaseError::fail(format!("op {i}: {why}")));
                    }
                    got.clone()
                }
                (Op::Read(_), other) => {
                    let why = format!("op {i}: a read answered {other:?}");
                    return Err(TestCaseError::fail(why));
                }
            };
            prop_assert_eq!(&got, &expected, "op {} ({:?})", i, op);
            let capacity = reader.capacity();
            prop_assert!(capacity <= hold + READ_CHUNK, "op {i}: capacity {capacity}");
            if op == Op::Line && got == Answer::End {
                break;
            }
        }
        prop_assert_eq!(read_line(&mut reader)?, Answer::End);
        let offered = feed.largest_offer();
        prop_assert!(offered <= (hold + READ_CHUNK).max(largest_room), "offered {offered}");
    }
}

/// One of the reader's ways to read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Line,
    Until(u8),
    Exact(usize),
    /// `AsyncRead::read` into a buffer of this many bytes.
    Read(usize),
}

fn op() -> impl Strategy<Value = Op> {
    let delimiter = prop_oneof![Just(b'\n'), Just(b'\r'), b'a'..=b'z', any::<u8>()];
    let n = prop_oneof![
        4 => 0..=40usize,
        1 => 0..=3 * READ_CHUNK,
    ];
    // Empty, a few bytes, or at least a chunk: the reader hands a buffer
    // that large straight to the inner reader when its own is empty.
    let room = prop_oneof![
        4 => 0..=64usize,
        1 => READ_CHUNK..=READ_CHUNK + 100,
    ];
    prop_oneof![
        4 => Just(Op::Line),
        2 => delimiter.prop_map(Op::Until),
        2 => n.prop_map(Op::Exact),
        2 => room.prop_map(Op::Read),
    ]
}

/// After how many polls to drop the first try of an op, if at all.
fn cancel_after() -> impl Strategy<Value = Option<usize>> {
    prop_oneof![3 => Just(None), 1 => (1..=3usize).prop_map(Some)]
}

/// Runs `op` to its answer: the first try dropped after `cancel` polls if
/// it is still pending then, every try that fails with the injected error
/// retried (the cuts put a bounded number of them in the stream).
fn run(
    reader: &mut StreamReader<ScriptedReader>,
    op: Op,
    mut cancel: Option<usize>,
) -> Result<Answer, TestCaseError> {
    loop {
        let polls = cancel.take().unwrap_or(usize::MAX);
        let answer = match op {
            Op::Line => drive_at_most(reader.read_line(), polls)
                .map(|r| r.map(|line| line.map_or(Answer::End, |l| Answer::Bytes(l.to_vec())))),
            Op::Until(delimiter) => drive_at_most(reader.read_until(delimiter), polls)
                .map(|r| r.map(|rec| rec.map_or(Answer::End, |r| Answer::Bytes(r.to_vec())))),
            Op::Exact(n) => drive_at_most(reader.read_exact(n), polls)
                .map(|r| r.map(|frame| Answer::Bytes(frame.to_vec()))),
            Op::Read(room) => {
                let mut buf = vec![0; room];
                drive_at_most(AsyncReadExt::read(reader, &mut buf), polls)
                    .map(|r| r.map(|n| Answer::Bytes(buf[..n].to_vec())))
            }
        };
        match answer {
            // Dropped while pending: nothing may be lost; ask again.
            None => continue,
            Some(Ok(answer)) => return Ok(answer),
            Some(Err(err)) => match err.kind() {
                io::ErrorKind::InvalidData => return Ok(Answer::TooLong),
                io::ErrorKind::UnexpectedEof if matches!(op, Op::Exact(_) | Op::Until(_)) => {
                    return Ok(Answer::Short(reader.buffer().to_vec()));
                }
                // The inner reader's failure, passed up; the bytes read so
                // far must still be there for the retry.
                kind if kind == INJECTED => continue,
                // A plain read into a buffer of a chunk or more goes straight
                // to the inner reader, which may say `Interrupted`: "nothing
                // happened, try again", as std's `Read` allows.
                io::ErrorKind::Interrupted if matches!(op, Op::Read(_)) => continue,
                _ => return Err(TestCaseError::fail(format!("{op:?} failed: {err}"))),
            },
        }
    }
}
