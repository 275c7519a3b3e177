//! RESP2, the Redis protocol, as much of it as `redis-cli` and
//! `redis-benchmark` speak: commands come as arrays of bulk strings (or as
//! one inline line, for a person typing), replies go out as simple
//! strings, errors, integers, bulk strings and arrays. Shared by
//! `kv_server` and its tokio twin (included with `#[path]`): pure code, no
//! I/O. Replies are formatted straight into the caller's buffer (`Vec<u8>`
//! is `io::Write`, which cannot fail): no allocation per reply.
//!
//! [`parse`] looks at the bytes received so far and takes nothing until a
//! whole command is there, so a reader that keeps its bytes in a buffer of
//! its own can be cancelled between reads and lose nothing.

use std::io::Write;

/// The longest bulk string accepted: Redis's own default
/// (`proto-max-bulk-len`). A longer length is refused before anything is
/// allocated for it.
pub const MAX_BULK: usize = 512 * 1024 * 1024;
/// The most arguments one command may have (Redis: 1024 * 1024).
pub const MAX_ARGS: usize = 1024 * 1024;
/// The longest header or inline command line (Redis: 64 KiB).
pub const MAX_LINE: usize = 64 * 1024;

/// What the bytes received so far hold.
#[derive(Debug, PartialEq)]
pub enum Parsed {
    /// Not a whole command yet: read more.
    Incomplete,
    /// A command, and how many bytes it took.
    Command(Vec<Vec<u8>>, usize),
    /// Bytes no command starts with: answer the error and close.
    Invalid(&'static str),
}

/// Parses the first command in `buf`.
pub fn parse(buf: &[u8]) -> Parsed {
    if buf.first() != Some(&b'*') {
        return inline(buf);
    }
    let Some((count, mut at)) = number(buf, 0) else {
        return header_state(buf, 0, "invalid multibulk length");
    };
    if count > MAX_ARGS as i64 {
        return Parsed::Invalid("invalid multibulk length");
    }
    let mut args = Vec::with_capacity(count.clamp(0, 16) as usize);
    for _ in 0..count.max(0) {
        if at >= buf.len() {
            return Parsed::Incomplete;
        }
        if buf[at] != b'$' {
            return Parsed::Invalid("expected '$'");
        }
        let Some((len, start)) = number(buf, at) else {
            return header_state(buf, at, "invalid bulk length");
        };
        if !(0..=MAX_BULK as i64).contains(&len) {
            return Parsed::Invalid("invalid bulk length");
        }
        let end = start + len as usize;
        if buf.len() < end + 2 {
            return Parsed::Incomplete;
        }
        if &buf[end..end + 2] != b"\r\n" {
            return Parsed::Invalid("bulk string not followed by CRLF");
        }
        args.push(buf[start..end].to_vec());
        at = end + 2;
    }
    Parsed::Command(args, at)
}

/// The integer of the header line at `at` (`*3\r\n`, `$5\r\n`) and where
/// the next line starts; `None` if the line is incomplete or not a number.
fn number(buf: &[u8], at: usize) -> Option<(i64, usize)> {
    let line_end = at + memchr_newline(&buf[at..])?;
    let digits = buf[at + 1..line_end].strip_suffix(b"\r")?;
    let n = std::str::from_utf8(digits).ok()?.parse().ok()?;
    Some((n, line_end + 1))
}

/// Why [`number`] failed: an incomplete line is `Incomplete` while it is
/// short, a header that is too long or not a number is `Invalid`.
fn header_state(buf: &[u8], at: usize, what: &'static str) -> Parsed {
    match memchr_newline(&buf[at..]) {
        None if buf.len() - at <= MAX_LINE => Parsed::Incomplete,
        None => Parsed::Invalid("too big header line"),
        Some(_) => Parsed::Invalid(what),
    }
}

/// A command typed on one line: words separated by spaces.
fn inline(buf: &[u8]) -> Parsed {
    let Some(end) = memchr_newline(buf) else {
        return if buf.len() > MAX_LINE {
            Parsed::Invalid("too big inline request")
        } else {
            Parsed::Incomplete
        };
    };
    let line = buf[..end].strip_suffix(b"\r").unwrap_or(&buf[..end]);
    let args = line
        .split(|b| b.is_ascii_whitespace())
        .filter(|w| !w.is_empty())
        .map(<[u8]>::to_vec)
        .collect();
    Parsed::Command(args, end + 1)
}

fn memchr_newline(buf: &[u8]) -> Option<usize> {
    buf.iter().position(|&b| b == b'\n')
}

/// `+OK\r\n` and the like.
pub fn simple(out: &mut Vec<u8>, text: &str) {
    let _ = write!(out, "+{text}\r\n");
}

/// `-ERR ...\r\n`.
pub fn error(out: &mut Vec<u8>, text: &str) {
    let _ = write!(out, "-{text}\r\n");
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

/// Redis's answer to a command it does not know.
pub fn unknown_command(out: &mut Vec<u8>, args: &[Vec<u8>]) {
    let mut text = format!(
        "ERR unknown command '{}', with args beginning with:",
        String::from_utf8_lossy(&args[0])
    );
    for arg in &args[1..] {
        text.push_str(&format!(" '{}'", String::from_utf8_lossy(arg)));
    }
    error(out, &text);
}
