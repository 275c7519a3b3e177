//! Strategies for the framing properties: a line limit, a byte stream of
//! lines whose lengths sit around that limit, and a way to cut the stream
//! into reads (with pauses and failures between them); plus the reference
//! answers a `StreamReader` must give for any such stream.

use std::io;

use proptest::prelude::*;

use testkit::io_reader::{Feed, ScriptedReader, Step, scripted};

/// `StreamReader`'s growth unit (`READ_CHUNK`, private to the crate): the
/// slack its memory bound allows over the line limit.
pub const READ_CHUNK: usize = 8 * 1024;

/// A line limit: mostly small (so short streams cross it often), 0 (every
/// non-empty line is too long), and now and then around one read chunk,
/// where the buffer must grow, move and give memory back.
pub fn limit() -> impl Strategy<Value = usize> {
    prop_oneof![
        1 => Just(0),
        6 => 1..=80usize,
        2 => prop::sample::select(vec![16, 64]),
        1 => prop::sample::select(vec![READ_CHUNK - 1, READ_CHUNK, READ_CHUNK + 1, 12_000]),
    ]
}

/// How one line of a generated stream ends.
#[derive(Clone, Copy, Debug)]
pub enum Ending {
    Lf,
    CrLf,
    /// No ending: the line runs into the next one (a long run without a
    /// newline), or ends the stream unterminated.
    Nothing,
}

/// One generated line: `len` bytes repeating `pattern`, then its ending.
///
/// A short pattern repeated, not `len` random bytes: lines are thousands
/// of bytes long at times, and a failure is about lengths and positions,
/// which this shrinks quickly; the pattern still puts `\r` and arbitrary
/// bytes inside lines.
#[derive(Clone, Debug)]
pub struct Line {
    pub len: usize,
    pub pattern: Vec<u8>,
    pub ending: Ending,
}

impl Line {
    fn write_to(&self, stream: &mut Vec<u8>) {
        stream.extend(self.pattern.iter().cycle().take(self.len));
        match self.ending {
            Ending::Lf => stream.push(b'\n'),
            Ending::CrLf => stream.extend_from_slice(b"\r\n"),
            Ending::Nothing => {}
        }
    }
}

/// A line body's length, relative to `limit`: empty, short, exactly at
/// the limit and around it (the off-by-ones), a few times over it, and
/// rarely beyond a whole read chunk.
fn line_len(limit: usize) -> impl Strategy<Value = usize> {
    let around = vec![
        limit.saturating_sub(2),
        limit.saturating_sub(1),
        limit,
        limit + 1,
        limit + 2,
    ];
    prop_oneof![
        2 => Just(0),
        4 => 0..=limit.min(40) + 1,
        5 => prop::sample::select(around),
        2 => limit..=3 * limit + 3,
        1 => limit..=limit + 2 * READ_CHUNK + 100,
    ]
}

/// A byte inside a line: letters mostly, a `\r` (which counts towards the
/// limit and is only stripped right before the `\n`), anything but `\n`.
fn body_byte() -> impl Strategy<Value = u8> {
    prop_oneof![
        8 => b'a'..=b'z',
        2 => Just(b'\r'),
        1 => any::<u8>().prop_filter("no newline inside a line", |&b| b != b'\n'),
    ]
}

fn line(limit: usize) -> impl Strategy<Value = Line> {
    let ending = prop_oneof![
        6 => Just(Ending::Lf),
        3 => Just(Ending::CrLf),
        1 => Just(Ending::Nothing),
    ];
    (
        line_len(limit),
        prop::collection::vec(body_byte(), 1..=6),
        ending,
    )
        .prop_map(|(len, pattern, ending)| Line {
            len,
            pattern,
            ending,
        })
}

/// A stream of up to `max_lines` generated lines, as bytes.
pub fn stream(limit: usize, max_lines: usize) -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(line(limit), 0..=max_lines).prop_map(|lines| {
        let mut stream = Vec::new();
        for line in &lines {
            line.write_to(&mut stream);
        }
        stream
    })
}

/// What comes before a read, besides its bytes.
#[derive(Clone, Copy, Debug)]
pub enum Gap {
    /// The read's bytes are there at once.
    None,
    /// One `Pending`, with a wake: the bytes come in a later poll.
    Pause,
    /// One `Interrupted` error, which the reader must retry by itself.
    Interrupted,
    /// One other error, which reaches the caller; the caller retries.
    Fail,
}

/// How the stream is cut: reads of these sizes (the list repeats until
/// the stream is used up), each after its gap.
#[derive(Clone, Debug)]
pub struct Cuts(pub Vec<(usize, Gap)>);

/// Read sizes from 1 byte up, mostly small; gaps mostly none or pauses.
pub fn cuts() -> impl Strategy<Value = Cuts> {
    let size = prop_oneof![
        4 => 1..=8usize,
        3 => 1..=200usize,
        2 => 1..=5_000usize,
        1 => 1..=40_000usize,
    ];
    let gap = prop_oneof![
        4 => Just(Gap::None),
        4 => Just(Gap::Pause),
        1 => Just(Gap::Interrupted),
        1 => Just(Gap::Fail),
    ];
    prop::collection::vec((size, gap), 1..=12).prop_map(Cuts)
}

/// Cuts without [`Gap::Fail`], for tests that do not retry.
pub fn cuts_without_failures() -> impl Strategy<Value = Cuts> {
    cuts().prop_map(|Cuts(cuts)| {
        Cuts(
            cuts.into_iter()
                .map(|(size, gap)| match gap {
                    Gap::Fail => (size, Gap::Pause),
                    gap => (size, gap),
                })
                .collect(),
        )
    })
}

/// The error kind of a [`Gap::Fail`]: one nothing else produces.
pub const INJECTED: io::ErrorKind = io::ErrorKind::ConnectionAborted;

/// A scripted reader that delivers `stream` cut by `cuts`, then ends.
pub fn cut_reader(stream: &[u8], cuts: &Cuts) -> (ScriptedReader, Feed) {
    let (reader, feed) = scripted();
    let mut rest = stream;
    for &(size, gap) in cuts.0.iter().cycle() {
        if rest.is_empty() {
            break;
        }
        match gap {
            Gap::None => {}
            Gap::Pause => feed.step(Step::Pause),
            Gap::Interrupted => feed.step(Step::Fail(io::ErrorKind::Interrupted)),
            Gap::Fail => feed.step(Step::Fail(INJECTED)),
        }
        let (chunk, after) = rest.split_at(size.min(rest.len()));
        feed.push(chunk);
        rest = after;
    }
    feed.close();
    (reader, feed)
}

/// One answer of a `StreamReader`, owned, so it can be compared.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Answer {
    /// A line (without its ending), a record (with its delimiter) or a
    /// frame.
    Bytes(Vec<u8>),
    /// `InvalidData`: the line was longer than the limit.
    TooLong,
    /// `Ok(None)`: a clean end of stream.
    End,
    /// `UnexpectedEof` from `read_exact` or `read_until`, with what was
    /// left buffered.
    Short(Vec<u8>),
}

/// The lines a `StreamReader` with this `limit` must return for `stream`,
/// from a plain split at `\n`: each piece longer than `limit` (a `\r`
/// before the `\n` counted) is `TooLong` and the next line follows it;
/// others lose one trailing `\r`; a non-empty last piece without `\n` is a
/// line as it is; then the end.
pub fn reference_lines(stream: &[u8], limit: usize) -> Vec<Answer> {
    let mut pieces: Vec<&[u8]> = stream.split(|&b| b == b'\n').collect();
    // What follows the last `\n`: empty if the stream ends with one.
    let last = pieces.pop().unwrap_or_default();
    let mut answers: Vec<Answer> = pieces
        .into_iter()
        .map(|piece| match piece {
            piece if piece.len() > limit => Answer::TooLong,
            piece => Answer::Bytes(piece.strip_suffix(b"\r").unwrap_or(piece).to_vec()),
        })
        .collect();
    if last.len() > limit {
        answers.push(Answer::TooLong);
    } else if !last.is_empty() {
        answers.push(Answer::Bytes(last.to_vec()));
    }
    answers.push(Answer::End);
    answers
}

/// The reader as a cursor over the stream, for a mix of reads: what each
/// read must return, and where it leaves the stream.
pub struct Model<'a> {
    rest: &'a [u8],
    limit: usize,
}

impl<'a> Model<'a> {
    pub fn new(stream: &'a [u8], limit: usize) -> Self {
        Model {
            rest: stream,
            limit,
        }
    }

    /// `read_until(delimiter)`: the bytes up to and including it; an
    /// overlong record is dropped whole, its delimiter included, whenever
    /// the reader notices it; an unterminated rest within the limit is
    /// `Short`, and stays.
    pub fn until(&mut self, delimiter: u8) -> Answer {
        if self.rest.is_empty() {
            return Answer::End;
        }
        let (len, taken) = match self.rest.iter().position(|&b| b == delimiter) {
            Some(at) => (at, at + 1),
            None if self.rest.len() <= self.limit => return Answer::Short(self.rest.to_vec()),
            None => (self.rest.len(), self.rest.len()),
        };
        let record = &self.rest[..taken];
        self.rest = &self.rest[taken..];
        if len > self.limit {
            Answer::TooLong
        } else {
            Answer::Bytes(record.to_vec())
        }
    }

    /// `read_line`: `read_until(b'\n')` without the `\n` or `\r\n`, and
    /// an unterminated last line returned as it is.
    pub fn line(&mut self) -> Answer {
        match self.until(b'\n') {
            Answer::Bytes(mut line) => {
                line.pop();
                if line.ends_with(b"\r") {
                    line.pop();
                }
                Answer::Bytes(line)
            }
            Answer::Short(line) => {
                self.rest = &[];
                Answer::Bytes(line)
            }
            answer => answer,
        }
    }

    /// `read_exact(n)`: `n` bytes, or `UnexpectedEof` leaving everything
    /// that is left buffered. The limit does not apply.
    pub fn exact(&mut self, n: usize) -> Answer {
        if self.rest.len() < n {
            return Answer::Short(self.rest.to_vec());
        }
        let (frame, rest) = self.rest.split_at(n);
        self.rest = rest;
        Answer::Bytes(frame.to_vec())
    }

    /// A plain `AsyncRead::read`, which may return any number of bytes:
    /// checks that `got` is what comes next (and non-empty unless the
    /// stream is over), and moves past it. Returns what was expected
    /// instead, if it was not.
    pub fn read(&mut self, got: &[u8], room: usize) -> Result<(), String> {
        let ok = self.rest.starts_with(got)
            && got.len() <= room
            && (!got.is_empty() || self.rest.is_empty() || room == 0);
        if !ok {
            let shown = &self.rest[..self.rest.len().min(room)];
            return Err(format!(
                "read into {room} bytes got {got:?}; the stream goes on with {shown:?}"
            ));
        }
        self.rest = &self.rest[got.len()..];
        Ok(())
    }
}
