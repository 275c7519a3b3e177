//! `Connection`: what a handler sees of its connection, the lesson's
//! `Connection` dataclass: the peer's address, `inbuf`, `outbuf`,
//! `last_seen`, and the `queue_send` and `close` of its `Reactor`.

use std::fmt;
use std::net::SocketAddr;
use std::time::Instant;

use super::buffers::{InBuf, OutBuf};

/// One connection's state as its [`Handler`](super::Handler) sees it: the
/// bytes received and not yet consumed (the inbuf), the bytes queued and
/// not yet sent (the outbuf), and the peer's address.
///
/// A `Connection` holds no socket: callbacks only look at and change the
/// buffers, and the connection's task moves the bytes between the buffers
/// and the socket after each callback returns. That is why a callback
/// never waits, and why a handler can be tested without a socket, by
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
/// assert_eq!(conn.outbuf(), b"Hello!\n");
/// ```
#[doc(alias = "Transport")]
pub struct Connection {
    peer: SocketAddr,
    pub(super) inbuf: InBuf,
    pub(super) outbuf: OutBuf,
    pub(super) last_seen: Instant,
    pub(super) closing: bool,
}

impl Connection {
    /// A connection to `peer` with empty buffers and no socket: what
    /// [`serve`](super::serve) starts each accepted client with, and what a
    /// test hands a handler to drive it by hand.
    ///
    /// # Examples
    ///
    /// ```
    /// use ioloop::callbacks::Connection;
    ///
    /// let conn = Connection::new("127.0.0.1:4000".parse().unwrap());
    /// assert!(conn.inbuf().is_empty() && conn.outbuf().is_empty());
    /// assert!(!conn.is_closing());
    /// ```
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
    ///
    /// # Examples
    ///
    /// ```
    /// use ioloop::callbacks::Connection;
    ///
    /// let conn = Connection::new("10.0.0.7:51000".parse().unwrap());
    /// assert_eq!(conn.peer_addr().port(), 51000);
    /// ```
    #[doc(alias = "addr", alias = "peername")]
    pub fn peer_addr(&self) -> SocketAddr {
        self.peer
    }

    /// The bytes received and not yet [consumed](Self::consume), oldest
    /// first: the lesson's `conn.inbuf`.
    ///
    /// Bytes stay here across reads until the handler consumes them, so a
    /// message that arrives in pieces is whole once its last piece is in.
    ///
    /// # Examples
    ///
    /// ```
    /// use ioloop::callbacks::Connection;
    ///
    /// let mut conn = Connection::new("127.0.0.1:4000".parse().unwrap());
    /// conn.feed(b"Hel");
    /// assert_eq!(conn.inbuf().iter().position(|&b| b == b'\n'), None);
    /// conn.feed(b"lo\nwor");
    /// assert_eq!(conn.inbuf(), b"Hello\nwor");
    /// ```
    pub fn inbuf(&self) -> &[u8] {
        self.inbuf.unread()
    }

    /// Drops the first `n` bytes of the [inbuf](Self::inbuf) (all of them
    /// if it holds fewer): the lesson's `del conn.inbuf[:n]`, done by moving
    /// a cursor rather than the bytes.
    ///
    /// # Examples
    ///
    /// ```
    /// use ioloop::callbacks::Connection;
    ///
    /// let mut conn = Connection::new("127.0.0.1:4000".parse().unwrap());
    /// conn.feed(b"Hello\nwor");
    /// let line_end = conn.inbuf().iter().position(|&b| b == b'\n').unwrap();
    /// conn.consume(line_end + 1);
    /// assert_eq!(conn.inbuf(), b"wor");
    /// ```
    pub fn consume(&mut self, n: usize) {
        self.inbuf.consume(n);
    }

    /// Appends `data` to the [outbuf](Self::outbuf); the connection's task
    /// sends it once the callback returns, as much as the kernel takes,
    /// and the rest as the peer makes room. Never waits, never loses a
    /// byte, keeps the order.
    ///
    /// Bytes queued from [`on_disconnect`](super::Handler::on_disconnect)
    /// are not sent: the connection is over by then.
    ///
    /// # Examples
    ///
    /// ```
    /// use ioloop::callbacks::Connection;
    ///
    /// let mut conn = Connection::new("127.0.0.1:4000".parse().unwrap());
    /// conn.queue_send(b"[echo] ");
    /// conn.queue_send(b"hi\n");
    /// assert_eq!(conn.outbuf(), b"[echo] hi\n");
    /// ```
    #[doc(alias = "write", alias = "send")]
    pub fn queue_send(&mut self, data: &[u8]) {
        self.outbuf.push(data);
    }

    /// The bytes queued and not yet sent: the lesson's `conn.outbuf`.
    ///
    /// # Examples
    ///
    /// ```
    /// use ioloop::callbacks::Connection;
    ///
    /// let mut conn = Connection::new("127.0.0.1:4000".parse().unwrap());
    /// assert!(conn.outbuf().is_empty());
    /// conn.queue_send(b"Hello!\n");
    /// assert_eq!(conn.outbuf().len(), 7);
    /// ```
    #[doc(alias = "get_write_buffer_size")]
    pub fn outbuf(&self) -> &[u8] {
        self.outbuf.unsent()
    }

    /// Closes the connection once the outbuf is sent: no more reads, no more
    /// `on_data`; every queued byte goes out, then the write side is shut
    /// down (the peer reads end of stream) and the socket closed, with
    /// [`Disconnect::Closed`](super::Disconnect::Closed).
    ///
    /// Unlike the lesson's `Reactor.close`, which drops whatever is still in
    /// `outbuf`, this is asyncio's `transport.close()`: a reply queued just
    /// before closing, such as an error message, still arrives.
    ///
    /// # Examples
    ///
    /// ```
    /// use ioloop::callbacks::Connection;
    ///
    /// let mut conn = Connection::new("127.0.0.1:4000".parse().unwrap());
    /// conn.queue_send(b"bye\n");
    /// conn.close();
    /// assert!(conn.is_closing());
    /// assert_eq!(conn.outbuf(), b"bye\n", "still to be sent");
    /// ```
    pub fn close(&mut self) {
        self.closing = true;
    }

    /// Whether [`close`](Self::close) was called.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut conn = ioloop::callbacks::Connection::new("127.0.0.1:4000".parse().unwrap());
    /// assert!(!conn.is_closing());
    /// conn.close();
    /// assert!(conn.is_closing());
    /// ```
    pub fn is_closing(&self) -> bool {
        self.closing
    }

    /// When bytes last moved on this connection, either way: the lesson's
    /// `conn.last_seen`. The [idle timeout](super::Config::idle_timeout)
    /// counts from here.
    ///
    /// It counts what the peer reads as well as what it sends, so a client
    /// downloading a long reply is not idle.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Instant;
    /// use ioloop::callbacks::Connection;
    ///
    /// let before = Instant::now();
    /// let conn = Connection::new("127.0.0.1:4000".parse().unwrap());
    /// assert!(conn.last_seen() >= before);
    /// ```
    pub fn last_seen(&self) -> Instant {
        self.last_seen
    }

    /// Appends `data` to the inbuf as if it had been received, for driving
    /// a handler without a socket (asyncio's `feed_data`). No limit
    /// applies.
    ///
    /// # Examples
    ///
    /// ```
    /// use ioloop::callbacks::Connection;
    ///
    /// let mut conn = Connection::new("127.0.0.1:4000".parse().unwrap());
    /// conn.feed(b"ping\n");
    /// assert_eq!(conn.inbuf(), b"ping\n");
    /// ```
    #[doc(alias = "feed_data")]
    pub fn feed(&mut self, data: &[u8]) {
        self.inbuf.extend(data);
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
