//! RESP2, the Redis protocol, as much of it as `redis-cli` and
//! `redis-benchmark` speak: commands come as arrays of bulk strings (or as
//! one inline line, for a person typing), replies go out as simple
//! strings, errors, integers, bulk strings and arrays. Shared by
//! `kv_server` and its tokio twin (included with `#[path]`): pure code, no
//! I/O. Replies are formatted straight into the caller's buffer (`Vec<u8>`
//! is `io::Write`, which cannot fail): no allocation per reply.
//!
//! A [`Parser`] reads commands out of the bytes received so far and
//! remembers how far it got: the bytes of a long command that arrives over
//! many reads are each looked at once, and each argument is copied once,
//! however the command is cut (issue 40: starting again from the first
//! byte after every read made a command of 300,000 arguments take 5 s).
//! It takes nothing from the buffer it reads, so a reader that keeps its
//! bytes in a buffer of its own can be cancelled between reads and lose
//! nothing; [`Parser::consume`] drops what was parsed, once per read.
//!
//! The limits and the error texts are Redis 7's (`networking.c`), but for
//! the argument count, which Redis 7 allows up to `i32::MAX`: here it is
//! Redis 6's 1,048,576, a bound on what one command can make a server
//! hold.

use std::io::Write;

/// The longest bulk string accepted: Redis's own default
/// (`proto-max-bulk-len`). A longer length is refused before anything is
/// allocated for it.
pub const MAX_BULK: usize = 512 * 1024 * 1024;
/// The most arguments one command may have (Redis 6: 1024 * 1024).
pub const MAX_ARGS: usize = 1024 * 1024;
/// The most bytes a header (`*3`, `$5`) or inline command line may
/// take with its end not yet received (Redis: 64 KiB): past it, the line
/// is refused.
pub const MAX_LINE: usize = 64 * 1024;

/// What the next bytes hold.
#[derive(Debug, PartialEq)]
pub enum Parsed {
    /// Not a whole command yet: read more.
    Incomplete,
    /// A command's arguments (none for `*0` or an empty line: nothing
    /// to answer).
    Command(Vec<Vec<u8>>),
    /// Bytes no command starts with: answer the error (Redis's text,
    /// after `ERR Protocol error: `) and close.
    Invalid(String),
}

/// Reads the commands of one connection's buffer, from where the last
/// call stopped.
#[derive(Debug, Default)]
pub struct Parser {
    /// Where in the buffer the next unparsed byte is.
    at: usize,
    /// The argument count of the command being read, once its header is.
    count: Option<usize>,
    /// Its arguments whole so far.
    args: Vec<Vec<u8>>,
}

impl Parser {
    /// A parser at the start of a connection.
    pub fn new() -> Parser {
        Parser::default()
    }

    /// The next command in `buf`, read from where the last call stopped:
    /// `buf` is the same buffer, with bytes appended since, and the front
    /// removed only by [`consume`](Parser::consume).
    pub fn parse(&mut self, buf: &[u8]) -> Parsed {
        let count = match self.count {
            Some(count) => count,
            None => match buf.get(self.at) {
                None => return Parsed::Incomplete,
                Some(b'*') => match header(&buf[self.at..], "mbulk count") {
                    Err(parsed) => return parsed,
                    Ok((count, used)) => {
                        if count > MAX_ARGS as i64 {
                            return invalid("invalid multibulk length");
                        }
                        self.at += used;
                        if count <= 0 {
                            return Parsed::Command(Vec::new());
                        }
                        let count = count as usize;
                        self.args = Vec::with_capacity(count.min(1024));
                        self.count = Some(count);
                        count
                    }
                },
                Some(_) => return self.inline(buf),
            },
        };
        while self.args.len() < count {
            let rest = &buf[self.at..];
            match rest.first() {
                None => return Parsed::Incomplete,
                Some(b'$') => {}
                Some(&other) => {
                    return invalid(&format!("expected '$', got '{}'", other as char));
                }
            }
            let (len, used) = match header(rest, "bulk count") {
                Ok(header) => header,
                Err(parsed) => return parsed,
            };
            if !(0..=MAX_BULK as i64).contains(&len) {
                return invalid("invalid bulk length");
            }
            let end = used + len as usize;
            if rest.len() < end + 2 {
                return Parsed::Incomplete;
            }
            if &rest[end..end + 2] != b"\r\n" {
                return invalid("bulk string not followed by CRLF");
            }
            self.args.push(rest[used..end].to_vec());
            self.at += end + 2;
        }
        self.count = None;
        Parsed::Command(std::mem::take(&mut self.args))
    }

    /// A command typed on one line: words separated by spaces.
    fn inline(&mut self, buf: &[u8]) -> Parsed {
        let rest = &buf[self.at..];
        let Some(end) = memchr_newline(rest) else {
            return if rest.len() > MAX_LINE {
                invalid("too big inline request")
            } else {
                Parsed::Incomplete
            };
        };
        let line = rest[..end].strip_suffix(b"\r").unwrap_or(&rest[..end]);
        let args = line
            .split(|b| b.is_ascii_whitespace())
            .filter(|w| !w.is_empty())
            .map(<[u8]>::to_vec)
            .collect();
        self.at += end + 1;
        Parsed::Command(args)
    }

    /// Removes the bytes parsed so far from the front of `buf` (the one
    /// [`parse`](Parser::parse) reads): called before reading more, so a
    /// buffer holds only what is not parsed yet, and its bytes move at most
    /// once per read.
    pub fn consume(&mut self, buf: &mut Vec<u8>) {
        buf.drain(..self.at);
        self.at = 0;
    }
}

fn invalid(why: &str) -> Parsed {
    Parsed::Invalid(why.to_string())
}

/// The integer of the header line at the start of `buf` (`*3\r\n`,
/// `$5\r\n`) and how many bytes the line takes; `Err` with what to
/// answer if the line is not whole yet or not a number.
fn header(buf: &[u8], what: &str) -> Result<(i64, usize), Parsed> {
    let Some(end) = memchr_newline(buf) else {
        return Err(if buf.len() > MAX_LINE {
            invalid(&format!("too big {what} string"))
        } else {
            Parsed::Incomplete
        });
    };
    let number = buf[1..end].strip_suffix(b"\r").and_then(parse_integer);
    match number {
        Some(n) => Ok((n, end + 1)),
        None if what == "mbulk count" => Err(invalid("invalid multibulk length")),
        None => Err(invalid("invalid bulk length")),
    }
}

/// A signed 64-bit integer written as Redis reads one (`string2ll`):
/// decimal digits, an optional `-`, no `+`, no leading zero, no space,
/// in range; `None` otherwise.
pub fn parse_integer(text: &[u8]) -> Option<i64> {
    let (negative, digits) = match text.strip_prefix(b"-") {
        Some(digits) => (true, digits),
        None => (false, text),
    };
    if text == b"0" {
        return Some(0);
    }
    if !matches!(digits.first(), Some(b'1'..=b'9')) || digits.len() > 19 {
        return None;
    }
    let mut magnitude: u64 = 0;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        magnitude = magnitude
            .checked_mul(10)?
            .checked_add(u64::from(d - b'0'))?;
    }
    if negative {
        0i64.checked_sub_unsigned(magnitude)
    } else {
        i64::try_from(magnitude).ok()
    }
}

fn memchr_newline(buf: &[u8]) -> Option<usize> {
    buf.iter().position(|&b| b == b'\n')
}

/// `+OK\r\n` and the like.
pub fn simple(out: &mut Vec<u8>, text: &str) {
    let _ = write!(out, "+{text}\r\n");
}

/// `-ERR ...\r\n`; a CR or LF in `text` (a client's bytes quoted in it)
/// goes out as a space, as Redis sends it, so it cannot end the line early
/// and be read as a reply of its own.
pub fn error(out: &mut Vec<u8>, text: &str) {
    error_bytes(out, text.as_bytes());
}

/// [`error`] of raw bytes.
pub fn error_bytes(out: &mut Vec<u8>, text: &[u8]) {
    out.push(b'-');
    out.extend(
        text.iter()
            .map(|&b| if b == b'\r' || b == b'\n' { b' ' } else { b }),
    );
    out.extend_from_slice(b"\r\n");
}

/// `:n\r\n`.
pub fn integer(out: &mut Vec<u8>, n: i64) {
    let _ = write!(out, ":{n}\r\n");
}

/// The header of a bulk string of `len` bytes; the bytes and `\r\n`
/// follow.
pub fn bulk_header(out: &mut Vec<u8>, len: usize) {
    let _ = write!(out, "${len}\r\n");
}

/// A whole bulk string.
pub fn bulk(out: &mut Vec<u8>, data: &[u8]) {
    bulk_header(out, data.len());
    out.extend_from_slice(data);
    out.extend_from_slice(b"\r\n");
}

/// The null bulk string: a missing key.
pub fn null(out: &mut Vec<u8>) {
    out.extend_from_slice(b"$-1\r\n");
}

/// The header of an array of `n` elements.
pub fn array(out: &mut Vec<u8>, n: usize) {
    let _ = write!(out, "*{n}\r\n");
}

/// Redis's answer to a command it does not know: the name (its first 128
/// bytes) and the arguments quoted until the list passes 128 bytes, each
/// cut to what is left of them, as Redis 7 writes it (a space after each).
pub fn unknown_command(out: &mut Vec<u8>, args: &[Vec<u8>]) {
    let mut text = b"ERR unknown command '".to_vec();
    text.extend_from_slice(&args[0][..args[0].len().min(128)]);
    text.extend_from_slice(b"', with args beginning with: ");
    let mut quoted = Vec::new();
    for arg in &args[1..] {
        if quoted.len() >= 128 {
            break;
        }
        let room = 128 - quoted.len();
        quoted.push(b'\'');
        quoted.extend_from_slice(&arg[..arg.len().min(room)]);
        quoted.extend_from_slice(b"' ");
    }
    text.extend_from_slice(&quoted);
    error_bytes(out, &text);
}
