//! Reading and writing a `TcpStream`: `futures_io::AsyncRead` and
//! `AsyncWrite` for `TcpStream` and `&TcpStream`.
//!
//! Each call is the one pattern, `Registration::poll_read_stream` /
//! `poll_write_stream`: try the syscall; on `WouldBlock` clear readiness
//! and wait; retry. The stream variants also clear readiness after a short
//! read or write, which on a byte stream means the kernel buffer is empty
//! (or full): the next call waits for an edge instead of making a syscall
//! that can only fail with `EAGAIN`. That keeps an echo at one `recv` and
//! one `send` per message.
//!
//! Writes go through std's `TcpStream::write`, which on Linux is
//! `send(..., MSG_NOSIGNAL)`: writing to a peer that has gone returns
//! `BrokenPipe` or `ConnectionReset` to the writing task instead of raising
//! `SIGPIPE`, even in a process that has not ignored the signal (a C program
//! embedding us). Vectored writes are *not* overridden for that reason:
//! std's `write_vectored` is `writev(2)`, which cannot take `MSG_NOSIGNAL`,
//! so the default (write the first non-empty buffer) is used.

use std::io::{self, Read, Write};
use std::net::Shutdown;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures_io::{AsyncRead, AsyncWrite};

use super::TcpStream;

impl TcpStream {
    /// Reads into `buf`, waiting for data. An empty `buf` reads nothing and
    /// returns `Ok(0)` at once, without a syscall.
    pub(crate) fn poll_recv(
        &self,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        if buf.is_empty() {
            return Poll::Ready(Ok(0));
        }
        let len = buf.len();
        self.io
            .poll_read_stream(cx, len, |mut socket| socket.read(buf))
    }

    /// Writes from `buf`, waiting for room. An empty `buf` returns `Ok(0)`
    /// at once.
    pub(crate) fn poll_send(&self, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        if buf.is_empty() {
            return Poll::Ready(Ok(0));
        }
        self.io
            .poll_write_stream(cx, buf.len(), |mut socket| socket.write(buf))
    }

    /// The write side's `poll_close`: a half-close, so the peer reads end
    /// of file; nothing is buffered here to flush first.
    pub(crate) fn poll_shutdown_write(&self) -> Poll<io::Result<()>> {
        Poll::Ready(self.shutdown(Shutdown::Write))
    }
}

impl AsyncRead for &TcpStream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        self.poll_recv(cx, buf)
    }
}

impl AsyncWrite for &TcpStream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.poll_send(cx, buf)
    }

    /// Nothing to flush: bytes go straight to the kernel.
    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    /// Shuts the write side down (`Shutdown::Write`).
    fn poll_close(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.poll_shutdown_write()
    }
}

impl AsyncRead for TcpStream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        self.poll_recv(cx, buf)
    }
}

impl AsyncWrite for TcpStream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.poll_send(cx, buf)
    }

    /// Nothing to flush: bytes go straight to the kernel.
    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    /// Shuts the write side down (`Shutdown::Write`).
    fn poll_close(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.poll_shutdown_write()
    }
}
