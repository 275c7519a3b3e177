//! A [`UnixStream`]'s halves, one reading task and one writing task: the
//! borrowed [`ReadHalf`] and [`WriteHalf`] from `split`, and the owned
//! [`OwnedReadHalf`] and [`OwnedWriteHalf`] from `into_split`.
//!
//! The same design as TCP's halves (`tcp/split.rs`): `&UnixStream` already
//! reads and writes, so a half is a reference (or an `Arc`) with one
//! direction's trait.

use std::io::{self, IoSlice};
use std::net::Shutdown;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use futures_io::{AsyncRead, AsyncWrite};

use super::stream::UnixStream;

/// The reading half of a [`UnixStream`], from [`UnixStream::split`].
#[derive(Debug)]
pub struct ReadHalf<'a>(&'a UnixStream);

/// The writing half of a [`UnixStream`], from [`UnixStream::split`].
/// Closing it (`poll_close`) shuts the stream's write side down; dropping
/// it does nothing, since the stream is only borrowed.
#[derive(Debug)]
pub struct WriteHalf<'a>(&'a UnixStream);

/// The reading half of a [`UnixStream`], from [`UnixStream::into_split`].
/// Dropping it does not affect the write half.
#[derive(Debug)]
pub struct OwnedReadHalf {
    stream: Arc<UnixStream>,
}

/// The writing half of a [`UnixStream`], from [`UnixStream::into_split`].
///
/// Dropping it shuts the stream's write side down, so the peer reads end
/// of file; `poll_close` does the same explicitly. The socket closes when
/// both halves are gone.
#[derive(Debug)]
pub struct OwnedWriteHalf {
    stream: Arc<UnixStream>,
    /// Set once the write side is shut down, so drop does not repeat it.
    shut_down: bool,
}

impl UnixStream {
    /// Splits the stream into a read half and a write half borrowing it,
    /// for one task (or one `select`) reading while another writes. For
    /// halves that move into spawned tasks, see
    /// [`into_split`](Self::into_split).
    ///
    /// With `futures_util::AsyncReadExt` in scope, `stream.split()` means
    /// that trait's `split(self)`; write `UnixStream::split(&stream)` for
    /// this one.
    ///
    /// # Examples
    ///
    /// An echo through the halves of one stream:
    ///
    /// ```
    /// use futures_util::{AsyncReadExt, AsyncWriteExt};
    /// use ioloop::net::UnixStream;
    ///
    /// ioloop::block_on(async {
    ///     let (mut client, server) = UnixStream::pair()?;
    ///     client.write_all(b"echo me").await?;
    ///     client.close().await?; // half-close: the copy below ends
    ///     let (reader, mut writer) = UnixStream::split(&server);
    ///     let copied = futures_util::io::copy(reader, &mut writer).await?;
    ///     drop(server);
    ///     let mut echoed = Vec::new();
    ///     client.read_to_end(&mut echoed).await?;
    ///     assert_eq!((copied, &echoed[..]), (7, &b"echo me"[..]));
    ///     Ok::<_, std::io::Error>(())
    /// })
    /// .unwrap();
    /// ```
    pub fn split(&self) -> (ReadHalf<'_>, WriteHalf<'_>) {
        (ReadHalf(self), WriteHalf(self))
    }

    /// Splits the stream into a read half and a write half that own it
    /// together, to move into two tasks: one reading, one writing.
    ///
    /// Dropping the write half shuts the write side down, so the peer reads
    /// end of file: that is how a writing task says it is done. The socket
    /// closes when both halves are dropped.
    ///
    /// # Examples
    ///
    /// ```
    /// use futures_util::{AsyncReadExt, AsyncWriteExt};
    /// use ioloop::net::UnixStream;
    ///
    /// ioloop::block_on(async {
    ///     let (client, mut server) = UnixStream::pair()?;
    ///     let (mut reader, mut writer) = client.into_split();
    ///     let sending = ioloop::spawn(async move {
    ///         writer.write_all(b"ping").await
    ///         // dropped here: the server reads end of file
    ///     });
    ///     let mut got = Vec::new();
    ///     server.read_to_end(&mut got).await?;
    ///     server.write_all(b"pong").await?;
    ///     drop(server);
    ///     let mut answer = Vec::new();
    ///     reader.read_to_end(&mut answer).await?;
    ///     sending.await.unwrap()?;
    ///     assert_eq!((&got[..], &answer[..]), (&b"ping"[..], &b"pong"[..]));
    ///     Ok::<_, std::io::Error>(())
    /// })
    /// .unwrap();
    /// ```
    pub fn into_split(self) -> (OwnedReadHalf, OwnedWriteHalf) {
        let stream = Arc::new(self);
        let reader = OwnedReadHalf {
            stream: stream.clone(),
        };
        let writer = OwnedWriteHalf {
            stream,
            shut_down: false,
        };
        (reader, writer)
    }
}

impl AsyncRead for ReadHalf<'_> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        self.0.poll_recv(cx, buf)
    }
}

impl AsyncWrite for WriteHalf<'_> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.0.poll_send(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        self.0.poll_send_vectored(cx, bufs)
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_close(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.0.poll_shutdown_write()
    }
}

impl AsyncRead for OwnedReadHalf {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        self.stream.poll_recv(cx, buf)
    }
}

impl AsyncWrite for OwnedWriteHalf {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.stream.poll_send(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        self.stream.poll_send_vectored(cx, bufs)
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_close(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        this.shut_down = true;
        this.stream.poll_shutdown_write()
    }
}

impl Drop for OwnedWriteHalf {
    fn drop(&mut self) {
        if self.shut_down {
            return;
        }
        if let Err(err) = self.stream.shutdown(Shutdown::Write) {
            // A drop has no one to tell.
            log::debug!("shutting down a dropped write half: {err}");
        }
    }
}

impl AsRef<UnixStream> for ReadHalf<'_> {
    fn as_ref(&self) -> &UnixStream {
        self.0
    }
}

impl AsRef<UnixStream> for WriteHalf<'_> {
    fn as_ref(&self) -> &UnixStream {
        self.0
    }
}

impl AsRef<UnixStream> for OwnedReadHalf {
    fn as_ref(&self) -> &UnixStream {
        &self.stream
    }
}

impl AsRef<UnixStream> for OwnedWriteHalf {
    fn as_ref(&self) -> &UnixStream {
        &self.stream
    }
}
