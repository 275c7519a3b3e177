//! The line echo protocol as async fn handlers: the lesson's
//! `LineEchoServer`, written as `await` code instead of callbacks.
//!
//! `on_connect` became the greeting at the top of [`converse`],
//! `on_data`'s inbuf-scanning loop became `reader.read_line().await`,
//! `queue_send` became `writer.write`, and the outbuf's WRITE-interest dance
//! became `writer.drain().await`. `last_seen` became one idle timer per
//! connection, raced against each read and moved on before it
//! (`Sleep::reset_after`), and `on_disconnect` is the [`End`] each
//! connection reports. [`Stop`], at the end, is the notice every
//! connection waits on between lines, so Ctrl-C lets each finish its line.
//!
//! Shared by `main.rs` and by the tests (testkit/src/lib.rs includes this
//! file), so the tests exercise exactly what the example runs.

use std::future::{Future, poll_fn};
use std::io;
use std::net::SocketAddr;
use std::pin::{Pin, pin};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use ioloop::io::{AsyncReadExt, StreamReader, StreamWriter};
use ioloop::net::{TcpListener, TcpStream};
use ioloop::time::{sleep, timeout};
use slab::Slab;

/// The server's settings.
#[derive(Clone, Copy, Debug)]
pub struct Config {
    /// Longest accepted line, in bytes before the `\n`.
    pub max_line: usize,
    /// A connection silent this long is closed: nothing received for at
    /// least this long (a line trickling in slowly is not silence).
    pub idle_timeout: Duration,
    /// A poll running longer than this is logged while it runs (the
    /// runtime's stall detector); `None` turns the detector off.
    pub slow_poll_threshold: Option<Duration>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            max_line: 65_536,
            idle_timeout: Duration::from_secs(30),
            slow_poll_threshold: Some(Duration::from_millis(100)),
        }
    }
}

/// Why a connection ended.
#[derive(Debug)]
pub enum End {
    /// The client closed its side.
    Closed,
    /// The client was silent for `idle_timeout`.
    Idle,
    /// The client sent a line over `max_line`; it got an `ERR` line.
    LineTooLong,
    /// The server is stopping; the connection finished its line first.
    Stopped,
    /// The connection failed (reset, broken pipe, ...).
    Failed(io::Error),
}

/// Accepts connections, one task per connection, until `shutdown`
/// completes; then stops accepting (the listener is dropped) and tells
/// every connection to finish its current line and close. Returns at once:
/// the connection tasks finish on the runtime (see `server.rs`).
///
/// `on_event` hears of each connection (`None`) and of how it ended.
pub async fn serve(
    listener: TcpListener,
    config: Config,
    on_event: impl Fn(SocketAddr, Option<&End>) + Clone + Send + 'static,
    shutdown: impl Future<Output = ()>,
) -> io::Result<()> {
    let stop = Stop::default();
    // Shared by every connection, not copied into each one's future.
    let config = Arc::new(config);
    let mut shutdown = pin!(shutdown);
    loop {
        let accepted = first(listener.accept(), shutdown.as_mut()).await;
        let (stream, peer) = match accepted {
            Either::Left(accepted) => accepted?,
            Either::Right(()) => break,
        };
        on_event(peer, None);
        // Detached: the task owns its connection; nothing awaits it.
        let task = connection(
            stream,
            peer,
            config.clone(),
            stop.listener(),
            on_event.clone(),
        );
        drop(ioloop::spawn(task));
    }
    drop(listener);
    stop.stop();
    Ok(())
}

/// One connection's task: [`handle`] it, then tell `on_event` how it
/// ended.
///
/// This, [`handle`] and [`converse`] are plain functions returning an
/// `async move` block rather than `async fn`s, and lend what they own to
/// the next by reference, because of how the compiler lays out an `async
/// fn`'s future today: each argument is kept twice, once as passed and
/// once as the body's local, for the whole life of the future, and a value
/// moved from a block's capture into a callee stays in the block too. A
/// connection's future is most of what an idle connection costs, so each
/// copy is paid per connection: the block uses its captures in place. (The
/// `async fn` version of this file made an 880-byte future; this one, 400,
/// the settings shared through an `Arc` rather than copied in.)
#[allow(
    clippy::manual_async_fn,
    reason = "an async fn would keep each argument twice, per connection"
)]
pub fn connection(
    stream: TcpStream,
    peer: SocketAddr,
    config: Arc<Config>,
    mut stop: Listener,
    on_event: impl Fn(SocketAddr, Option<&End>),
) -> impl Future<Output = ()> {
    async move {
        let end = handle(&stream, &config, &mut stop).await;
        on_event(peer, Some(&end));
    }
}

/// Serves one connection: greet, then echo each line until the client
/// leaves, goes silent, sends a line that is too long, or the server stops.
///
/// A client that goes away before sending a single byte (a port probe such
/// as `nc -z`: connect, then close) ends normally, as [`End::Closed`], even
/// though its kernel answers the unread greeting with a reset.
#[allow(
    clippy::manual_async_fn,
    reason = "an async fn would keep each argument twice, per connection"
)]
pub fn handle<'a>(
    stream: &'a TcpStream,
    config: &'a Config,
    stop: &'a mut Listener,
) -> impl Future<Output = End> + 'a {
    async move {
        let mut heard = false;
        match converse(stream, config, stop, &mut heard).await {
            Ok(end) => end,
            Err(err) if !heard && is_disconnect(&err) => End::Closed,
            Err(err) => End::Failed(err),
        }
    }
}

/// A peer that left: reset, broken pipe, aborted.
fn is_disconnect(err: &io::Error) -> bool {
    matches!(
        err.kind(),
        io::ErrorKind::ConnectionReset
            | io::ErrorKind::BrokenPipe
            | io::ErrorKind::ConnectionAborted
    )
}

/// The conversation; `heard` is set once the client has sent a byte.
#[allow(
    clippy::manual_async_fn,
    reason = "an async fn would keep each argument twice, per connection"
)]
fn converse<'a>(
    stream: &'a TcpStream,
    config: &'a Config,
    stop: &'a mut Listener,
    heard: &'a mut bool,
) -> impl Future<Output = io::Result<End>> + 'a {
    async move {
        let mut reader = StreamReader::new(stream);
        reader.set_max_line_length(config.max_line);
        let mut writer = StreamWriter::new(stream);
        writer.write(b"Hello!\n");
        writer.drain().await?;
        // One reply buffer per connection, reused: no allocation per line.
        let mut reply = Vec::new();
        // The lesson's `last_seen`: one idle timer per connection, moved on
        // for each read rather than armed and disarmed per read (a timer
        // moved later is moved in place by its next poll: no allocation, no
        // heap push, no waker clone).
        let mut idle = sleep(config.idle_timeout);
        // How much of a partial line had arrived when the idle timer last
        // fired.
        let mut seen = 0;
        loop {
            // Between lines, the stop notice ends the connection; in the middle
            // of one (bytes already in the inbuf), the line is finished first.
            let between_lines = reader.buffer().is_empty();
            if between_lines && stop.is_stopped() {
                Box::pin(close(&mut writer, stream)).await?;
                return Ok(End::Stopped);
            }
            // A fresh idle timeout for each read: the one timer, moved on.
            idle.reset_after(config.idle_timeout);
            let read = first(reader.read_line(), &mut idle);
            let read = if between_lines {
                match first(read, stop.wait()).await {
                    Either::Left(read) => read,
                    // `read_line` is cancel-safe: whatever arrived stays in
                    // the inbuf, and the loop decides again.
                    Either::Right(()) => continue,
                }
            } else {
                read.await
            };
            let line = match read {
                // The idle timer: nothing arrived for `idle_timeout`.
                Either::Right(()) => None,
                Either::Left(Ok(Some(line))) => {
                    *heard = true;
                    Some(line)
                }
                Either::Left(Ok(None)) => {
                    writer.close().await?;
                    return Ok(End::Closed);
                }
                Either::Left(Err(err)) if err.kind() == io::ErrorKind::InvalidData => {
                    writer.write(
                        format!("ERR line longer than {} bytes\n", config.max_line).as_bytes(),
                    );
                    Box::pin(close(&mut writer, stream)).await?;
                    return Ok(End::LineTooLong);
                }
                Either::Left(Err(err)) => {
                    // Part of a line counts as having said something.
                    *heard |= !reader.buffer().is_empty();
                    return Err(err);
                }
            };
            let Some(line) = line else {
                // The idle timer fired. If part of a line arrived meanwhile,
                // the client is not silent: wait on.
                if reader.buffer().len() > seen {
                    seen = reader.buffer().len();
                    continue;
                }
                writer.close().await?;
                return Ok(End::Idle);
            };
            seen = 0;
            reply.clear();
            reply.extend_from_slice(b"[echo] ");
            reply.extend_from_slice(line);
            reply.push(b'\n');
            writer.write(&reply);
            writer.drain().await?;
        }
    }
}

/// Closes our side (the client reads end of stream after our last line),
/// then reads and drops what the client is still sending, for a moment.
///
/// Closing a socket with unread input makes the kernel answer with a reset,
/// and a reset can destroy our last reply (the `ERR` line) before the
/// client has read it. So, as HTTP servers do, linger: up to 64 KiB or one
/// second, whichever comes first.
///
/// Callers box this future: it runs once, at the end, and its linger
/// state (a timeout around a read) would otherwise be part of every
/// connection's future, idle or not, its whole life.
async fn close(writer: &mut StreamWriter<&TcpStream>, stream: &TcpStream) -> io::Result<()> {
    const LINGER: Duration = Duration::from_secs(1);
    const LINGER_BYTES: usize = 64 * 1024;
    writer.close().await?;
    // On the heap, and only now: a 4 KiB array in the future would make
    // the boxed future 4 KiB (it once sat in every connection's future,
    // unboxed, and made an idle connection cost 5 KB instead of 1).
    let mut scratch = vec![0u8; 4096];
    let mut dropped = 0;
    let drain_input = async {
        while dropped < LINGER_BYTES {
            match (&mut &*stream).read(&mut scratch).await {
                Ok(0) | Err(_) => break,
                Ok(n) => dropped += n,
            }
        }
    };
    // Elapsed is the normal end for a client that keeps sending.
    let _ = timeout(LINGER, drain_input).await;
    Ok(())
}

/// Which of two futures finished first.
pub enum Either<A, B> {
    Left(A),
    Right(B),
}

/// Runs two futures until one finishes, polling `a` first; the other is
/// dropped. Both must be cancel-safe for that to lose nothing.
pub fn first<A: Future, B: Future>(a: A, b: B) -> First<A, B> {
    First { a, b }
}

pin_project_lite::pin_project! {
    /// The future of [`first`]: a struct, not an `async fn`, so that each
    /// of the two futures is held once (an `async fn` would keep each
    /// argument twice, as passed and as pinned; a connection waits on
    /// one of these for every line, and its future is its memory).
    pub struct First<A, B> {
        #[pin]
        a: A,
        #[pin]
        b: B,
    }
}

impl<A: Future, B: Future> Future for First<A, B> {
    type Output = Either<A::Output, B::Output>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        if let Poll::Ready(out) = this.a.poll(cx) {
            return Poll::Ready(Either::Left(out));
        }
        this.b.poll(cx).map(Either::Right)
    }
}

// The stop notice: the server sets it once on Ctrl-C or SIGTERM, and each
// connection finishes its current line and closes. Each connection holds
// one `Listener`, a slot in a slab of wakers, so waiting again and again
// (once per line) never grows anything.

/// The notice. Cheap to clone; all clones are the same notice.
#[derive(Clone, Default)]
pub struct Stop {
    inner: Arc<Inner>,
}

#[derive(Default)]
struct Inner {
    stopped: AtomicBool,
    waiters: Mutex<Slab<Option<Waker>>>,
}

impl Stop {
    /// Sets the notice and wakes every waiting connection.
    pub fn stop(&self) {
        self.inner.stopped.store(true, Ordering::SeqCst);
        let wakers: Vec<Waker> = self
            .inner
            .waiters
            .lock()
            .unwrap()
            .iter_mut()
            .filter_map(|(_, w)| w.take())
            .collect();
        for waker in wakers {
            waker.wake();
        }
    }

    /// Whether the notice has been set.
    pub fn is_stopped(&self) -> bool {
        self.inner.stopped.load(Ordering::SeqCst)
    }

    /// A listener for one connection.
    pub fn listener(&self) -> Listener {
        let key = self.inner.waiters.lock().unwrap().insert(None);
        Listener {
            stop: self.clone(),
            key,
            registered: None,
        }
    }
}

/// One connection's place in the notice's list.
pub struct Listener {
    stop: Stop,
    key: usize,
    /// The waker last left in the list: a connection waits once per line,
    /// always from the same task, so the lock is taken only the first time.
    registered: Option<Waker>,
}

impl Listener {
    /// Waits until the notice is set. Cancel-safe.
    ///
    /// A plain function returning the `poll_fn`, not an `async fn`, which
    /// would hold `self` twice and the `poll_fn` besides: a connection
    /// holds this future while it waits for each line.
    pub fn wait(&mut self) -> impl Future<Output = ()> + '_ {
        poll_fn(move |cx| {
            if self.stop.is_stopped() {
                return Poll::Ready(());
            }
            if self
                .registered
                .as_ref()
                .is_some_and(|w| w.will_wake(cx.waker()))
            {
                return Poll::Pending;
            }
            self.registered = Some(cx.waker().clone());
            self.stop.inner.waiters.lock().unwrap()[self.key] = Some(cx.waker().clone());
            // Set between the check and the registration: seen here.
            if self.stop.is_stopped() {
                Poll::Ready(())
            } else {
                Poll::Pending
            }
        })
    }

    /// Whether the notice has been set.
    pub fn is_stopped(&self) -> bool {
        self.stop.is_stopped()
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        self.stop.inner.waiters.lock().unwrap().remove(self.key);
    }
}
