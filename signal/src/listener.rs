//! `Signal`: a listener for one signal, fed by a self-pipe the reactor
//! watches.

use std::future::poll_fn;
use std::io::{self, Read};
use std::task::{Context, Poll};

use mio::unix::pipe;
use signal_hook::SigId;

use ioloop_runtime::io::Registration;

use super::SignalKind;

/// Bytes read from the pipe per `read` call. One byte is one handler run;
/// a short read proves the pipe empty, so one call usually drains it.
const CHUNK: usize = 128;

/// A listener for one kind of signal, asyncio's `loop.add_signal_handler`
/// turned into something to await.
///
/// [`Signal::new`] installs it at once, so a delivery before the first
/// [`recv`](Self::recv) is kept for it. Deliveries coalesce: each `recv`
/// completes once for all of them since the previous one, never counted.
/// Every listener, in any runtime of the process, sees every delivery.
///
/// Dropping the listener removes it, but the default action is *not*
/// restored: from the first listener for a signal on, one that would end
/// the process (SIGINT, SIGTERM, ...) no longer does, even once every
/// listener is gone (the guide's "The default action is not restored").
///
/// # Examples
///
/// ```
/// use ioloop::signal::{Signal, SignalKind};
///
/// ioloop::block_on(async {
///     let mut term = Signal::new(SignalKind::terminate())?;
///     signal_hook::low_level::raise(signal_hook::consts::SIGTERM)?;
///     term.recv().await?;
///     assert_eq!(term.kind(), SignalKind::terminate());
///     Ok::<_, std::io::Error>(())
/// })
/// .unwrap();
/// ```
#[doc(alias = "add_signal_handler")]
#[derive(Debug)]
pub struct Signal {
    kind: SignalKind,
    /// The action that writes to the pipe's other end, which signal-hook
    /// owns and closes when the action is unregistered.
    action: SigId,
    pipe: Registration<pipe::Receiver>,
}

impl Signal {
    /// Starts listening for `kind`, in the runtime running on this thread:
    /// from this call on, a delivery is kept until [`recv`](Self::recv).
    ///
    /// # Errors
    ///
    /// - [`io::ErrorKind::InvalidInput`] for the signals no handler may
    ///   take over (SIGKILL, SIGSTOP) or should (SIGSEGV, SIGILL, SIGFPE:
    ///   signal-hook's `FORBIDDEN` list), and for numbers the OS does not
    ///   know as a signal;
    /// - when called outside an ioloop runtime;
    /// - when the pipe cannot be created (out of file descriptors).
    pub fn new(kind: SignalKind) -> io::Result<Signal> {
        let signum = kind.as_raw();
        // signal-hook panics on these; a caller's bad number is an error.
        if signal_hook::consts::FORBIDDEN.contains(&signum) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{kind:?} cannot be listened for"),
            ));
        }
        // Both ends are non-blocking: the handler must never block, and
        // the reader drains until WouldBlock.
        let (sender, receiver) = pipe::new()?;
        // The reactor first: without a runtime there is nothing to wake,
        // and no process-wide handler should be installed for nothing.
        let pipe = Registration::new(receiver)?;
        // An unknown number fails in `sigaction` with EINVAL, which is
        // `InvalidInput` too. On failure signal-hook closes `sender`.
        let action = signal_hook::low_level::pipe::register(signum, sender)?;
        log::debug!("ioloop: listening for {kind:?}");
        Ok(Signal { kind, action, pipe })
    }

    /// The signal this listener waits for.
    pub fn kind(&self) -> SignalKind {
        self.kind
    }

    /// Waits for the signal: completes once for every delivery, or group of
    /// deliveries, since the previous `recv` (or since [`new`](Self::new)).
    ///
    /// # Errors
    ///
    /// Fails if the runtime the listener was made in has shut down.
    ///
    /// # Cancellation
    ///
    /// Cancel-safe: deliveries are only consumed by the poll that
    /// completes, so dropping the future loses none.
    pub async fn recv(&mut self) -> io::Result<()> {
        poll_fn(|cx| self.poll_recv(cx)).await
    }

    /// Polls for the signal: `Ready` once for every delivery, or group of
    /// deliveries, since the previous `Ready`; otherwise `cx` is woken when
    /// the next one comes.
    ///
    /// # Errors
    ///
    /// As [`recv`](Self::recv).
    pub fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let mut buf = [0; CHUNK];
        let mut received = false;
        loop {
            // A short read emptied the pipe and cleared its readiness; a
            // full one may have left bytes behind, so read again.
            let read = self
                .pipe
                .poll_read_stream(cx, CHUNK, |mut rx| rx.read(&mut buf));
            match read {
                Poll::Ready(Ok(CHUNK)) => received = true,
                // The pipe's write end closed while the listener lived:
                // signal-hook holds it until `Drop` unregisters the action,
                // so this should never be seen.
                Poll::Ready(Ok(0)) => {
                    let err = "ioloop: a signal listener's pipe was closed under it";
                    return Poll::Ready(Err(io::Error::new(io::ErrorKind::UnexpectedEof, err)));
                }
                Poll::Ready(Ok(_)) => return Poll::Ready(Ok(())),
                // Deliveries were consumed in this poll, so it must report
                // them now; an error that persists is the next call's.
                // Pending is WouldBlock (the pipe is empty) or the task's
                // budget running out mid-drain, possible only after a burst
                // of more than CHUNK deliveries: the bytes left over then
                // complete the next recv at once, a spurious wake-up but no
                // lost signal.
                Poll::Pending | Poll::Ready(Err(_)) if received => return Poll::Ready(Ok(())),
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Err(err)) => return Poll::Ready(Err(err)),
            }
        }
    }
}

impl Drop for Signal {
    fn drop(&mut self) {
        // Unregistered before the read end closes (the fields drop after
        // this): a handler writing to a pipe without a reader would raise
        // SIGPIPE, whose default action kills the process. `false` means the
        // action was already gone, which leaves nothing to do.
        signal_hook::low_level::unregister(self.action);
        log::debug!("ioloop: stopped listening for {:?}", self.kind);
    }
}
