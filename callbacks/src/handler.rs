//! [`Handler`], a connection's callbacks, and [`Disconnect`], why it ended.

use std::io;

use crate::connection::Connection;

/// The callbacks of one connection (the lesson's `LineEchoServer`
/// overrides; asyncio's `Protocol`). [`serve`](crate::serve) makes one per
/// accepted connection and calls, on its task:
///
/// 1. [`on_connect`](Self::on_connect), once;
/// 2. [`on_data`](Self::on_data) after every read, then
///    [`on_inbuf_full`](Self::on_inbuf_full) past
///    [`max_inbuf`](crate::Config::max_inbuf) bytes unconsumed;
/// 3. [`on_eof`](Self::on_eof) if the peer closes its side;
/// 4. [`on_disconnect`](Self::on_disconnect), once, last.
///
/// A callback never waits (its replies are sent after); only `on_data` is required.
///
/// # Panics
///
/// A panic in a callback ends its connection alone, without `on_disconnect`.
#[doc(alias = "Reactor", alias = "Protocol")]
pub trait Handler {
    /// The connection was accepted: greet, or set up state.
    #[doc(alias = "connection_made")]
    fn on_connect(&mut self, conn: &mut Connection) {
        let _ = conn;
    }

    /// Bytes arrived, at the end of [`conn.inbuf()`](Connection::inbuf):
    /// [consume](Connection::consume) each whole message, leave a partial one.
    #[doc(alias = "data_received")]
    fn on_data(&mut self, conn: &mut Connection);

    /// The inbuf holds more than `max_inbuf` bytes after `on_data`. Unless
    /// this consumes enough, the connection then closes (its outbuf sent)
    /// with [`Disconnect::InbufFull`].
    fn on_inbuf_full(&mut self, conn: &mut Connection) {
        let _ = conn;
    }

    /// The peer closed its side; the inbuf holds what it left unterminated.
    /// Replies queued here are sent, then [`Disconnect::PeerClosed`].
    #[doc(alias = "eof_received")]
    fn on_eof(&mut self, conn: &mut Connection) {
        let _ = conn;
    }

    /// The connection is over, for `reason`, and closes when this returns;
    /// its outbuf holds what was never sent (nothing, after a clean end).
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
    /// [`Connection::close`] was called, and everything queued was sent.
    Closed,
    /// Idle for [`idle_timeout`](crate::Config::idle_timeout).
    Idle,
    /// More than `max_inbuf` bytes unconsumed after
    /// [`Handler::on_inbuf_full`]; what was queued was sent.
    InbufFull,
    /// The socket failed: a reset, a broken pipe. Queued bytes may be lost.
    Failed(io::Error),
}

impl Disconnect {
    /// Whether the connection ended on a socket error.
    pub fn is_failure(&self) -> bool {
        matches!(self, Disconnect::Failed(_))
    }
}

#[cfg(test)]
mod tests {
    use super::Disconnect;
    use std::io;

    #[test]
    fn only_a_socket_error_is_a_failure() {
        let failed = Disconnect::Failed(io::ErrorKind::ConnectionReset.into());
        assert!(failed.is_failure());
        for clean in [
            Disconnect::PeerClosed,
            Disconnect::Closed,
            Disconnect::Idle,
            Disconnect::InbufFull,
        ] {
            assert!(!clean.is_failure(), "{clean:?}");
        }
    }
}
