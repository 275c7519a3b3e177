//! A stream socket's outbox: the small writes a `StreamWriter` makes in
//! one poll of a task are gathered and leave together, in one `send`, at
//! the next flush (`drain` makes one) or when that poll returns (the
//! lesson's `outbuf`, sent by the loop). [`Sock`] is what `TcpStream` and
//! `UnixStream` hold: the registration, and the bytes queued for it.
//!
//! Only writes made under [`gathering`] are gathered: `StreamWriter`'s
//! (made through `poll_write_vectored`), whose `write` never waits and
//! whose `drain` is where a program waits.
//! A raw socket's `write` still reaches the kernel before it returns, as
//! tokio's does. A gathered write of at most [`GATHER`] bytes, made while
//! a task (or the `block_on` future) is being polled, is copied into the
//! outbox and accepted at once; the first asks the loop to wake the socket
//! when the poll returns ([`wake_after_poll`]), and that wake sends the
//! outbox. A larger write, a write outside a poll, and any write while the
//! kernel is refusing go out now, behind what is queued, in one
//! `sendmsg`. What the kernel does not take of the outbox is sent when the
//! socket is writable again, and until then writes wait: at most one
//! poll's writes wait beyond what the kernel holds.
//!
//! An error met by a send made for the outbox is returned by the next
//! write, flush or close; the bytes it could not send are dropped.

use std::cell::Cell;
use std::future::{Future, poll_fn};
use std::io::{self, IoSlice};
use std::net::Shutdown;
use std::pin::pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll, Wake, Waker, ready};

use ioloop_runtime::io::{Registration, take_back_wake_after_poll, wake_after_poll};
use ioloop_runtime::lock::{self, Mutex, MutexGuard};
use ioloop_runtime::task::{poll_budget, unconstrained};
use mio::event::Source;
use socket2::SockRef;

use crate::syscall::Simulated;
#[cfg(unix)]
use crate::unix::sys;
use crate::{options, syscall};

thread_local! {
    /// Whether the writes made now may be gathered: see [`gathering`].
    static GATHERING: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f`, gathering the small writes it makes to stream sockets into
/// their outboxes, to leave when the running poll returns.
#[inline]
pub(crate) fn gathering<R>(f: impl FnOnce() -> R) -> R {
    /// Restores the flag, even if `f` panics (a writer's `poll_write`).
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            GATHERING.set(self.0);
        }
    }
    let _restore = Restore(GATHERING.replace(true));
    f()
}

/// The largest write gathered: larger ones go to the kernel at once, so a
/// big payload is never copied whole.
const GATHER: usize = 16 * 1024;

/// The most the outbox holds: a poll that writes more sends some now.
const ROOM: usize = 64 * 1024;

/// The calls on a mio stream an outbox makes: sends never raise `SIGPIPE`.
pub(crate) trait Stream: Source + Send + Sync + 'static {
    /// `send(2)`.
    fn send(&self, buf: &[u8]) -> io::Result<usize>;
    /// `sendmsg(2)`, from the first `IOV_MAX` slices.
    fn send_vectored(&self, bufs: &[IoSlice<'_>]) -> io::Result<usize>;
    /// `shutdown(2)`.
    fn shutdown(&self, how: Shutdown) -> io::Result<()>;
}

impl Stream for crate::sys::TcpStream {
    fn send(&self, buf: &[u8]) -> io::Result<usize> {
        syscall::send(self, buf)
    }
    fn send_vectored(&self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        syscall::send_vectored(self, bufs)
    }
    fn shutdown(&self, how: Shutdown) -> io::Result<()> {
        crate::sys::TcpStream::shutdown(self, how)
    }
}

#[cfg(unix)]
impl Stream for sys::Stream {
    fn send(&self, buf: &[u8]) -> io::Result<usize> {
        sys::send(self, buf)
    }
    fn send_vectored(&self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        sys::send_vectored(self, bufs)
    }
    fn shutdown(&self, how: Shutdown) -> io::Result<()> {
        sys::Stream::shutdown(self, how)
    }
}

/// A registered stream socket and its outbox, shared (`Arc`) with the
/// wakes that send for it, which keep it open until they have.
pub(crate) struct Sock<S: Stream> {
    io: Registration<S>,
    out: Mutex<Out>,
    /// The outbox holds bytes, an error or a shutdown: a raw write or a
    /// flush must take the lock. Set by every [`OutGuard`] as it drops.
    busy: AtomicBool,
}

/// The outbox, locked; dropping it says whether the outbox is busy.
struct OutGuard<'a> {
    out: MutexGuard<'a, Out>,
    busy: &'a AtomicBool,
}

impl std::ops::Deref for OutGuard<'_> {
    type Target = Out;

    fn deref(&self) -> &Out {
        &self.out
    }
}

impl std::ops::DerefMut for OutGuard<'_> {
    fn deref_mut(&mut self) -> &mut Out {
        &mut self.out
    }
}

impl Drop for OutGuard<'_> {
    #[inline]
    fn drop(&mut self) {
        let out = &*self.out;
        let busy = !out.bytes.is_empty() || out.error.is_some() || out.shut_down;
        self.busy.store(busy, Ordering::Release);
    }
}

/// What waits to be sent, and what became of the last send.
#[derive(Default)]
struct Out {
    bytes: OutBuf,
    /// A wake is due: after the poll, or on writability.
    armed: bool,
    /// The kernel refused the outbox: a wake waits for writability.
    refused: bool,
    /// An error a send for the outbox met, for the next write to return.
    error: Option<io::Error>,
    /// A `shutdown` that waits for the outbox to empty.
    shut: Option<Shutdown>,
    /// The write side is shut: writes fail at once, as the kernel's would.
    shut_down: bool,
}

impl<S: Stream> std::ops::Deref for Sock<S> {
    type Target = Registration<S>;

    fn deref(&self) -> &Registration<S> {
        &self.io
    }
}

impl<S: Stream> Sock<S> {
    /// Wraps a registered stream.
    pub(crate) fn new(io: Registration<S>) -> Arc<Self> {
        Arc::new(Sock {
            io,
            out: Mutex::default(),
            busy: AtomicBool::new(false),
        })
    }

    /// `AsyncWrite::poll_write` for the stream: one buffer. With nothing
    /// queued it goes straight to the kernel, with no slices to count:
    /// `tcp_echo`'s every write (BENCHMARKS.md, "Like for like"); else
    /// [`poll_write`](Self::poll_write) puts it behind what is. A
    /// `StreamWriter` writes through `poll_write_vectored`, which is
    /// `poll_write`, where gathering is decided.
    pub(crate) fn poll_write_one(
        self: &Arc<Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        if !self.busy.load(Ordering::Acquire) {
            if buf.is_empty() {
                return Poll::Ready(Ok(0));
            }
            return self.io.poll_write_stream(cx, buf.len(), |s| s.send(buf));
        }
        self.poll_write(cx, &[IoSlice::new(buf)])
    }

    /// `AsyncWrite::poll_write_vectored` for the stream: gathers `bufs` if
    /// they are small and a poll is running, else sends the outbox and
    /// them now. At most the first `IOV_MAX` slices are taken.
    pub(crate) fn poll_write(
        self: &Arc<Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        // The length a short write is measured against is that of the
        // slices one `sendmsg` takes, never more (issue 40, bug 1).
        let bufs = syscall::at_most_max_slices(bufs);
        let len = bufs.iter().map(|b| b.len()).sum::<usize>();
        let gathering = GATHERING.get();
        if !gathering && !self.busy.load(Ordering::Acquire) {
            // A raw write with nothing queued: straight to the kernel.
            if len == 0 {
                return Poll::Ready(Ok(0));
            }
            return self.io.poll_write_stream(cx, len, |s| send(s, bufs));
        }
        let mut out = self.lock();
        out.check(len)?;
        if len == 0 {
            return Poll::Ready(Ok(0));
        }
        let small = len <= GATHER && out.bytes.len() + len <= ROOM;
        if small && gathering && !out.refused && self.arm(&mut out) {
            for buf in bufs {
                out.bytes.push(buf);
            }
            return Poll::Ready(Ok(len));
        }
        drop(out);
        self.poll_send(cx, bufs, len)
    }

    /// Sends the outbox, waiting for the kernel to take all of it.
    pub(crate) fn poll_flush(self: &Arc<Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if !self.busy.load(Ordering::Acquire) {
            return Poll::Ready(Ok(()));
        }
        ready!(poll_budget(cx));
        loop {
            let mut out = self.lock();
            out.check(0)?;
            match self.try_flush(&mut out) {
                Ok(()) => {
                    self.take_back_wake(&mut out);
                    return Poll::Ready(Ok(()));
                }
                Err(err) if err.kind() == io::ErrorKind::WouldBlock => {}
                Err(err) => return Poll::Ready(Err(err)),
            }
            // Waits with the lock let go: see `poll_send`.
            drop(out);
            ready!(self.io.poll_write_ready(cx))?;
        }
    }

    /// [`try_write`](crate::TcpStream::try_write) behind the outbox: what
    /// is queued goes first, and while any of it remains this says
    /// `WouldBlock`.
    pub(crate) fn try_write(&self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        let bufs = syscall::at_most_max_slices(bufs);
        if !self.busy.load(Ordering::Acquire) {
            return self.io.try_write_io(|s| send(s, bufs));
        }
        let len = bufs.iter().map(|b| b.len()).sum();
        let mut out = self.lock();
        out.check(len)?;
        self.try_send(&mut out, bufs, len)
    }

    /// `shutdown(2)`, after the outbox for the write side: if the kernel
    /// cannot take it all now, the write side is shut once it has. The read
    /// side never waits (issue 40, bug 5): a read after `shutdown(Both)`
    /// returns end of stream at once, as the kernel's would.
    pub(crate) fn shutdown(self: &Arc<Self>, how: Shutdown) -> io::Result<()> {
        let mut out = self.lock();
        if how != Shutdown::Read {
            out.shut_down = true;
            if !out.bytes.is_empty() {
                out.shut = Some(Shutdown::Write);
                drop(out);
                self.send_queued();
                return match how {
                    Shutdown::Both => shut(&self.io, Shutdown::Read),
                    _ => Ok(()),
                };
            }
        }
        drop(out);
        shut(&self.io, how)
    }

    /// Sends the outbox and the `bufs` after it (`len` bytes, not 0), in one
    /// `sendmsg`, waiting while the kernel refuses; returns how much of
    /// `bufs` it took.
    ///
    /// It tries under the outbox's lock and waits with the lock let go:
    /// parking may wake the oldest waiter to make room (see
    /// `Registration`), and that may be this socket's own waker, whose wake
    /// takes the lock (issue 40, bug 2: the loop thread blocked on itself).
    fn poll_send(
        self: &Arc<Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
        len: usize,
    ) -> Poll<io::Result<usize>> {
        ready!(poll_budget(cx));
        loop {
            let mut out = self.lock();
            out.check(len)?;
            match self.try_send(&mut out, bufs, len) {
                Err(err) if err.kind() == io::ErrorKind::WouldBlock => {}
                result => return Poll::Ready(result),
            }
            drop(out);
            ready!(self.io.poll_write_ready(cx))?;
        }
    }

    /// One try of [`poll_send`](Self::poll_send), never waiting:
    /// `WouldBlock` while the kernel refuses what is queued.
    fn try_send(&self, out: &mut Out, bufs: &[IoSlice<'_>], len: usize) -> io::Result<usize> {
        loop {
            let queued = out.bytes.len();
            if queued == 0 {
                return self.io.try_write_stream(len, |s| send(s, bufs));
            }
            // The queued bytes are one of the `IOV_MAX` slices a `sendmsg`
            // takes: `bufs` get the others.
            let bufs = &bufs[..bufs.len().min(syscall::MAX_SLICES - 1)];
            let all = queued + bufs.iter().map(|b| b.len()).sum::<usize>();
            let sent = self
                .io
                .try_write_stream(all, |s| with_queued(s, &out.bytes, bufs))?;
            out.bytes.advance(sent.min(queued));
            if sent > queued {
                return Ok(sent - queued);
            }
        }
    }

    /// Sends the outbox until it is empty, or the kernel refuses
    /// (`WouldBlock`).
    fn try_flush(&self, out: &mut Out) -> io::Result<()> {
        while !out.bytes.is_empty() {
            let bytes = &out.bytes;
            let len = bytes.len();
            let sent = self.io.try_write_stream(len, |s| s.send(bytes.unsent()))?;
            out.bytes.advance(sent);
        }
        Ok(())
    }

    /// The outbox was sent: the wake asked for after this poll has nothing
    /// to do, and is taken back.
    #[inline]
    fn take_back_wake(self: &Arc<Self>, out: &mut Out) {
        if out.armed && !out.refused {
            let me = Arc::as_ptr(self).cast::<()>();
            if take_back_wake_after_poll(|waker| waker.data() == me) {
                out.armed = false;
            }
        }
    }

    /// Locks the outbox.
    #[inline]
    fn lock(&self) -> OutGuard<'_> {
        OutGuard {
            out: self.out.lock(),
            busy: &self.busy,
        }
    }

    /// Asks for a wake when the running poll returns, unless one is due:
    /// `false` if no poll is running (send now instead).
    fn arm(self: &Arc<Self>, out: &mut Out) -> bool {
        if !out.armed {
            out.armed = wake_after_poll(Waker::from(Arc::clone(self)));
        }
        out.armed
    }

    /// The wake's work: sends the outbox; what the kernel refuses waits
    /// for writability, with this socket's waker, parked with the lock let
    /// go (see [`poll_send`](Self::poll_send)).
    fn send_queued(self: &Arc<Self>) {
        loop {
            let mut out = self.lock();
            out.armed = false;
            out.refused = false;
            if out.bytes.is_empty() && out.shut.is_none() {
                // A drain or flush sent it all already: the usual case.
                return;
            }
            if self.send_rest(&mut out) {
                return;
            }
            out.armed = true;
            out.refused = true;
            drop(out);
            match self.wait_writable() {
                Poll::Pending => return,
                // Writable again already: send again.
                Poll::Ready(Ok(())) => {}
                Poll::Ready(Err(err)) => self.lock().fail(err),
            }
        }
    }

    /// Sends the outbox, then makes the shutdown that waited for it:
    /// `false` if the kernel refused, and the rest waits.
    #[cold]
    fn send_rest(&self, out: &mut Out) -> bool {
        while !out.bytes.is_empty() {
            let bytes = &out.bytes;
            let len = bytes.len();
            let mut asked = false;
            let sent = self.io.try_write_stream(len, |s| {
                asked = true;
                s.send(bytes.unsent())
            });
            match sent {
                Ok(sent) => out.bytes.advance(sent),
                Err(err) if err.kind() == io::ErrorKind::WouldBlock => return false,
                // The registration's error, not the kernel's: the runtime
                // has shut down (this is its last wake). The bytes and the
                // shutdown stay for the drop's last send, which asks the
                // kernel directly.
                Err(_) if !asked => return true,
                Err(err) => out.fail(err),
            }
        }
        if let Some(how) = out.shut.take()
            && let Err(err) = shut(&self.io, how)
        {
            out.error = Some(err);
        }
        true
    }

    /// Parks this socket's waker for writability: `Pending` if it now
    /// waits, ready if the socket is writable already (or failed).
    fn wait_writable(self: &Arc<Self>) -> Poll<io::Result<()>> {
        let waker = Waker::from(Arc::clone(self));
        // No budget: this runs outside any task's poll.
        pin!(unconstrained(poll_fn(|cx| self.io.poll_write_ready(cx))))
            .poll(&mut Context::from_waker(&waker))
            .map_ok(drop)
    }
}

/// Socket options are set on the registered stream.
impl<S: Stream + Simulated> options::Sock for Arc<Sock<S>> {
    fn sock(&self) -> Option<SockRef<'_>> {
        self.get_ref().os()
    }
}

/// The loop wakes a socket's waker by value (after the poll, or on
/// writability); a wake by reference takes `Wake`'s default, a clone and
/// this.
impl<S: Stream> Wake for Sock<S> {
    fn wake(self: Arc<Self>) {
        lock::assert_unlocked();
        self.send_queued();
    }
}

impl<S: Stream> Drop for Sock<S> {
    /// The last chance for the outbox: one send, without waiting. Bytes
    /// are left here only when the runtime shut down while the kernel was
    /// refusing them (`send_rest` keeps them), so the send goes to the
    /// kernel directly: the registration would only answer that the
    /// runtime is gone, though the peer may have made room since.
    fn drop(&mut self) {
        let out = self.out.get_mut();
        if !out.bytes.is_empty() {
            let sent = self.io.get_ref().send(out.bytes.unsent());
            let left = out.bytes.len() - sent.unwrap_or(0).min(out.bytes.len());
            if left > 0 {
                log::debug!("a stream closed with {left} bytes its peer did not take");
            }
        }
        if let Some(how) = out.shut.take() {
            let _ = shut(&self.io, how);
        }
    }
}

impl Out {
    /// Before a write of `len` bytes: returns (and forgets) an error a
    /// send for the outbox met, or the kernel's answer to writing after a
    /// shutdown.
    #[inline]
    fn check(&mut self, len: usize) -> io::Result<()> {
        if self.error.is_none() && !self.shut_down {
            return Ok(());
        }
        self.failed(len)
    }

    #[cold]
    fn failed(&mut self, len: usize) -> io::Result<()> {
        if let Some(err) = self.error.take() {
            return Err(err);
        }
        if len > 0 {
            return Err(io::Error::new(
                io::ErrorKind::BrokenPipe,
                "write after the stream's write side was shut down",
            ));
        }
        Ok(())
    }

    /// A send for the outbox failed: its bytes cannot arrive any more.
    fn fail(&mut self, err: io::Error) {
        self.bytes = OutBuf::default();
        self.error = Some(err);
    }
}

/// One `send` of a single slice, else one `sendmsg`.
fn send<S: Stream>(s: &S, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
    match bufs {
        [one] => s.send(one),
        _ => s.send_vectored(bufs),
    }
}

/// One `send` of the queued bytes, or one `sendmsg` of them and `bufs`.
fn with_queued<S: Stream>(s: &S, queued: &OutBuf, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
    let first = IoSlice::new(queued.unsent());
    match bufs {
        [] => s.send(queued.unsent()),
        [one] => s.send_vectored(&[first, *one]),
        _ => s.send_vectored(&[&[first][..], bufs].concat()),
    }
}

/// `shutdown(2)`; a connection already gone (reset) is shut, not an error.
fn shut<S: Stream>(io: &Registration<S>, how: Shutdown) -> io::Result<()> {
    match io.get_ref().shutdown(how) {
        Err(err) if err.kind() == io::ErrorKind::NotConnected => Ok(()),
        result => result,
    }
}

/// The capacity an [`OutBuf`] keeps once it empties: enough for a typical
/// reply; more is given back, so one large burst does not keep its memory.
const KEEP: usize = 64 * 1024;

/// Bytes queued and not yet taken by the writer: the lesson's `outbuf`,
/// the buffer a socket's outbox and a [`StreamWriter`](crate::io::StreamWriter)
/// keep, for a layer of one's own over a socket (a callback layer such as
/// ioloop-callbacks'). [`push`](Self::push) queues, never waiting;
/// [`poll_send_down_to`](Self::poll_send_down_to) sends.
///
/// The bytes are `bytes[head..]`. Sending advances `head` instead of
/// shifting the bytes, so a partial write costs nothing; the sent prefix is
/// dropped when new bytes are appended and it is at least as large as what
/// remains (each byte is then moved at most once on average), or when
/// everything has been sent, keeping at most 64 KiB of capacity.
///
/// # Examples
///
/// ```
/// use std::future::poll_fn;
///
/// use ioloop::io::OutBuf;
///
/// ioloop::block_on(async {
///     let mut outbuf = OutBuf::default();
///     outbuf.push(b"Hello!\n");
///     outbuf.push(b"[echo] hi\n");
///     assert_eq!(outbuf.unsent(), b"Hello!\n[echo] hi\n");
///     let mut peer = Vec::new(); // a writer that takes everything
///     poll_fn(|cx| outbuf.poll_send_down_to(cx, &mut peer, 0)).await?;
///     assert!(outbuf.is_empty());
///     assert_eq!(peer, b"Hello!\n[echo] hi\n");
///     Ok::<_, std::io::Error>(())
/// })
/// .unwrap();
/// ```
#[derive(Debug, Default)]
pub struct OutBuf {
    bytes: Vec<u8>,
    head: usize,
}

impl OutBuf {
    /// The bytes still to be sent, oldest first.
    #[inline]
    pub fn unsent(&self) -> &[u8] {
        &self.bytes[self.head..]
    }

    /// How many bytes are still to be sent.
    #[inline]
    pub fn len(&self) -> usize {
        self.bytes.len() - self.head
    }

    /// Whether nothing is left to send.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.head == self.bytes.len()
    }

    /// Appends `data` after the unsent bytes: the lesson's `queue_send`.
    pub fn push(&mut self, data: &[u8]) {
        if self.head > 0 && self.head >= self.len() {
            self.bytes.drain(..self.head);
            self.head = 0;
        }
        self.bytes.extend_from_slice(data);
    }

    /// Forgets the first `n` unsent bytes, which were sent. Once all are,
    /// starts again at the front, keeping at most `KEEP` of capacity.
    #[inline]
    pub(crate) fn advance(&mut self, n: usize) {
        self.head += n.min(self.len());
        if self.head == self.bytes.len() {
            self.head = 0;
            if self.bytes.capacity() > KEEP {
                self.bytes = Vec::new();
            } else {
                self.bytes.clear();
            }
        }
    }
}
