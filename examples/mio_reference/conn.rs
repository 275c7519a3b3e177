//! One connection of the reference server: the lesson's `Connection` with
//! its `inbuf` and `outbuf`, and `on_readable` / `on_writable`.

use std::io::{self, Read, Write};
use std::time::{Duration, Instant};

use mio::net::TcpStream;

/// What the server speaks.
#[derive(Clone, Copy)]
pub enum Protocol {
    /// `tcp_echo`'s work: the bytes back as they come, no framing.
    Plain,
    /// `line_echo`'s protocol, with its idle timeout (`None`: none).
    Line {
        max_line: usize,
        idle: Option<Duration>,
    },
    /// HTTP/1.1 hello.
    Http,
}

/// Bytes a read is offered at least.
const READ_CHUNK: usize = 4096;
/// The plain echo's read buffer: `tcp_echo`'s.
const PLAIN_BUF: usize = 16 * 1024;

pub struct Conn {
    stream: TcpStream,
    protocol: Protocol,
    /// `inbuf[start..end]` holds bytes read and not yet answered.
    inbuf: Vec<u8>,
    start: usize,
    end: usize,
    /// `outbuf[sent..]` waits for room in the kernel's send buffer.
    outbuf: Vec<u8>,
    sent: usize,
    /// Close once the outbuf is empty (the peer is done, or broke a rule).
    closing: bool,
    /// The peer has shut its side (the event said so): a short read no
    /// longer means the buffer is empty, for the end of the stream may wait
    /// behind the bytes, with no edge of its own to come.
    read_closed: bool,
    /// The plain echo: the socket may hold bytes not read yet (a readable
    /// edge came, and no read has found the kernel buffer empty since).
    unread: bool,
    /// The lesson's `last_seen`: when bytes last arrived (with an idle
    /// timeout only).
    last_seen: Instant,
    /// The HTTP request state, shared with the HTTP examples.
    http: Option<crate::http::Connection>,
}

impl Conn {
    pub fn new(stream: TcpStream, protocol: Protocol) -> Conn {
        Conn {
            stream,
            protocol,
            inbuf: Vec::new(),
            start: 0,
            end: 0,
            outbuf: Vec::new(),
            sent: 0,
            closing: false,
            read_closed: false,
            unread: false,
            last_seen: Instant::now(),
            http: matches!(protocol, Protocol::Http).then(crate::http::Connection::default),
        }
    }

    pub fn stream(&mut self) -> &mut TcpStream {
        &mut self.stream
    }

    /// When the idle timeout of a connection silent since then falls due.
    pub fn idle_deadline(&self, idle: Duration) -> Instant {
        self.last_seen + idle
    }

    /// The lesson's `on_connect`: queue the greeting. Returns whether the
    /// connection lives.
    pub fn greet(&mut self) -> bool {
        if let Protocol::Line { .. } = self.protocol {
            self.outbuf.extend_from_slice(b"Hello!\n");
            return self.flush();
        }
        true
    }

    /// Handles one readiness event; returns whether the connection lives.
    pub fn on_event(&mut self, readable: bool, writable: bool, read_closed: bool) -> bool {
        self.read_closed |= read_closed;
        if let Protocol::Plain = self.protocol {
            return self.on_plain_event(readable);
        }
        if readable && !self.closing && !self.read_and_answer() {
            return false;
        }
        if (readable || writable) && !self.flush() {
            return false;
        }
        !(self.closing && self.sent == self.outbuf.len())
    }

    /// Reads until the kernel buffer is empty, answering every complete
    /// request as it goes. Returns `false` on a read error.
    fn read_and_answer(&mut self) -> bool {
        loop {
            let spare = match &mut self.http {
                Some(http) => http.spare(),
                None => {
                    self.make_room();
                    &mut self.inbuf[self.end..]
                }
            };
            let free = spare.len();
            match self.stream.read(spare) {
                Ok(0) => {
                    self.closing = true; // peer closed: answer what we have, then close
                    return true;
                }
                Ok(n) => {
                    self.answer(n);
                    if self.closing || (n < free && !self.read_closed) {
                        return true; // a short read: the kernel buffer is empty
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return true,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return false,
            }
        }
    }

    /// The plain echo, as `tcp_echo` does it: read, send all of it back,
    /// read again. What the kernel refuses waits in the outbuf, and reading
    /// waits for it (`write_all` before the next `read`); the writable edge
    /// that empties it resumes reading.
    fn on_plain_event(&mut self, readable: bool) -> bool {
        self.unread |= readable;
        if !self.flush() {
            return false;
        }
        if self.unread && self.outbuf.is_empty() && !self.closing && !self.read_and_echo() {
            return false;
        }
        !(self.closing && self.outbuf.is_empty())
    }

    /// Reads and echoes until the kernel buffer is empty or refuses an
    /// echo. Returns `false` on an error.
    fn read_and_echo(&mut self) -> bool {
        if self.inbuf.len() < PLAIN_BUF {
            self.inbuf.resize(PLAIN_BUF, 0);
        }
        loop {
            match self.stream.read(&mut self.inbuf) {
                Ok(0) => {
                    self.closing = true;
                    self.unread = false;
                    return true;
                }
                Ok(n) => {
                    if !self.send_or_keep(n) {
                        return false;
                    }
                    if !self.outbuf.is_empty() {
                        return true; // refused: the rest waits for a writable edge
                    }
                    if n < self.inbuf.len() && !self.read_closed {
                        self.unread = false; // a short read: the kernel buffer is empty
                        return true;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.unread = false;
                    return true;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return false,
            }
        }
    }

    /// Sends `inbuf[..n]` straight from the read buffer; what the kernel
    /// does not take is copied to the outbuf. Returns `false` on an error.
    fn send_or_keep(&mut self, n: usize) -> bool {
        let mut sent = 0;
        while sent < n {
            match self.stream.write(&self.inbuf[sent..n]) {
                Ok(k) => sent += k,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return false,
            }
        }
        self.outbuf.extend_from_slice(&self.inbuf[sent..n]);
        true
    }

    /// At least `READ_CHUNK` free bytes after `end`: compact, then grow.
    fn make_room(&mut self) {
        if self.start == self.end {
            self.start = 0;
            self.end = 0;
        }
        if self.inbuf.len() - self.end >= READ_CHUNK {
            return;
        }
        if self.start > 0 {
            self.inbuf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        if self.inbuf.len() - self.end < READ_CHUNK {
            let size = (self.inbuf.len() * 2).max(2 * READ_CHUNK);
            self.inbuf.resize(size, 0);
        }
    }

    /// Takes `n` bytes just read and answers every complete request.
    fn answer(&mut self, n: usize) {
        match (self.protocol, &mut self.http) {
            (Protocol::Http, Some(http)) => {
                if http.received(n, &mut self.outbuf) == crate::http::Next::Close {
                    self.closing = true;
                }
            }
            (Protocol::Line { max_line, idle }, _) => {
                if idle.is_some() {
                    self.last_seen = Instant::now();
                }
                self.end += n;
                self.answer_lines(max_line);
            }
            (Protocol::Http, None) => unreachable!("HTTP connections have their state"),
            (Protocol::Plain, _) => unreachable!("the plain echo reads in read_and_echo"),
        }
    }

    fn answer_lines(&mut self, max_line: usize) {
        while let Some(at) = self.inbuf[self.start..self.end]
            .iter()
            .position(|&b| b == b'\n')
        {
            let mut line = &self.inbuf[self.start..self.start + at];
            if line.len() > max_line {
                return self.refuse(max_line);
            }
            if let [rest @ .., b'\r'] = line {
                line = rest;
            }
            self.outbuf.extend_from_slice(b"[echo] ");
            self.outbuf.extend_from_slice(line);
            self.outbuf.push(b'\n');
            self.start += at + 1;
        }
        if self.end - self.start > max_line {
            self.refuse(max_line);
        }
    }

    fn refuse(&mut self, max_line: usize) {
        let msg = format!("ERR line longer than {max_line} bytes\n");
        self.outbuf.extend_from_slice(msg.as_bytes());
        self.start = self.end;
        self.closing = true;
    }

    /// The lesson's `on_writable`: send what the kernel takes; keep the rest.
    fn flush(&mut self) -> bool {
        while self.sent < self.outbuf.len() {
            match self.stream.write(&self.outbuf[self.sent..]) {
                Ok(n) => {
                    self.sent += n;
                    if self.sent < self.outbuf.len() {
                        return true; // a short write: the send buffer is full
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return true,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return false,
            }
        }
        self.outbuf.clear();
        self.sent = 0;
        true
    }
}
