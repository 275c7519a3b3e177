//! [`Connection`]: one HTTP connection's state, the lesson's `Connection`
//! with its `inbuf`: the bytes of a request head still arriving, and how
//! much of a body is left to skip. Both hello servers drive exactly this,
//! so they read into the same buffer and batch replies the same way.

use super::{BAD_REQUEST, BODY_LEN, MAX_HEAD, OK, OK_CLOSE, OK_KEEP_ALIVE_1_0, Request, parse};

/// The input buffer's size: twice the largest head. What stays buffered
/// between reads is an unfinished head, under [`MAX_HEAD`] bytes, so a read
/// always has room for more than `MAX_HEAD`, and the buffer never grows.
const INBUF: usize = 2 * MAX_HEAD;

/// What the server does once it has sent the replies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Next {
    /// Read more requests.
    Read,
    /// Close the connection: the last reply said so (`Connection: close`,
    /// HTTP/1.0, or a 400).
    Close,
}

/// One HTTP connection's input: a fixed buffer and the request in progress.
pub struct Connection {
    inbuf: Box<[u8]>,
    len: usize,
    /// Body bytes of the current request not yet received.
    body_left: u64,
    /// The reply owed to the request whose body is being skipped: a request
    /// is answered once all of it has arrived, so a reply that closes the
    /// connection never leaves unread bytes behind.
    owed: Option<Reply>,
}

#[derive(Clone, Copy)]
struct Reply {
    bytes: &'static [u8],
    close: bool,
}

impl Default for Connection {
    fn default() -> Self {
        Connection {
            inbuf: vec![0; INBUF].into_boxed_slice(),
            len: 0,
            body_left: 0,
            owed: None,
        }
    }
}

impl Connection {
    /// Where the next read goes. Never empty, so a read of 0 bytes into it
    /// always means end of stream.
    pub fn spare(&mut self) -> &mut [u8] {
        &mut self.inbuf[self.len..]
    }

    /// Takes `n` bytes just read into [`spare`](Self::spare): answers every
    /// complete request buffered, in order, by appending its reply to `out`
    /// (the caller sends `out` in one write), and says what to do next.
    pub fn received(&mut self, n: usize, out: &mut Vec<u8>) -> Next {
        self.len += n;
        let mut at = 0;
        let next = loop {
            if let Some(reply) = self.owed {
                let skip = self.body_left.min((self.len - at) as u64);
                at += skip as usize;
                self.body_left -= skip;
                if self.body_left > 0 {
                    break Next::Read;
                }
                self.owed = None;
                out.extend_from_slice(reply.bytes);
                if reply.close {
                    break Next::Close;
                }
            }
            match parse(&self.inbuf[at..self.len]) {
                Ok(None) => break Next::Read,
                Ok(Some(request)) => {
                    at += request.head_len;
                    self.body_left = request.content_length;
                    self.owed = Some(reply_to(&request));
                }
                Err(_) => {
                    out.extend_from_slice(BAD_REQUEST);
                    break Next::Close;
                }
            }
        };
        // Keep the unfinished head, at the front.
        self.inbuf.copy_within(at..self.len, 0);
        self.len -= at;
        next
    }
}

fn reply_to(request: &Request<'_>) -> Reply {
    let bytes = match (request.keep_alive, request.minor_version) {
        (false, _) => OK_CLOSE,
        (true, 0) => OK_KEEP_ALIVE_1_0,
        (true, _) => OK,
    };
    // HEAD gets GET's head, Content-Length included, without the body
    // (RFC 9110 §9.3.2); sending it would desynchronize the client.
    let bytes = match request.method {
        b"HEAD" => &bytes[..bytes.len() - BODY_LEN],
        _ => bytes,
    };
    Reply {
        bytes,
        close: !request.keep_alive,
    }
}
