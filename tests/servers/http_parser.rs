//! The request parser shared by the hello servers
//! (examples/common/http.rs): what it accepts, what it refuses, and how
//! `Connection` turns buffered bytes into replies.

use crate::http;

use http::{BAD_REQUEST, Connection, MAX_HEAD, Malformed, Next, OK, OK_CLOSE, Request, parse};

fn request(buf: &[u8]) -> Request<'_> {
    parse(buf).expect("well-formed").expect("complete")
}

fn refused(buf: &[u8]) -> &'static str {
    match parse(buf) {
        Err(Malformed(why)) => why,
        other => panic!("accepted {:?}: {other:?}", String::from_utf8_lossy(buf)),
    }
}

#[test]
fn a_simple_get_is_parsed() {
    let buf = b"GET /index.html HTTP/1.1\r\nHost: x\r\n\r\nNEXT";
    let r = request(buf);
    assert_eq!(r.method, b"GET");
    assert_eq!(r.target, b"/index.html");
    assert_eq!(r.minor_version, 1);
    assert!(r.keep_alive);
    assert_eq!(r.content_length, 0);
    assert_eq!(&buf[r.head_len..], b"NEXT");
}

#[test]
fn every_prefix_of_a_request_needs_more() {
    let buf = b"POST /p HTTP/1.1\r\nContent-Length: 3\r\n\r\n";
    for end in 0..buf.len() {
        assert_eq!(parse(&buf[..end]), Ok(None), "prefix of {end} bytes");
    }
    assert_eq!(request(buf).head_len, buf.len());
}

#[test]
fn bare_lf_line_ends_and_leading_empty_lines_are_accepted() {
    let buf = b"\r\n\nGET / HTTP/1.1\nHost: x\n\n";
    assert_eq!(request(buf).head_len, buf.len());
}

#[test]
fn keep_alive_follows_version_and_connection_header() {
    let cases: [(&[u8], bool); 6] = [
        (b"GET / HTTP/1.1\r\n\r\n", true),
        (b"GET / HTTP/1.1\r\nConnection: close\r\n\r\n", false),
        (
            b"GET / HTTP/1.1\r\nconnection: Upgrade, CLOSE\r\n\r\n",
            false,
        ),
        (b"GET / HTTP/1.0\r\n\r\n", false),
        (b"GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n", true),
        (
            b"GET / HTTP/1.0\r\nConnection: keep-alive, close\r\n\r\n",
            false,
        ),
    ];
    for (buf, keep_alive) in cases {
        assert_eq!(request(buf).keep_alive, keep_alive, "{buf:?}");
    }
}

#[test]
fn content_length_is_read_case_insensitively_and_may_repeat_itself() {
    let r = request(b"POST / HTTP/1.1\r\ncOnTeNt-LeNgTh:  42 \r\nContent-Length: 42\r\n\r\n");
    assert_eq!(r.content_length, 42);
}

#[test]
fn bad_lengths_and_transfer_encoding_are_refused() {
    let cases: [&[u8]; 6] = [
        b"POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
        b"POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n",
        b"POST / HTTP/1.1\r\nContent-Length: 1, 1\r\n\r\n",
        b"POST / HTTP/1.1\r\nContent-Length:\r\n\r\n",
        b"POST / HTTP/1.1\r\nContent-Length: 99999999999999999999999\r\n\r\n",
        b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n",
    ];
    for buf in cases {
        refused(buf);
    }
}

#[test]
fn malformed_request_lines_and_headers_are_refused() {
    let cases: [&[u8]; 11] = [
        b"GET /\r\n\r\n",
        b"GET  / HTTP/1.1\r\n\r\n",
        b"GET / HTTP/1.1 extra\r\n\r\n",
        b"GET / HTTP/2.0\r\n\r\n",
        b"GET / http/1.1\r\n\r\n",
        b"G(T / HTTP/1.1\r\n\r\n",
        b"GET /\x01 HTTP/1.1\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost : x\r\n\r\n",
        b"GET / HTTP/1.1\r\nNoColon\r\n\r\n",
        b"GET / HTTP/1.1\r\nA: b\r\n folded\r\n\r\n",
        b"GET / HTTP/1.1\r\nA: b\rc\r\n\r\n",
    ];
    for buf in cases {
        refused(buf);
    }
    // Malformed is malformed before the head ends, too.
    refused(b"GET / HTTP/2.0\r\n");
}

#[test]
fn the_head_limit_is_exact() {
    let head = |len: usize| {
        let mut buf = b"GET / HTTP/1.1\r\nX: ".to_vec();
        buf.resize(len - 4, b'a');
        buf.extend_from_slice(b"\r\n\r\n");
        buf
    };
    assert_eq!(request(&head(MAX_HEAD)).head_len, MAX_HEAD);
    assert_eq!(refused(&head(MAX_HEAD + 1)), "request head too large");
    // Unfinished but already too long: refused without waiting for the end.
    assert_eq!(
        refused(&head(2 * MAX_HEAD)[..MAX_HEAD]),
        "request head too large"
    );
    assert_eq!(parse(&head(2 * MAX_HEAD)[..MAX_HEAD - 1]), Ok(None));
}

/// Feeds `input` to a fresh `Connection` in chunks of `chunk` bytes;
/// returns the replies (as text, for readable failures) and the last `Next`.
fn feed(input: &[u8], chunk: usize) -> (String, Next) {
    let mut conn = Connection::default();
    let (mut out, mut next) = (Vec::new(), Next::Read);
    for piece in input.chunks(chunk) {
        conn.spare()[..piece.len()].copy_from_slice(piece);
        next = conn.received(piece.len(), &mut out);
        if next == Next::Close {
            break;
        }
    }
    (String::from_utf8(out).unwrap(), next)
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).unwrap()
}

#[test]
fn a_connection_answers_pipelined_requests_in_order_whatever_the_chunking() {
    let mut input = Vec::new();
    input.extend_from_slice(b"GET / HTTP/1.1\r\n\r\n");
    input.extend_from_slice(b"POST / HTTP/1.1\r\nContent-Length: 11\r\n\r\nGET / HTTP/");
    input.extend_from_slice(b"HEAD / HTTP/1.1\r\n\r\n");
    input.extend_from_slice(b"GET / HTTP/1.1\r\nConnection: close\r\n\r\n");
    let mut expected = [OK, OK].concat();
    expected.extend_from_slice(&OK[..OK.len() - b"Hello, World!".len()]);
    expected.extend_from_slice(OK_CLOSE);
    for chunk in [1, 2, 7, 64, input.len()] {
        assert_eq!(
            feed(&input, chunk),
            (text(&expected), Next::Close),
            "{chunk}"
        );
    }
}

#[test]
fn a_connection_skips_a_huge_body_without_holding_it() {
    let mut conn = Connection::default();
    let mut out = Vec::new();
    let head = b"PUT / HTTP/1.1\r\nContent-Length: 1000000\r\n\r\n";
    conn.spare()[..head.len()].copy_from_slice(head);
    assert_eq!(conn.received(head.len(), &mut out), Next::Read);
    let mut left = 1_000_000;
    while left > 0 {
        let spare = conn.spare();
        // Everything was skipped: the whole buffer is free every time.
        assert_eq!(spare.len(), 2 * MAX_HEAD);
        let n = spare.len().min(left);
        spare[..n].fill(b'x');
        assert_eq!(conn.received(n, &mut out), Next::Read);
        left -= n;
        assert_eq!(
            out.is_empty(),
            left > 0,
            "answered only once the body is in"
        );
    }
    assert_eq!(out, OK);
}

#[test]
fn a_connection_refuses_garbage_with_400_and_close() {
    let input = b"GET / HTTP/1.1\r\n\r\nnonsense\r\n\r\n";
    let expected = text(&[OK, BAD_REQUEST].concat());
    assert_eq!(feed(input, 5), (expected, Next::Close));
    let endless = vec![b'a'; 3 * MAX_HEAD];
    assert_eq!(feed(&endless, 1000), (text(BAD_REQUEST), Next::Close));
}
