//! One connection's task: the lesson's `_read`, `_write`, idle pass and
//! `close` for a single socket, with `sel.select` replaced by the
//! reactor's wakers.
//!
//! # Where `sel.modify` went
//!
//! The lesson listens for WRITE only while `outbuf` holds bytes, switching
//! with `sel.modify`, because `select` is level-triggered: a socket with
//! room in its send buffer is reported writable on every call, and a loop
//! listening for WRITE with nothing to write spins at 100% CPU.
//!
//! Here the socket is registered once, for both directions, edge-triggered,
//! and the reactor wakes a task for a direction only through a waker the
//! task left there, which `poll_write` leaves only when it returns
//! `Pending`: when there were bytes to send and the kernel's buffer was
//! full. [`Driver::poll_step`] calls `poll_write` only while the outbuf
//! holds bytes, so listening for WRITE means exactly "unsent bytes, and no
//! room for them yet": `queue_send`'s `modify(READ | WRITE)` and
//! `on_writable`'s `modify(READ)` happen by themselves, and an empty outbuf
//! costs nothing. Reading works the same way: while the outbuf is above its
//! high-water mark, or the connection is closing, `poll_read` is not
//! called, which is the lesson's `modify(WRITE)`, "only WRITE". (A waker
//! left from before may still fire once; the step then finds nothing to do.)

use std::future::{Future, poll_fn};
use std::io;
use std::net::{Shutdown, SocketAddr};
use std::pin::Pin;
use std::task::{Context, Poll, Waker};
use std::time::Instant;

use futures_io::{AsyncRead, AsyncWrite};
use ioloop_runtime::time::{Sleep, sleep};

use super::{Config, Connection, Disconnect, Handler};
use crate::TcpStream;

/// Runs `handler` on `stream` from `on_connect` to `on_disconnect`, then
/// closes the socket.
pub(super) async fn drive<H: Handler>(
    stream: TcpStream,
    peer: SocketAddr,
    config: Config,
    mut handler: H,
) {
    let mut conn = Connection::new(peer);
    handler.on_connect(&mut conn);
    let mut driver = Driver {
        stream: &stream,
        config,
        closing: None,
        idle: config.idle_timeout.map(sleep),
    };
    let reason = driver.run(&mut handler, &mut conn).await;
    log::debug!("callbacks: {peer} disconnected: {reason:?}");
    handler.on_disconnect(&conn, reason);
    discard_unread(&stream);
}

/// What happened on the socket, for the callbacks to hear of.
enum Step {
    /// Bytes arrived in the inbuf.
    Data,
    /// The peer closed its side.
    Eof,
    /// The connection is over.
    Over(Disconnect),
}

struct Driver<'a> {
    stream: &'a TcpStream,
    config: Config,
    /// Set once the connection is to end: the reason to report once the
    /// outbuf is sent. Nothing is read meanwhile.
    closing: Option<Disconnect>,
    /// Fires no later than `last_seen + idle_timeout`; see `poll_idle`.
    idle: Option<Sleep>,
}

impl Driver<'_> {
    /// The connection's loop: wait for a step, tell the handler, repeat.
    async fn run<H: Handler>(&mut self, handler: &mut H, conn: &mut Connection) -> Disconnect {
        loop {
            self.settle(handler, conn);
            match poll_fn(|cx| self.poll_step(cx, conn)).await {
                Step::Data => handler.on_data(conn),
                Step::Eof => {
                    handler.on_eof(conn);
                    self.closing = Some(Disconnect::PeerClosed);
                }
                Step::Over(reason) => return reason,
            }
        }
    }

    /// Decides, after a callback, whether the connection goes on: the
    /// handler may have closed it or left too much in the inbuf.
    fn settle<H: Handler>(&mut self, handler: &mut H, conn: &mut Connection) {
        if self.closing.is_some() {
            return;
        }
        if !conn.closing && conn.inbuf.len() > self.config.max_inbuf {
            handler.on_inbuf_full(conn);
            if conn.inbuf.len() > self.config.max_inbuf {
                self.closing = Some(Disconnect::InbufFull);
                return;
            }
        }
        if conn.closing {
            self.closing = Some(Disconnect::Closed);
        }
    }

    /// One turn of the lesson's loop for this socket, in its order: write
    /// what the kernel takes, read if we may, check the idle deadline.
    fn poll_step(&mut self, cx: &mut Context<'_>, conn: &mut Connection) -> Poll<Step> {
        let flushed = match self.poll_flush(cx, conn) {
            Poll::Ready(Ok(())) => true,
            Poll::Ready(Err(err)) => return Poll::Ready(Step::Over(Disconnect::Failed(err))),
            Poll::Pending => false,
        };
        if let Some(reason) = self.closing.take_if(|_| flushed) {
            // Everything is sent: the peer reads end of stream after it.
            // A failure here means the peer is already gone, and the bytes
            // are with the kernel either way: nothing left to do about it.
            if let Err(err) = self.stream.shutdown(Shutdown::Write) {
                log::debug!("callbacks: shutdown after the last reply: {err}");
            }
            return Poll::Ready(Step::Over(reason));
        }
        // One byte past the limit: a message of exactly `max_inbuf` bytes
        // still has room for its terminator, and one byte more is too long.
        let cap = self.config.max_inbuf.saturating_add(1);
        let room = cap.saturating_sub(conn.inbuf.len());
        let may_read =
            self.closing.is_none() && conn.outbuf.len() <= self.config.write_high_water && room > 0;
        if may_read {
            match conn.inbuf.poll_read(cx, self.stream, room) {
                Poll::Ready(Ok(0)) => return Poll::Ready(Step::Eof),
                Poll::Ready(Ok(_)) => {
                    conn.last_seen = Instant::now();
                    return Poll::Ready(Step::Data);
                }
                Poll::Ready(Err(err)) => return Poll::Ready(Step::Over(Disconnect::Failed(err))),
                Poll::Pending => {}
            }
        }
        if self.poll_idle(cx, conn).is_ready() {
            return Poll::Ready(Step::Over(Disconnect::Idle));
        }
        Poll::Pending
    }

    /// Sends the outbuf until it is empty (`Ready(Ok)`) or the kernel's
    /// buffer is full (`Pending`, with our waker left for WRITE): the
    /// lesson's `on_writable`, `del conn.outbuf[:sent]` included.
    fn poll_flush(&mut self, cx: &mut Context<'_>, conn: &mut Connection) -> Poll<io::Result<()>> {
        let mut moved = false;
        let result = loop {
            if conn.outbuf.len() == 0 {
                break Poll::Ready(Ok(()));
            }
            match Pin::new(&mut self.stream).poll_write(cx, conn.outbuf.unsent()) {
                // A stream that takes nothing and says nothing would be
                // retried forever; std's `write_all` calls it `WriteZero`.
                Poll::Ready(Ok(0)) => break Poll::Ready(Err(io::ErrorKind::WriteZero.into())),
                Poll::Ready(Ok(n)) => {
                    conn.outbuf.advance(n);
                    moved = true;
                }
                Poll::Ready(Err(err)) => break Poll::Ready(Err(err)),
                Poll::Pending => break Poll::Pending,
            }
        };
        if moved {
            conn.last_seen = Instant::now();
        }
        result
    }

    /// Ready once nothing has moved for the idle timeout.
    ///
    /// The timer is armed once and moved only when it fires: at that point
    /// it either finds `last_seen` old enough, or moves to
    /// `last_seen + idle_timeout`. Moving it on every read instead would
    /// cost a timer-heap update per message; this way a read costs one
    /// clock read, and an active connection one timer wake per timeout.
    fn poll_idle(&mut self, cx: &mut Context<'_>, conn: &Connection) -> Poll<()> {
        let (Some(timeout), Some(timer)) = (self.config.idle_timeout, &mut self.idle) else {
            return Poll::Pending;
        };
        while Pin::new(&mut *timer).poll(cx).is_ready() {
            let Some(deadline) = conn.last_seen.checked_add(timeout) else {
                // Beyond what `Instant` can hold: never.
                self.idle = None;
                return Poll::Pending;
            };
            if deadline <= Instant::now() {
                return Poll::Ready(());
            }
            timer.reset(deadline);
        }
        Poll::Pending
    }
}

/// The most bytes [`discard_unread`] reads before giving up.
const DISCARD_LIMIT: usize = 64 * 1024;

/// Reads and drops what the peer has already sent, without waiting, just
/// before the socket is closed. Linux answers a `close(2)` with unread data
/// with a reset instead of a FIN, and a reset can destroy the replies still
/// on their way to the peer: the `ERR` line for an overlong message, whose
/// end we never read. A peer still sending after `DISCARD_LIMIT` bytes gets
/// its reset.
///
/// It polls with a waker that does nothing: nobody is to be woken, and the
/// socket is closed right after, which drops any waker left with the
/// reactor.
fn discard_unread(stream: &TcpStream) {
    let mut cx = Context::from_waker(Waker::noop());
    let mut sink = [0; 4096];
    let mut discarded = 0;
    while discarded < DISCARD_LIMIT {
        match Pin::new(&mut &*stream).poll_read(&mut cx, &mut sink) {
            Poll::Ready(Ok(n)) if n > 0 => discarded += n,
            // End of stream, an error, or nothing more yet: done either way.
            _ => break,
        }
    }
}
