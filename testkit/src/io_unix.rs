//! A real socket for the stream tests, before the TCP types exist: one end
//! of a Unix socket pair registered with the reactor and read and written
//! through futures-io, the other end left blocking for a peer thread.

use std::io::{self, Read, Write};
use std::net::Shutdown;
use std::os::unix::net::UnixStream;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures_util::io::{AsyncRead, AsyncWrite};
use ioloop::io::Registration;

/// The registered end: `AsyncRead` + `AsyncWrite` through the reactor,
/// for `UnixIo` and, like `&TcpStream`, for `&UnixIo`.
pub struct UnixIo(Registration<mio::net::UnixStream>);

/// A connected pair: the registered end (call on the loop thread) and a
/// blocking std end for a peer thread.
pub fn pair() -> io::Result<(UnixIo, UnixStream)> {
    let (ours, peer) = pair_unregistered()?;
    Ok((register(ours)?, peer))
}

/// A connected pair of std sockets, to be moved to the threads that use
/// them before [`register`] is called on the loop thread.
pub fn pair_unregistered() -> io::Result<(UnixStream, UnixStream)> {
    UnixStream::pair()
}

/// Registers `ours` with the runtime running on this thread.
pub fn register(ours: UnixStream) -> io::Result<UnixIo> {
    ours.set_nonblocking(true)?;
    Ok(UnixIo(Registration::new(mio::net::UnixStream::from_std(
        ours,
    ))?))
}

impl AsyncRead for &UnixIo {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        self.0.poll_read_io(cx, |mut s| s.read(buf))
    }
}

impl AsyncWrite for &UnixIo {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.0.poll_write_io(cx, |mut s| s.write(data))
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    /// Shuts the write side down, as `TcpStream` will: the peer reads end
    /// of stream, and this end can still read.
    fn poll_close(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(self.0.get_ref().shutdown(Shutdown::Write))
    }
}

impl AsyncRead for UnixIo {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut &*self).poll_read(cx, buf)
    }
}

impl AsyncWrite for UnixIo {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut &*self).poll_write(cx, data)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut &*self).poll_flush(cx)
    }

    fn poll_close(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut &*self).poll_close(cx)
    }
}

/// FNV-1a, 64 bits: a checksum both ends can compute piece by piece.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fnv(pub u64);

impl Default for Fnv {
    fn default() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv {
    pub fn update(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x100_0000_01b3);
        }
    }
}
