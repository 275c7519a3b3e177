//! Serving handlers: [`Config`], [`serve`], [`serve_with`] and
//! [`serve_connection`] (the lesson's `Reactor.run` and `_accept`), and the
//! per-connection driver, one task's loop of the lesson's `_read`,
//! `_write`, idle pass and `close` for one socket.

use std::future::{Future, poll_fn};
use std::io;
use std::net::{Shutdown, SocketAddr};
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use ioloop_net::io::DEFAULT_MAX_LINE_LENGTH;
use ioloop_net::{TcpListener, TcpStream};
use ioloop_runtime::time::{Instant, Sleep, sleep};

use crate::connection::Connection;
use crate::handler::{Disconnect, Handler};

/// The limits every connection of a server runs with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Config {
    /// The most bytes a handler may leave unconsumed after
    /// [`on_data`](Handler::on_data); beyond it,
    /// [`on_inbuf_full`](Handler::on_inbuf_full). For a line protocol it is
    /// the longest line, `\r` included, as `StreamReader`'s line limit:
    /// 64 KiB by default.
    ///
    /// The connection reads at most one byte past it, so that a message of
    /// exactly `max_inbuf` bytes still has room for its terminator; the
    /// inbuf never holds more than `max_inbuf + 1` bytes, whatever the peer
    /// sends.
    pub max_inbuf: usize,
    /// How long a connection may go with no byte moving either way before
    /// it is closed with [`Disconnect::Idle`]; `None` for never. 30 seconds
    /// by default, the lesson's `IDLE_DEADLINE`.
    pub idle_timeout: Option<Duration>,
    /// Reading pauses while more than this many bytes wait in the outbuf,
    /// and resumes once the peer has taken enough of them: a peer that
    /// sends requests without reading the replies is held back instead of
    /// growing the outbuf. 64 KiB by default.
    pub write_high_water: usize,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            max_inbuf: DEFAULT_MAX_LINE_LENGTH,
            idle_timeout: Some(Duration::from_secs(30)),
            write_high_water: 64 * 1024,
        }
    }
}

/// Accepts connections on `listener` forever and runs a handler made by
/// `factory` for each, on a task of its own, with the default [`Config`]:
/// the lesson's `Reactor.run`.
///
/// # Errors
///
/// Only an error of the listener itself (see
/// [`TcpListener::accept`]); a failing connection ends alone, and its
/// handler hears of it in [`on_disconnect`](Handler::on_disconnect).
///
/// # Cancellation
///
/// Dropping the future stops accepting and closes the listener.
/// Connections already accepted go on: their tasks are detached.
///
/// # Examples
///
/// ```
/// use ioloop::callbacks::{Connection, Handler, serve};
/// use ioloop::io::StreamReader;
/// use ioloop::net::{TcpListener, TcpStream};
///
/// struct Hello;
/// impl Handler for Hello {
///     fn on_connect(&mut self, conn: &mut Connection) {
///         conn.queue_send(b"Hello!\n");
///         conn.close();
///     }
///     fn on_data(&mut self, _conn: &mut Connection) {}
/// }
///
/// ioloop::block_on(async {
///     let listener = TcpListener::bind("127.0.0.1:0").await?;
///     let addr = listener.local_addr()?;
///     ioloop::spawn(serve(listener, || Hello));
///     let client = TcpStream::connect(addr).await?;
///     let mut reader = StreamReader::new(&client);
///     assert_eq!(reader.read_line().await?, Some(&b"Hello!"[..]));
///     assert_eq!(reader.read_line().await?, None, "closed after the greeting");
///     Ok::<_, std::io::Error>(())
/// })
/// .unwrap();
/// ```
#[doc(alias = "run", alias = "create_server")]
pub async fn serve<F, H>(listener: TcpListener, factory: F) -> io::Result<()>
where
    F: FnMut() -> H,
    H: Handler + Send + 'static,
{
    serve_with(listener, Config::default(), factory).await
}

/// [`serve`], with the limits of `config`.
///
/// # Errors
///
/// As [`serve`].
///
/// # Cancellation
///
/// As [`serve`].
pub async fn serve_with<F, H>(
    listener: TcpListener,
    config: Config,
    mut factory: F,
) -> io::Result<()>
where
    F: FnMut() -> H,
    H: Handler + Send + 'static,
{
    loop {
        let (stream, peer) = listener.accept().await?;
        log::debug!("callbacks: accepted {peer}");
        let handler = factory();
        // Detached: the task owns its connection, and nothing awaits it.
        drop(ioloop_runtime::spawn(drive(stream, peer, config, handler)));
    }
}

/// Runs `handler` on one connection accepted elsewhere, until it is over
/// (after [`on_disconnect`](Handler::on_disconnect)); the socket is closed
/// on return. [`serve`] runs this on a task per connection.
///
/// A connection already reset before it could be served (it has no peer
/// address any more) is closed without calling the handler.
///
/// # Cancellation
///
/// Dropping the future closes the connection at once, without
/// `on_disconnect`; queued bytes are lost.
pub async fn serve_connection<H: Handler>(stream: TcpStream, config: Config, handler: H) {
    match stream.peer_addr() {
        Ok(peer) => drive(stream, peer, config, handler).await,
        // Reset between accept and now: there is no one to serve.
        Err(err) => log::debug!("callbacks: connection gone before it was served: {err}"),
    }
}

/// Runs `handler` on `stream` from `on_connect` to `on_disconnect`, then
/// closes the socket.
async fn drive<H: Handler>(stream: TcpStream, peer: SocketAddr, config: Config, handler: H) {
    let mut driver = Driver {
        stream: &stream,
        config,
        closing: None,
        idle: config.idle_timeout.map(sleep),
        handler,
        conn: Connection::new(peer),
    };
    driver.handler.on_connect(&mut driver.conn);
    driver.settle();
    let reason = poll_fn(|cx| driver.poll_run(cx)).await;
    log::debug!("callbacks: {peer} disconnected: {reason:?}");
    driver.handler.on_disconnect(&driver.conn, reason);
    discard_unread(&stream);
}

/// One connection's loop: its socket, limits, handler and buffers, and the
/// state between steps.
struct Driver<'a, H> {
    stream: &'a TcpStream,
    config: Config,
    /// Set once the connection is to end: the reason to report once the
    /// outbuf is sent. Nothing is read meanwhile.
    closing: Option<Disconnect>,
    /// Fires no later than `last_seen + idle_timeout`; see `poll_idle`.
    idle: Option<Sleep>,
    handler: H,
    conn: Connection,
}

impl<H: Handler> Driver<'_, H> {
    /// Decides, after a callback, whether the connection goes on: the
    /// handler may have closed it or left too much in the inbuf.
    fn settle(&mut self) {
        let max = self.config.max_inbuf;
        if self.closing.is_none() && !self.conn.is_closing() && self.conn.inbuf().len() > max {
            self.handler.on_inbuf_full(&mut self.conn);
            if self.conn.inbuf().len() > max {
                self.closing = Some(Disconnect::InbufFull);
            }
        }
        if self.closing.is_none() && self.conn.is_closing() {
            self.closing = Some(Disconnect::Closed);
        }
    }

    /// The lesson's loop for this socket, in its order: write what the
    /// kernel takes, read if we may (and tell the handler), check the idle
    /// deadline; ready with the reason the connection is over.
    ///
    /// There is no `sel.modify`: the socket is registered once, both ways,
    /// and the reactor wakes this task for a direction only through a waker
    /// a `Pending` poll left there. Sending only while the outbuf holds
    /// bytes, and reading only while the connection may take more, is the
    /// whole of WRITE and READ interest.
    fn poll_run(&mut self, cx: &mut Context<'_>) -> Poll<Disconnect> {
        loop {
            let flushed = match self.conn.poll_send(cx, self.stream) {
                Poll::Ready(Ok(())) => true,
                Poll::Ready(Err(err)) => return Poll::Ready(Disconnect::Failed(err)),
                Poll::Pending => false,
            };
            if let Some(reason) = self.closing.take_if(|_| flushed) {
                // Everything is sent: the peer reads end of stream after it.
                // A failure here means the peer is already gone, and the
                // bytes are with the kernel either way: nothing left to do.
                if let Err(err) = self.stream.shutdown(Shutdown::Write) {
                    log::debug!("callbacks: shutdown after the last reply: {err}");
                }
                return Poll::Ready(reason);
            }
            let (conn, max) = (&mut self.conn, self.config.max_inbuf);
            let may_read = self.closing.is_none()
                && conn.outbuf().len() <= self.config.write_high_water
                && conn.inbuf().len() <= max;
            if may_read && let Poll::Ready(read) = conn.poll_read(cx, self.stream, max) {
                match read {
                    Ok(0) => {
                        self.handler.on_eof(conn);
                        self.closing = Some(Disconnect::PeerClosed);
                    }
                    Ok(_) => self.handler.on_data(conn),
                    Err(err) => return Poll::Ready(Disconnect::Failed(err)),
                }
                self.settle();
                continue;
            }
            if self.poll_idle(cx).is_ready() {
                return Poll::Ready(Disconnect::Idle);
            }
            return Poll::Pending;
        }
    }

    /// Ready once nothing has moved for the idle timeout.
    ///
    /// The timer is armed once and moved only when it fires: it then either
    /// finds `last_seen` old enough, or moves to `last_seen + idle_timeout`.
    /// Moving it on every read would cost a timer-heap update per message;
    /// this way a read costs one clock read, and an active connection one
    /// timer wake per timeout.
    fn poll_idle(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        let (Some(timeout), Some(timer)) = (self.config.idle_timeout, &mut self.idle) else {
            return Poll::Pending;
        };
        while Pin::new(&mut *timer).poll(cx).is_ready() {
            let Some(deadline) = self.conn.last_seen().checked_add(timeout) else {
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
fn discard_unread(stream: &TcpStream) {
    let mut sink = [0; 4096];
    let mut discarded = 0;
    // Until the end of stream, an error, or nothing more yet.
    while discarded < DISCARD_LIMIT
        && let Ok(n @ 1..) = stream.try_read(&mut sink)
    {
        discarded += n;
    }
}
