//! [`Connection`], whole: what a handler sees of its connection (the
//! lesson's `Connection` dataclass, with its `Reactor`'s `queue_send` and
//! `close`), and how its buffers meet the socket.

use std::fmt;
use std::io;
use std::net::SocketAddr;
use std::task::{Context, Poll, ready};

use ioloop_net::TcpStream;
use ioloop_net::io::{InBuf, OutBuf};
use ioloop_runtime::time::Instant;

/// One connection's state as its [`Handler`](crate::Handler) sees it: the
/// bytes received and not yet consumed (the inbuf), the bytes queued and
/// not yet sent (the outbuf), and the peer's address.
///
/// A `Connection` lends no socket to the handler: callbacks only look at
/// and change the buffers, and the connection's task moves the bytes
/// between the buffers and the socket after each callback returns. So a
/// callback never waits, and a handler can be tested without a socket, by
/// feeding a `Connection` bytes ([`new`](Self::new), [`feed`](Self::feed)).
///
/// # Examples
///
/// ```
/// use ioloop::callbacks::{Connection, Handler};
///
/// struct Greeter;
///
/// impl Handler for Greeter {
///     fn on_connect(&mut self, conn: &mut Connection) {
///         conn.queue_send(b"Hello!\n");
///     }
///     fn on_data(&mut self, conn: &mut Connection) {
///         let n = conn.inbuf().len();
///         conn.consume(n);
///     }
/// }
///
/// let mut conn = Connection::new("127.0.0.1:9103".parse().unwrap());
/// Greeter.on_connect(&mut conn);
/// conn.feed(b"hi\n");
/// Greeter.on_data(&mut conn);
/// assert_eq!((conn.inbuf(), conn.outbuf()), (&b""[..], &b"Hello!\n"[..]));
/// ```
#[doc(alias = "Transport")]
pub struct Connection {
    peer: SocketAddr,
    inbuf: InBuf,
    outbuf: OutBuf,
    last_seen: Instant,
    closing: bool,
}

impl Connection {
    /// A connection to `peer` with empty buffers and no socket: what
    /// [`serve`](crate::serve) starts each accepted client with, and what a
    /// test hands a handler to drive it by hand.
    pub fn new(peer: SocketAddr) -> Connection {
        Connection {
            peer,
            inbuf: InBuf::default(),
            outbuf: OutBuf::default(),
            last_seen: Instant::now(),
            closing: false,
        }
    }

    /// The address of the peer: the lesson's `conn.addr`.
    #[doc(alias = "addr", alias = "peername")]
    pub fn peer_addr(&self) -> SocketAddr {
        self.peer
    }

    /// The bytes received and not yet [consumed](Self::consume), oldest
    /// first: the lesson's `conn.inbuf`. Bytes stay here across reads
    /// until the handler consumes them, so a message that arrives in pieces
    /// is whole once its last piece is in.
    #[inline]
    pub fn inbuf(&self) -> &[u8] {
        self.inbuf.unread()
    }

    /// Drops the first `n` bytes of the [inbuf](Self::inbuf) (all of them
    /// if it holds fewer): the lesson's `del conn.inbuf[:n]`, done by moving
    /// a cursor rather than the bytes.
    pub fn consume(&mut self, n: usize) {
        self.inbuf.consume(n);
    }

    /// Appends `data` to the [outbuf](Self::outbuf); the connection's task
    /// sends it once the callback returns, as much as the kernel takes,
    /// and the rest as the peer makes room. Never waits, never loses a
    /// byte, keeps the order.
    ///
    /// Bytes queued from [`on_disconnect`](crate::Handler::on_disconnect)
    /// are not sent: the connection is over by then.
    #[doc(alias = "write", alias = "send")]
    pub fn queue_send(&mut self, data: &[u8]) {
        self.outbuf.push(data);
    }

    /// The bytes queued and not yet sent: the lesson's `conn.outbuf`.
    #[doc(alias = "get_write_buffer_size")]
    #[inline]
    pub fn outbuf(&self) -> &[u8] {
        self.outbuf.unsent()
    }

    /// Closes the connection once the outbuf is sent: no more reads, no more
    /// `on_data`; every queued byte goes out, then the write side is shut
    /// down (the peer reads end of stream) and the socket closed, with
    /// [`Disconnect::Closed`](crate::Disconnect::Closed).
    ///
    /// Unlike the lesson's `Reactor.close`, which drops whatever is still in
    /// `outbuf`, this is asyncio's `transport.close()`: a reply queued just
    /// before closing still arrives.
    pub fn close(&mut self) {
        self.closing = true;
    }

    /// Whether [`close`](Self::close) was called.
    pub fn is_closing(&self) -> bool {
        self.closing
    }

    /// When bytes last moved on this connection, either way (a client
    /// downloading a long reply is not idle): the lesson's
    /// `conn.last_seen`. The [idle timeout](crate::Config::idle_timeout)
    /// counts from here.
    pub fn last_seen(&self) -> Instant {
        self.last_seen
    }

    /// Appends `data` to the inbuf as if it had been received, for driving
    /// a handler without a socket (asyncio's `feed_data`). No limit
    /// applies.
    #[doc(alias = "feed_data")]
    pub fn feed(&mut self, data: &[u8]) {
        self.inbuf.extend(data);
    }

    /// Reads once from `stream` into the inbuf, which never holds more than
    /// `max_inbuf + 1` bytes: a message of exactly `max_inbuf` bytes still
    /// has room for its terminator, and one byte more is too long. Returns
    /// how many bytes came; 0 is the end of the stream.
    pub(crate) fn poll_read(
        &mut self,
        cx: &mut Context<'_>,
        stream: &TcpStream,
        max_inbuf: usize,
    ) -> Poll<io::Result<usize>> {
        let room = max_inbuf.saturating_add(1).saturating_sub(self.inbuf.len());
        let n = ready!(self.inbuf.poll_fill(cx, &mut &*stream, max_inbuf, room))?;
        if n > 0 {
            self.last_seen = Instant::now();
        }
        Poll::Ready(Ok(n))
    }

    /// Sends the outbuf until it is empty (`Ready(Ok)`) or the kernel's
    /// buffer is full (`Pending`, with the task's waker left for WRITE).
    #[inline]
    pub(crate) fn poll_send(
        &mut self,
        cx: &mut Context<'_>,
        stream: &TcpStream,
    ) -> Poll<io::Result<()>> {
        let queued = self.outbuf.len();
        let sent = self.outbuf.poll_send_down_to(cx, &mut &*stream, 0);
        if self.outbuf.len() < queued {
            self.last_seen = Instant::now();
        }
        sent
    }
}

impl fmt::Debug for Connection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Connection")
            .field("peer", &self.peer)
            .field("inbuf", &self.inbuf.len())
            .field("outbuf", &self.outbuf.len())
            .field("closing", &self.closing)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::Connection;

    fn conn() -> Connection {
        Connection::new("127.0.0.1:9103".parse().unwrap())
    }

    #[test]
    fn the_outbuf_holds_every_queued_byte_in_order_until_sent() {
        let mut conn = conn();
        assert_eq!(conn.outbuf(), b"");
        conn.queue_send(b"one\n");
        conn.queue_send(b"");
        conn.queue_send(b"two\n");
        assert_eq!(conn.outbuf(), b"one\ntwo\n");
        // Closing keeps what is queued, to be sent: nothing is dropped.
        conn.close();
        assert!(conn.is_closing());
        assert_eq!(conn.outbuf(), b"one\ntwo\n");
    }

    #[test]
    fn the_inbuf_keeps_what_is_fed_until_consumed_and_consume_stops_at_its_end() {
        let mut conn = conn();
        assert_eq!(conn.peer_addr(), "127.0.0.1:9103".parse().unwrap());
        assert!(!conn.is_closing());
        conn.feed(b"hel");
        conn.feed(b"lo\nwor");
        assert_eq!(conn.inbuf(), b"hello\nwor");
        conn.consume(6);
        assert_eq!(conn.inbuf(), b"wor");
        // The inbuf and the outbuf are apart.
        assert_eq!(conn.outbuf(), b"");
        conn.consume(10);
        assert_eq!(conn.inbuf(), b"");
        let debug = format!("{conn:?}");
        assert!(
            debug.contains("inbuf: 0") && debug.contains("closing: false"),
            "{debug}"
        );
    }
}
