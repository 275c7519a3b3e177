//! A child's pipes: `ChildStdin`, `ChildStdout`, `ChildStderr`, each a
//! nonblocking end registered with the reactor.

use std::io::{self, IoSlice};
use std::os::fd::OwnedFd;
use std::pin::Pin;
use std::process::Stdio;
use std::task::{Context, Poll};

use futures_io::{AsyncRead, AsyncWrite};
use mio::unix::pipe::{Receiver, Sender};

use crate::AsyncFd;

/// The end of a pipe a child reads as its standard input: a futures-io
/// writer (`StreamWriter::new(stdin)` gives asyncio's `write` + `drain`).
///
/// Closing it ([`poll_close`](AsyncWrite::poll_close), `close().await`) or
/// dropping it closes the
/// pipe, and the child reads end of file. A write after the child closed
/// its end (or exited) fails with [`io::ErrorKind::BrokenPipe`].
#[derive(Debug)]
pub struct ChildStdin {
    /// `None` once closed.
    io: Option<AsyncFd<Sender>>,
}

/// The end of a pipe a child writes as its standard output: a futures-io
/// reader (`StreamReader::new(stdout)` gives asyncio's `readline`).
#[derive(Debug)]
pub struct ChildStdout {
    io: AsyncFd<Receiver>,
}

/// The end of a pipe a child writes as its standard error: as
/// [`ChildStdout`].
#[derive(Debug)]
pub struct ChildStderr {
    io: AsyncFd<Receiver>,
}

impl ChildStdin {
    pub(crate) fn new(std: std::process::ChildStdin) -> io::Result<Self> {
        let sender = Sender::from(std);
        sender.set_nonblocking(true)?;
        Ok(ChildStdin {
            io: Some(AsyncFd::new(sender)?),
        })
    }

    /// The open end, or `BrokenPipe` once closed.
    fn open(&self) -> io::Result<&AsyncFd<Sender>> {
        self.io.as_ref().ok_or_else(|| {
            io::Error::new(io::ErrorKind::BrokenPipe, "the child's stdin was closed")
        })
    }

    /// The pipe's end as a [`Stdio`] for another child (blocking again, as
    /// a program expects its standard streams): a pipeline.
    ///
    /// # Errors
    ///
    /// `BrokenPipe` once closed; an error from `fcntl`.
    pub fn into_stdio(mut self) -> io::Result<Stdio> {
        let io = self.io.take();
        let sender = io
            .map(AsyncFd::into_inner)
            .ok_or_else(|| self.open().unwrap_err())?;
        sender.set_nonblocking(false)?;
        Ok(Stdio::from(OwnedFd::from(sender)))
    }
}

macro_rules! reader {
    ($name:ident, $std:ty) => {
        impl $name {
            pub(crate) fn new(std: $std) -> io::Result<Self> {
                let receiver = Receiver::from(std);
                receiver.set_nonblocking(true)?;
                Ok($name {
                    io: AsyncFd::new(receiver)?,
                })
            }

            /// The pipe's end as a [`Stdio`] for another child (blocking
            /// again, as a program expects its standard streams): a
            /// pipeline, `a | b`.
            ///
            /// # Errors
            ///
            /// An error from `fcntl`.
            pub fn into_stdio(self) -> io::Result<Stdio> {
                let receiver = self.io.into_inner();
                receiver.set_nonblocking(false)?;
                Ok(Stdio::from(OwnedFd::from(receiver)))
            }
        }

        impl AsyncRead for $name {
            fn poll_read(
                self: Pin<&mut Self>,
                cx: &mut Context<'_>,
                buf: &mut [u8],
            ) -> Poll<io::Result<usize>> {
                self.io.poll_read_stream(cx, buf)
            }
        }
    };
}

reader!(ChildStdout, std::process::ChildStdout);
reader!(ChildStderr, std::process::ChildStderr);

impl AsyncWrite for ChildStdin {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.poll_write_vectored(cx, &[IoSlice::new(buf)])
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        if bufs.iter().all(|b| b.is_empty()) {
            return Poll::Ready(self.open().map(|_| 0));
        }
        self.open()?.poll_write_stream(cx, bufs)
    }

    /// A pipe keeps nothing back: there is nothing to flush.
    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(self.open().map(drop))
    }

    /// Closes the pipe: the child reads end of file. Closing again is not
    /// an error.
    fn poll_close(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.io = None;
        Poll::Ready(Ok(()))
    }
}
