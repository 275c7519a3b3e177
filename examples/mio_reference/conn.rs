//! One connection of the reference server: the lesson's `Connection` with
//! its `inbuf` and `outbuf`, and `on_readable` / `on_writable`.

use std::io::{self, Read, Write};

use mio::net::TcpStream;

/// What the server speaks.
#[derive(Clone, Copy)]
pub enum Protocol {
    /// `line_echo`'s protocol.
    Line { max_line: usize },
    /// HTTP/1.1 hello.
    Http,
}

/// Bytes a read is offered at least.
const READ_CHUNK: usize = 4096;

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
            http: matches!(protocol, Protocol::Http).then(crate::http::Connection::default),
        }
    }

    pub fn stream(&mut self) -> &mut TcpStream {
        &mut self.stream
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
    pub fn on_event(&mut self, readable: bool, writable: bool) -> bool {
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
                    if self.closing || n < free {
                        return true; // a short read: the kernel buffer is empty
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return true,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return false,
            }
        }
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
            (Protocol::Line { max_line }, _) => {
                self.end += n;
                self.answer_lines(max_line);
            }
            (Protocol::Http, None) => unreachable!("HTTP connections have their state"),
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
