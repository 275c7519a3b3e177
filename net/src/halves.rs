//! A stream's halves, for TCP and Unix streams alike: [`ReadHalf`] and
//! [`WriteHalf`], over a reference to the stream (from `split`) or an `Arc`
//! of it (from `into_split`), and the `halves!` macro that names them for
//! each stream type and writes its `split` and `into_split`.
//!
//! `&TcpStream` and `&UnixStream` already read and write, so a half is a
//! reference (or an `Arc`) with one direction's trait. Any number of tasks
//! may wait on each direction; halves only make the ownership plain.

use std::io::{self, IoSlice};
use std::net::Shutdown;
use std::ops::Deref;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures_io::{AsyncRead, AsyncWrite};

/// What a stream lends its halves besides its `futures_io` impls on `&S`
/// (`impls::stream!` implements it): a shutdown for the owned write half's
/// drop. Sealed: public only so that the halves' trait impls may name it.
pub trait Stream {
    /// `shutdown(2)`.
    fn shutdown(&self, how: Shutdown) -> io::Result<()>;
}

/// The reading half of a stream `P` points to: `&S` from `split`, or
/// `Arc<S>` from `into_split`. Dropping it does not affect the write half.
#[derive(Debug)]
pub struct ReadHalf<P>(pub(crate) P);

/// The writing half of a stream `P` points to: `&S` from `split`, or
/// `Arc<S>` from `into_split`. Closing it (`poll_close`) shuts the
/// stream's write side down. Dropping the owned one does too, so the peer
/// reads end of file; dropping the borrowed one does nothing. The socket
/// closes when both owned halves are gone.
#[derive(Debug)]
pub struct WriteHalf<P: Deref<Target: Stream>> {
    pub(crate) stream: P,
    /// Whether dropping it shuts the write side down: an owned half not
    /// yet closed.
    pub(crate) shut_on_drop: bool,
}

impl<P: Deref + Unpin> AsyncRead for ReadHalf<P>
where
    for<'a> &'a P::Target: AsyncRead,
{
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut &*self.0).poll_read(cx, buf)
    }
}

impl<P: Deref<Target: Stream> + Unpin> AsyncWrite for WriteHalf<P>
where
    for<'a> &'a P::Target: AsyncWrite,
{
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut &*self.stream).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut &*self.stream).poll_write_vectored(cx, bufs)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut &*self.stream).poll_flush(cx)
    }

    fn poll_close(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.shut_on_drop = false;
        Pin::new(&mut &*self.stream).poll_close(cx)
    }
}

impl<P: Deref<Target: Stream>> Drop for WriteHalf<P> {
    fn drop(&mut self) {
        if self.shut_on_drop
            && let Err(err) = self.stream.shutdown(Shutdown::Write)
        {
            // A drop has no one to tell.
            log::debug!("shutting down a dropped write half: {err}");
        }
    }
}

impl<P: Deref> AsRef<P::Target> for ReadHalf<P> {
    fn as_ref(&self) -> &P::Target {
        &self.0
    }
}

impl<P: Deref<Target: Stream>> AsRef<P::Target> for WriteHalf<P> {
    fn as_ref(&self) -> &P::Target {
        &self.stream
    }
}

/// The halves' names for the stream type `$T` (`ReadHalf<'a>` is
/// `halves::ReadHalf<&'a $T>`), and its `split` and `into_split`.
macro_rules! halves {
    ($T:ident) => {
        #[doc = concat!("The reading half of a [`", stringify!($T), "`], from [`", stringify!($T), "::split`].")]
        pub type ReadHalf<'a> = $crate::halves::ReadHalf<&'a $T>;

        #[doc = concat!("The writing half of a [`", stringify!($T), "`], from [`", stringify!($T), "::split`].")]
        /// Closing it (`poll_close`) shuts the stream's write side down;
        /// dropping it does nothing.
        pub type WriteHalf<'a> = $crate::halves::WriteHalf<&'a $T>;

        #[doc = concat!("The reading half of a [`", stringify!($T), "`], from [`", stringify!($T), "::into_split`].")]
        pub type OwnedReadHalf = $crate::halves::ReadHalf<std::sync::Arc<$T>>;

        #[doc = concat!("The writing half of a [`", stringify!($T), "`], from [`", stringify!($T), "::into_split`].")]
        /// Dropping it (or `poll_close`) shuts the stream's write side
        /// down, so the peer reads end of file. The socket closes when both
        /// halves are gone.
        pub type OwnedWriteHalf = $crate::halves::WriteHalf<std::sync::Arc<$T>>;

        impl $T {
            /// Splits the stream into a read half and a write half
            /// borrowing it, for one task (or one `select`) reading while
            /// another writes.
            ///
            /// With `futures_util::AsyncReadExt` in scope, `stream.split()`
            /// is that trait's `split(self)`:
            #[doc = concat!("write `", stringify!($T), "::split(&stream)` for this one.")]
            pub fn split(&self) -> (ReadHalf<'_>, WriteHalf<'_>) {
                let writer = $crate::halves::WriteHalf { stream: self, shut_on_drop: false };
                ($crate::halves::ReadHalf(self), writer)
            }

            /// Splits the stream into halves that own it together, to move
            /// into two tasks. Dropping the write half shuts the write side
            /// down (the peer reads end of file); the socket closes when
            /// both halves are dropped.
            pub fn into_split(self) -> (OwnedReadHalf, OwnedWriteHalf) {
                let stream = std::sync::Arc::new(self);
                let reader = $crate::halves::ReadHalf(stream.clone());
                (reader, $crate::halves::WriteHalf { stream, shut_on_drop: true })
            }
        }
    };
}
pub(crate) use halves;
