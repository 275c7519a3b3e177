//! [`Socket`]: an ioloop stream that reads into uninitialized memory, which
//! both hyper's and tokio's read buffers are. Shared by the `hyper` and
//! `tokio-io` adapters.

use std::io;
use std::mem::MaybeUninit;
use std::task::{Context, Poll};

use ioloop_net::tcp::{self, TcpStream};
#[cfg(unix)]
use ioloop_net::unix::{self, UnixStream};

mod sealed {
    pub trait Sealed {}
}

/// An ioloop stream the adapters read from with no zeroing first:
/// [`TcpStream`], `UnixStream` (on Unix), a reference to either, and
/// their read halves (borrowed or owned). Sealed: only ioloop's own
/// `poll_read_uninit` is trusted to write the bytes it says it read; for
/// any other stream use the module's `FuturesIo`.
pub trait Socket: sealed::Sealed + Unpin {
    /// Reads into uninitialized memory, waiting for data; `Ok(n)` means
    /// the first `n` bytes are initialized.
    #[doc(hidden)]
    fn poll_read_uninit(
        &self,
        cx: &mut Context<'_>,
        buf: &mut [MaybeUninit<u8>],
    ) -> Poll<io::Result<usize>>;
}

/// [`Socket`] for an ioloop stream: its own `poll_read_uninit`.
macro_rules! socket {
    ($stream:ident) => {
        impl sealed::Sealed for $stream {}

        impl Socket for $stream {
            fn poll_read_uninit(
                &self,
                cx: &mut Context<'_>,
                buf: &mut [MaybeUninit<u8>],
            ) -> Poll<io::Result<usize>> {
                $stream::poll_read_uninit(self, cx, buf)
            }
        }
    };
}

socket!(TcpStream);
#[cfg(unix)]
socket!(UnixStream);

impl<S: Socket + Sync> sealed::Sealed for &S {}

/// A shared reference reads as the stream does (`&TcpStream` is itself a
/// futures-io stream): one task may read through it while another writes.
impl<S: Socket + Sync> Socket for &S {
    fn poll_read_uninit(
        &self,
        cx: &mut Context<'_>,
        buf: &mut [MaybeUninit<u8>],
    ) -> Poll<io::Result<usize>> {
        (**self).poll_read_uninit(cx, buf)
    }
}

/// [`Socket`] for a stream's read halves (from `split` and `into_split`):
/// each reads as its stream does.
macro_rules! read_halves {
    ($module:ident) => {
        impl sealed::Sealed for $module::ReadHalf<'_> {}
        impl sealed::Sealed for $module::OwnedReadHalf {}

        impl Socket for $module::ReadHalf<'_> {
            fn poll_read_uninit(
                &self,
                cx: &mut Context<'_>,
                buf: &mut [MaybeUninit<u8>],
            ) -> Poll<io::Result<usize>> {
                self.as_ref().poll_read_uninit(cx, buf)
            }
        }

        impl Socket for $module::OwnedReadHalf {
            fn poll_read_uninit(
                &self,
                cx: &mut Context<'_>,
                buf: &mut [MaybeUninit<u8>],
            ) -> Poll<io::Result<usize>> {
                self.as_ref().poll_read_uninit(cx, buf)
            }
        }
    };
}

read_halves!(tcp);
#[cfg(unix)]
read_halves!(unix);
