//! The accept loop of both listeners ([`TcpListener`] and
//! [`UnixListener`]), and their [`Incoming`] stream: sorting `accept(2)`
//! errors, and backing off when the process runs out of file descriptors.
//! The guide's "Streams and sockets in depth" says why each rule is what
//! it is.
//!
//! - A failed *connection* (aborted or reset while queued, refused by a
//!   firewall, its network gone) is skipped, logged at debug.
//! - A *resource* shortage (`EMFILE`, `ENFILE`, `ENOBUFS`, `ENOMEM`) leaves
//!   the connection queued and the listener readable: accepting pauses,
//!   with a warning, for 10 ms, doubling up to 1 s while it lasts.
//! - Anything else is the *listener*'s error, and goes to the caller.
//!
//! [`TcpListener`]: super::TcpListener
//! [`UnixListener`]: crate::unix::UnixListener

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use futures_core::Stream;
use ioloop_runtime::io::Waiter;
use ioloop_runtime::time::{Sleep, sleep};
use mio::event::Source;

/// The first back-off delay after a resource error.
const FIRST_DELAY: Duration = Duration::from_millis(10);
/// The longest back-off delay.
const MAX_DELAY: Duration = Duration::from_secs(1);
/// Per-connection failures in a row after which we back off anyway: an
/// error that does not consume its connection (a security policy refusing
/// every accept with `EPERM`) must not become a busy loop.
const MAX_SKIPS_IN_A_ROW: u32 = 32;

/// What one accept failure means; see the module docs.
#[derive(Debug, PartialEq, Eq)]
enum Failure {
    Connection,
    Resources,
    Listener,
}

/// Sorts an error from `accept(2)`, or from registering the accepted
/// socket (whose `ENOMEM`/`ENOSPC` are shortages too).
fn sort(err: &io::Error) -> Failure {
    use io::ErrorKind::*;
    match (err.kind(), err.raw_os_error()) {
        (ConnectionAborted | ConnectionReset | PermissionDenied, _) => Failure::Connection,
        (NetworkDown | NetworkUnreachable | HostUnreachable, _) => Failure::Connection,
        (OutOfMemory | StorageFull, _) => Failure::Resources,
        (_, Some(libc::EMFILE | libc::ENFILE | libc::ENOBUFS)) => Failure::Resources,
        // Errors that Linux's `accept(2)` passes on from the new socket, to
        // be treated like a connection that failed while queued
        // (`accept(2)`, "Error handling").
        #[cfg(any(target_os = "linux", target_os = "android"))]
        (_, Some(libc::ENONET)) => Failure::Connection,
        (_, Some(libc::EPROTO | libc::ENOPROTOOPT | libc::EHOSTDOWN)) => Failure::Connection,
        _ => Failure::Listener,
    }
}

/// A listener an [`Incoming`] accepts from: `TcpListener` and `UnixListener`.
/// Sealed: public only so that [`Incoming`] may name it.
pub trait Accept {
    /// The mio listener.
    type Io: Source;
    /// A connection's stream.
    type Stream;
    /// A peer's address.
    type Addr;

    /// One `accept(2)`, then registering the new stream with the runtime
    /// running on this thread.
    fn accept_registered(io: &Self::Io) -> io::Result<(Self::Stream, Self::Addr)>;
}

/// The stream of connections a listener accepts, from its `incoming`, and
/// the state of every accept loop (`accept` makes one for its future).
///
/// It never ends, and yields `Err` only for errors of the listener itself:
/// failed connections are skipped and resource shortages backed off, as in
/// the listener's `accept`. The back-off lives here, with this loop's place
/// among the listener's waiters, so the delay grows for as long as this
/// loop keeps failing, and dropping it takes its waker out of the
/// listener's waiters.
#[derive(Debug)]
#[must_use = "streams do nothing unless polled"]
pub struct Incoming<'a, L: Accept> {
    waiter: Waiter<'a, L::Io>,
    backoff: Option<Sleep>,
    next_delay: Duration,
    skips_in_a_row: u32,
}

impl<'a, L: Accept> Incoming<'a, L> {
    pub(crate) fn new(waiter: Waiter<'a, L::Io>) -> Self {
        Incoming {
            waiter,
            backoff: None,
            next_delay: FIRST_DELAY,
            skips_in_a_row: 0,
        }
    }

    /// Accepts the next connection: the one pattern (try, clear readiness
    /// on `WouldBlock`, wait), plus the error sorting.
    pub(crate) fn poll_accept(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<(L::Stream, L::Addr)>> {
        loop {
            // Readiness is not cleared while backing off: the connections
            // are still queued, and no new edge may come for them.
            if let Some(backoff) = &mut self.backoff {
                ready!(Pin::new(backoff).poll(cx));
                self.backoff = None;
            }
            // Registering is inside the retried call, but its errors are
            // never `WouldBlock`: they reach the sorting below unchanged.
            let accepted = ready!(self.waiter.poll_io(cx, L::accept_registered));
            let Err(err) = accepted else {
                self.next_delay = FIRST_DELAY;
                self.skips_in_a_row = 0;
                return Poll::Ready(accepted);
            };
            match sort(&err) {
                Failure::Listener => return Poll::Ready(Err(err)),
                Failure::Connection if self.skips_in_a_row < MAX_SKIPS_IN_A_ROW => {
                    self.skips_in_a_row += 1;
                    log::debug!("accept: skipped a failed incoming connection: {err}");
                }
                Failure::Connection | Failure::Resources => {
                    self.skips_in_a_row = 0;
                    let delay = self.next_delay;
                    self.next_delay = (delay * 2).min(MAX_DELAY);
                    log::warn!("accept failed: {err}; pausing accepts for {delay:?}");
                    self.backoff = Some(sleep(delay));
                }
            }
        }
    }
}

impl<L: Accept> Stream for Incoming<'_, L> {
    type Item = io::Result<L::Stream>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let accepted = ready!(self.get_mut().poll_accept(cx));
        Poll::Ready(Some(accepted.map(|(stream, _)| stream)))
    }
}

/// What `TcpListener` and `UnixListener` share, given the mio listener
/// `$Io`, std's `$Std`, and the accepted `$Stream` and peer `$Addr`:
/// `from_std`, `accept`, `incoming` and their [`Incoming`] alias, the
/// [`Accept`] impl, `local_addr`, `Debug` and the descriptor traits.
macro_rules! listener {
    ($T:ident { io: $Io:ty, std: $Std:ty, stream: $Stream:ident, addr: $Addr:ty }) => {
        impl $T {
            /// Wraps a listener made elsewhere (bound and listening),
            /// switching it to non-blocking mode and registering it with
            /// this thread's runtime.
            ///
            /// # Errors
            ///
            /// If the socket cannot be made non-blocking, or no ioloop
            /// runtime runs on this thread.
            pub fn from_std(listener: $Std) -> std::io::Result<$T> {
                listener.set_nonblocking(true)?;
                Self::from_mio(<$Io>::from_std(listener))
            }

            pub(crate) fn from_mio(listener: $Io) -> std::io::Result<$T> {
                ioloop_runtime::io::Registration::new(listener).map(|io| $T { io })
            }

            /// Waits for the next connection and returns it, registered
            /// with the runtime running this future, with the peer's
            /// address: the lesson's `conn, addr = sock.accept()`.
            ///
            /// Connections that failed while queued (aborted, reset,
            /// refused by a firewall) are skipped, logged at debug level.
            /// Out of file descriptors (`EMFILE`, `ENFILE`), buffers or
            /// memory, the connection stays queued and accepting pauses,
            /// with a warning, for 10 ms, doubling up to 1 s.
            ///
            /// # Errors
            ///
            /// Only errors of the listener itself (or the runtime shut
            /// down); per-connection and resource errors are handled here.
            ///
            /// # Cancellation
            ///
            /// Cancel-safe: a connection is either returned or left queued.
            /// The back-off lives in the future: a new call starts again
            /// from the shortest delay.
            pub async fn accept(&self) -> std::io::Result<($Stream, $Addr)> {
                let mut incoming = self.incoming();
                std::future::poll_fn(|cx| incoming.poll_accept(cx)).await
            }

            /// The connections this listener accepts, as a
            /// `futures_core::Stream`: see [`Incoming`].
            pub fn incoming(&self) -> Incoming<'_> {
                $crate::tcp::accept::Incoming::new(self.io.read_waiter())
            }
        }

        #[doc = concat!("The stream of connections a [`", stringify!($T), "`] accepts, from [`", stringify!($T), "::incoming`].")]
        /// It never ends, and yields `Err` only for errors of the listener
        /// itself, as `accept` does.
        pub type Incoming<'a> = $crate::tcp::accept::Incoming<'a, $T>;

        impl $crate::tcp::accept::Accept for $T {
            type Io = $Io;
            type Stream = $Stream;
            type Addr = $Addr;

            fn accept_registered(io: &$Io) -> std::io::Result<($Stream, $Addr)> {
                let (stream, addr) = io.accept()?;
                Ok(($Stream::from_mio(stream)?, addr))
            }
        }

        $crate::impls::addresses!($T: $Addr);
        $crate::impls::debug_and_fd!($T: local_addr);
    };
}
pub(crate) use listener;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_are_sorted() {
        use io::ErrorKind::*;
        let os = io::Error::from_raw_os_error;
        let mut cases = vec![
            (ConnectionAborted.into(), Failure::Connection),
            (PermissionDenied.into(), Failure::Connection),
            (os(libc::EMFILE), Failure::Resources),
            (os(libc::ENFILE), Failure::Resources),
            (OutOfMemory.into(), Failure::Resources),
            (InvalidInput.into(), Failure::Listener),
            (io::Error::other("the runtime shut down"), Failure::Listener),
        ];
        if cfg!(all(target_os = "linux", target_arch = "x86_64")) {
            // Numbered as in <asm-generic/errno.h>: ENOBUFS, EPROTO, EBADF.
            cases.push((os(105), Failure::Resources));
            cases.push((os(71), Failure::Connection));
            cases.push((os(9), Failure::Listener));
        }
        for (err, expected) in cases {
            assert_eq!(sort(&err), expected, "{err:?}");
        }
    }
}
