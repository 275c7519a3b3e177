//! One connection of the load generator: the messages in flight, the reply
//! being checked, and the bytes not yet accepted by the kernel.

use std::collections::VecDeque;
use std::io::{self, Read, Write};
use std::time::Instant;

use mio::net::TcpStream;

use crate::protocol::Messages;

/// Why a connection stopped.
#[derive(Debug)]
pub enum Fault {
    /// The socket failed (reset, broken pipe, ...).
    Io(io::Error),
    /// The server closed the connection.
    Closed,
    /// The server sent something other than what was expected: the run is
    /// not measuring an echo server, so it stops.
    Mismatch(String),
}

/// An echo connection driven by readiness events.
pub struct Conn {
    pub stream: TcpStream,
    id: usize,
    /// The greeting has been received (always, for protocols without one).
    pub greeted: bool,
    /// Bytes of the current expected reply (or greeting) already matched.
    matched: usize,
    /// Sequence number of the reply being received.
    received: u64,
    /// Sequence number of the next message to send.
    sent: u64,
    /// When each message in flight was sent, oldest first.
    in_flight: VecDeque<Instant>,
    /// Bytes the kernel has not taken yet; `out[..written]` is already sent.
    out: Vec<u8>,
    written: usize,
}

impl Conn {
    pub fn new(stream: TcpStream, id: usize, msgs: &Messages, depth: usize) -> Conn {
        Conn {
            stream,
            id,
            greeted: msgs.greeting().is_empty(),
            matched: 0,
            received: 0,
            sent: 0,
            in_flight: VecDeque::with_capacity(depth),
            out: Vec::new(),
            written: 0,
        }
    }

    /// Reads everything that has arrived, checks it, and calls
    /// `done(sent_at, now)` for each reply completed. Returns how many
    /// replies completed.
    ///
    /// `read_closed` is the event's hang-up flag: with it set, reading goes
    /// on to the end of stream, so a server that closes is noticed.
    pub fn on_readable(
        &mut self,
        msgs: &Messages,
        scratch: &mut [u8],
        read_closed: bool,
        done: &mut impl FnMut(Instant, Instant),
    ) -> Result<usize, Fault> {
        let mut completed = 0;
        loop {
            match self.stream.read(scratch) {
                Ok(0) => return Err(Fault::Closed),
                Ok(n) => {
                    let now = Instant::now();
                    completed += self.check(msgs, &scratch[..n], now, done)?;
                    // On Linux a short read from a TCP socket means its
                    // receive queue is empty; what arrives next raises a new
                    // edge. Stopping here saves the `recv` that would only
                    // say `WouldBlock`, one syscall per message.
                    if n < scratch.len() && !read_closed {
                        return Ok(completed);
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(completed),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(Fault::Io(e)),
            }
        }
    }

    /// Matches `data` against the expected greeting and replies.
    fn check(
        &mut self,
        msgs: &Messages,
        mut data: &[u8],
        now: Instant,
        done: &mut impl FnMut(Instant, Instant),
    ) -> Result<usize, Fault> {
        let mut completed = 0;
        while !data.is_empty() {
            let expected = if !self.greeted {
                msgs.greeting()
            } else if self.in_flight.is_empty() {
                return Err(self.mismatch("bytes with no message in flight", data));
            } else {
                msgs.reply(self.id, self.received)
            };
            let want = &expected[self.matched..];
            let n = want.len().min(data.len());
            if data[..n] != want[..n] {
                return Err(self.mismatch(&format!("expected \"{}\"", show(want)), data));
            }
            self.matched += n;
            data = &data[n..];
            if self.matched == expected.len() {
                self.matched = 0;
                if self.greeted {
                    let sent_at = self.in_flight.pop_front().expect("checked above");
                    done(sent_at, now);
                    self.received += 1;
                    completed += 1;
                } else {
                    self.greeted = true;
                }
            }
        }
        Ok(completed)
    }

    fn mismatch(&self, what: &str, got: &[u8]) -> Fault {
        Fault::Mismatch(format!(
            "connection {}, reply {}: {what}, got \"{}\"",
            self.id,
            self.received,
            show(got)
        ))
    }

    /// Queues the next `count` messages, stamped now, and sends what the
    /// kernel takes.
    pub fn send(&mut self, msgs: &Messages, count: usize) -> Result<(), Fault> {
        if self.written > 0 {
            self.out.drain(..self.written);
            self.written = 0;
        }
        for _ in 0..count {
            self.out.extend_from_slice(msgs.request(self.id, self.sent));
            self.sent += 1;
        }
        let now = Instant::now();
        self.in_flight.extend(std::iter::repeat_n(now, count));
        self.flush()
    }

    /// Sends what is queued, until done or the socket buffer is full.
    pub fn flush(&mut self) -> Result<(), Fault> {
        while self.written < self.out.len() {
            match self.stream.write(&self.out[self.written..]) {
                Ok(n) => {
                    self.written += n;
                    // A short write means the socket buffer is full; the
                    // writable edge will say when it is not.
                    if self.written < self.out.len() {
                        return Ok(());
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(Fault::Io(e)),
            }
        }
        self.out.clear();
        self.written = 0;
        Ok(())
    }
}

/// The start of `bytes`, readable in an error message.
fn show(bytes: &[u8]) -> String {
    let head = &bytes[..bytes.len().min(40)];
    let more = if bytes.len() > head.len() { "..." } else { "" };
    format!("{}{more}", head.escape_ascii())
}
