//! The HTTP/1.1 request parser shared by `http_hello` (ioloop) and
//! `http_hello_tokio` (issue 5: one parser for both, so the comparison
//! measures the runtimes, not two parsers), plus the fixed responses and
//! [`Connection`], the per-connection state both servers drive.
//! Included with `#[path = "../common/http.rs"] mod http;`.
//!
//! Pure functions over byte slices: no I/O, no runtime. The servers differ
//! only in how bytes get in and out.
//!
//! The rules, a subset of RFC 9112 that a hello-world server needs:
//!
//! - Request line `METHOD SP target SP HTTP/1.0|HTTP/1.1`; any other
//!   version is malformed (a 505 in a full server).
//! - Lines end in CRLF, or in a bare LF (RFC 9112 §2.2 allows accepting
//!   it, and `printf 'GET / HTTP/1.1\n\n' | nc` is how people poke
//!   servers). A CR anywhere else is malformed. Empty lines before the
//!   request line are skipped (§2.2).
//! - Header names are tokens, matched case-insensitively. Whitespace before
//!   the colon and obs-fold continuation lines are malformed (§5.1, §5.2).
//! - `Content-Length` is digits only (a list such as `5, 5` is refused);
//!   repeated with one value it is fine, with two it is malformed (§6.3).
//!   The body is skipped as it arrives, never buffered, however long it
//!   claims to be, and the request is answered once all of it is in.
//!   `Expect: 100-continue` is not answered: such a client sends its body
//!   after its own timeout (curl: 1 s).
//! - Any `Transfer-Encoding` is malformed: a hello server has no use for
//!   chunked bodies, and refusing them rules out CL/TE request smuggling.
//! - `Connection: close` closes after the response; HTTP/1.0 closes unless
//!   `Connection: keep-alive`.
//! - The head (request line through the empty line) is at most [`MAX_HEAD`]
//!   bytes; more is malformed (a 431 in a full server).
//!
//! Every malformed request gets [`BAD_REQUEST`] and the connection closes.
//! Every other request gets `Hello, World!` (a HEAD request, its head
//! only); the replies carry no `Date`, to stay fixed bytes.

// Each program that includes this module uses a different part of it
// (a server that keeps its own buffer needs only `parse`).
#![allow(dead_code, unused_imports)]

// Relative to this file: examples/common/http_conn.rs.
#[path = "http_conn.rs"]
mod conn;

pub use conn::{Connection, Next};

/// The longest request head accepted, empty line included: 8 KiB.
pub const MAX_HEAD: usize = 8 * 1024;

/// The response to every request. 1.1 clients keep the connection open
/// without being told; a 1.0 client must be ([`OK_KEEP_ALIVE_1_0`]).
pub const OK: &[u8] =
    b"HTTP/1.1 200 OK\r\nContent-Length: 13\r\nContent-Type: text/plain\r\n\r\nHello, World!";
/// [`OK`] for an HTTP/1.0 client that asked for keep-alive.
pub const OK_KEEP_ALIVE_1_0: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 13\r\nContent-Type: text/plain\r\nConnection: keep-alive\r\n\r\nHello, World!";
/// [`OK`] when the connection closes after it.
pub const OK_CLOSE: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 13\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\nHello, World!";
/// The answer to anything malformed; the connection closes after it.
pub const BAD_REQUEST: &[u8] =
    b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
const BODY_LEN: usize = b"Hello, World!".len();

/// A request head, parsed.
#[derive(Debug, PartialEq, Eq)]
pub struct Request<'a> {
    /// `GET`, `HEAD`, ...: any token.
    pub method: &'a [u8],
    /// The request target as sent, `/` or `/path?query` or a full URL.
    pub target: &'a [u8],
    /// 0 or 1, for HTTP/1.0 or HTTP/1.1.
    pub minor_version: u8,
    /// Whether the connection stays open after the response.
    pub keep_alive: bool,
    /// The body's length: the bytes after the head that belong to this
    /// request and are to be skipped.
    pub content_length: u64,
    /// The head's length in bytes, empty line (and skipped leading empty
    /// lines) included: where the body, or the next request, starts.
    pub head_len: usize,
}

/// Why a request was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Malformed(pub &'static str);

/// Parses the request head at the start of `buf`: `Ok(None)` if it has not
/// all arrived yet. The head is re-scanned from the start on each call; as
/// it is at most 8 KiB, that costs no more than the reads that brought it.
pub fn parse(buf: &[u8]) -> Result<Option<Request<'_>>, Malformed> {
    let mut lines = Lines { buf, at: 0 };
    let first = loop {
        match lines.next()? {
            None => return Ok(None),
            Some(b"") => continue,
            Some(line) => break line,
        }
    };
    let (method, target, minor_version) = request_line(first)?;
    let (mut close, mut keep_alive) = (false, false);
    let mut content_length = None;
    loop {
        let Some(line) = lines.next()? else {
            return Ok(None);
        };
        if line.is_empty() {
            break;
        }
        let (name, value) = header(line)?;
        if name.eq_ignore_ascii_case(b"content-length") {
            let n = length(value)?;
            if content_length.is_some_and(|old| old != n) {
                return Err(Malformed("conflicting Content-Length headers"));
            }
            content_length = Some(n);
        } else if name.eq_ignore_ascii_case(b"transfer-encoding") {
            return Err(Malformed("Transfer-Encoding is not supported"));
        } else if name.eq_ignore_ascii_case(b"connection") {
            for option in value.split(|&b| b == b',').map(trim) {
                close |= option.eq_ignore_ascii_case(b"close");
                keep_alive |= option.eq_ignore_ascii_case(b"keep-alive");
            }
        }
    }
    Ok(Some(Request {
        method,
        target,
        minor_version,
        keep_alive: !close && (minor_version == 1 || keep_alive),
        content_length: content_length.unwrap_or(0),
        head_len: lines.at,
    }))
}

/// The lines of a head, each without its CRLF or LF.
struct Lines<'a> {
    buf: &'a [u8],
    at: usize,
}

impl<'a> Lines<'a> {
    /// The next line; `Ok(None)` if it has not all arrived.
    fn next(&mut self) -> Result<Option<&'a [u8]>, Malformed> {
        let rest = &self.buf[self.at..];
        let Some(lf) = rest.iter().position(|&b| b == b'\n') else {
            // Unfinished, so the head is longer than everything buffered.
            return match self.buf.len() >= MAX_HEAD {
                true => Err(Malformed("request head too large")),
                false => Ok(None),
            };
        };
        self.at += lf + 1;
        if self.at > MAX_HEAD {
            return Err(Malformed("request head too large"));
        }
        let line = &rest[..lf];
        Ok(Some(line.strip_suffix(b"\r").unwrap_or(line)))
    }
}

/// `METHOD SP target SP HTTP/1.x`: method, target, minor version.
fn request_line(line: &[u8]) -> Result<(&[u8], &[u8], u8), Malformed> {
    let mut parts = line.split(|&b| b == b' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(Malformed("request line is not METHOD SP target SP version"));
    };
    if method.is_empty() || !method.iter().all(|&b| is_token(b)) {
        return Err(Malformed("invalid method"));
    }
    if target.is_empty() || !target.iter().all(u8::is_ascii_graphic) {
        return Err(Malformed("invalid request target"));
    }
    match version {
        b"HTTP/1.1" => Ok((method, target, 1)),
        b"HTTP/1.0" => Ok((method, target, 0)),
        _ => Err(Malformed("unsupported HTTP version")),
    }
}

/// `name: value`, the value without surrounding whitespace.
fn header(line: &[u8]) -> Result<(&[u8], &[u8]), Malformed> {
    if line[0] == b' ' || line[0] == b'\t' {
        return Err(Malformed("obsolete header line folding"));
    }
    let Some(colon) = line.iter().position(|&b| b == b':') else {
        return Err(Malformed("header line without a colon"));
    };
    let name = &line[..colon];
    // Also refuses `Name : value`, whitespace before the colon (§5.1).
    if !name.iter().all(|&b| is_token(b)) {
        return Err(Malformed("invalid header name"));
    }
    let value = trim(&line[colon + 1..]);
    // A stray CR or NUL in a value is how header injection starts.
    if value.iter().any(|&b| (b < b' ' && b != b'\t') || b == 0x7f) {
        return Err(Malformed("control character in header value"));
    }
    Ok((name, value))
}

/// A `Content-Length` value: 1*DIGIT, fitting in a u64.
fn length(value: &[u8]) -> Result<u64, Malformed> {
    if value.is_empty() || !value.iter().all(u8::is_ascii_digit) {
        return Err(Malformed("Content-Length is not a number"));
    }
    value
        .iter()
        .try_fold(0u64, |n, &d| {
            n.checked_mul(10)?.checked_add(u64::from(d - b'0'))
        })
        .ok_or(Malformed("Content-Length too large"))
}

/// RFC 9110's `tchar`: what methods and header names are made of.
fn is_token(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// Strips optional whitespace (SP, HTAB) from both ends.
fn trim(mut s: &[u8]) -> &[u8] {
    while let [b' ' | b'\t', rest @ ..] = s {
        s = rest;
    }
    while let [rest @ .., b' ' | b'\t'] = s {
        s = rest;
    }
    s
}
