//! [`Handler`], the callbacks a connection's events go to (what the
//! lesson's `LineEchoServer` overrides), and [`Disconnect`], why it ended.

use std::io;

use super::connection::Connection;

/// The callbacks of one connection: what the lesson's `LineEchoServer`
/// overrides on its `Reactor`, and what asyncio calls a `Protocol`.
///
/// [`serve`](super::serve) makes one handler per accepted connection, with
/// the factory it is given, and calls it on that connection's task:
///
/// 1. [`on_connect`](Self::on_connect), once;
/// 2. [`on_data`](Self::on_data) after every read, then
///    [`on_inbuf_full`](Self::on_inbuf_full) if more than
///    [`max_inbuf`](super::Config::max_inbuf) bytes were left unconsumed;
/// 3. [`on_eof`](Self::on_eof) if the peer closes its side;
/// 4. [`on_disconnect`](Self::on_disconnect), once, when it is over.
///
/// A callback never waits: it reads the inbuf, queues replies with
/// [`queue_send`](Connection::queue_send), and returns; the task sends them
/// afterwards. Only `on_data` must be written; the others do nothing by
/// default. A handler's fields are its connection's state; what all
/// connections share is captured by the factory, in an `Arc`.
///
/// # Panics
///
/// A panic in a callback ends that connection's task only: its socket is
/// closed without `on_disconnect`, and the server and the other
/// connections go on.
///
/// # Examples
///
/// ```
/// use futures_util::io::AsyncWriteExt;
/// use ioloop::callbacks::{Connection, Handler, serve};
/// use ioloop::io::StreamReader;
/// use ioloop::net::{TcpListener, TcpStream};
///
/// /// Answers each line with its length.
/// struct Lengths;
///
/// impl Handler for Lengths {
///     fn on_data(&mut self, conn: &mut Connection) {
///         while let Some(end) = conn.inbuf().iter().position(|&b| b == b'\n') {
///             conn.consume(end + 1);
///             conn.queue_send(format!("{end}\n").as_bytes());
///         }
///     }
/// }
///
/// ioloop::block_on(async {
///     let listener = TcpListener::bind("127.0.0.1:0").await?;
///     let addr = listener.local_addr()?;
///     ioloop::spawn(serve(listener, || Lengths));
///     let mut client = TcpStream::connect(addr).await?;
///     client.write_all(b"four\nsix...\n").await?;
///     let mut replies = StreamReader::new(&client);
///     assert_eq!(replies.read_line().await?, Some(&b"4"[..]));
///     assert_eq!(replies.read_line().await?, Some(&b"6"[..]));
///     Ok::<_, std::io::Error>(())
/// })
/// .unwrap();
/// ```
#[doc(alias = "Reactor", alias = "Protocol")]
pub trait Handler {
    /// The connection was accepted: greet, or set up state.
    #[doc(alias = "connection_made")]
    fn on_connect(&mut self, conn: &mut Connection) {
        let _ = conn;
    }

    /// Bytes arrived: they are at the end of [`conn.inbuf()`](Connection::inbuf).
    /// Take out every whole message, [consume](Connection::consume) it, and
    /// leave a partial one for the next call: TCP delivers bytes, not
    /// messages, and a message may come in any number of pieces.
    #[doc(alias = "data_received")]
    fn on_data(&mut self, conn: &mut Connection);

    /// After `on_data`, the inbuf still holds more than
    /// [`max_inbuf`](super::Config::max_inbuf) bytes: the peer is sending a
    /// message longer than the limit.
    ///
    /// Once it returns, the connection is closed (after the outbuf is
    /// sent) with [`Disconnect::InbufFull`], unless the handler consumed
    /// enough to be back within the limit: queue an error reply here, or
    /// skip the long message and go on.
    fn on_inbuf_full(&mut self, conn: &mut Connection) {
        let _ = conn;
    }

    /// The peer closed its side: nothing more will arrive. What is left in
    /// the inbuf is a last message without its terminator; replies queued
    /// here are still sent. Then the connection is closed with
    /// [`Disconnect::PeerClosed`].
    #[doc(alias = "eof_received")]
    fn on_eof(&mut self, conn: &mut Connection) {
        let _ = conn;
    }

    /// The connection is over, for `reason`; its socket is closed when this
    /// returns. Called once, last.
    ///
    /// The connection is lent read-only: nothing can be sent any more.
    /// After a clean end its outbuf is empty; after a failure it holds what
    /// was never sent.
    #[doc(alias = "connection_lost")]
    fn on_disconnect(&mut self, conn: &Connection, reason: Disconnect) {
        let _ = (conn, reason);
    }
}

/// Why a connection ended: what [`Handler::on_disconnect`] is told.
#[derive(Debug)]
pub enum Disconnect {
    /// The peer closed its side, and everything queued was sent.
    PeerClosed,
    /// The handler called [`Connection::close`], and everything queued was
    /// sent.
    Closed,
    /// Nothing moved either way for the
    /// [idle timeout](super::Config::idle_timeout).
    Idle,
    /// The handler left more than [`max_inbuf`](super::Config::max_inbuf)
    /// bytes unconsumed, even after [`Handler::on_inbuf_full`]; what it
    /// queued was sent.
    InbufFull,
    /// The socket failed: a reset, a broken pipe. Queued bytes may be lost.
    Failed(io::Error),
}

impl Disconnect {
    /// Whether the connection ended on a socket error rather than on
    /// purpose.
    pub fn is_failure(&self) -> bool {
        matches!(self, Disconnect::Failed(_))
    }
}
