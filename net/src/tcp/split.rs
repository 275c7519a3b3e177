//! A [`TcpStream`]'s halves, one reading task and one writing task: the
//! borrowed [`ReadHalf`] and [`WriteHalf`] from `split`, and the owned
//! [`OwnedReadHalf`] and [`OwnedWriteHalf`] from `into_split`. The halves
//! themselves are shared with the other stream type (`halves.rs`).

use std::io::{self, IoSlice};
use std::net::Shutdown;
use std::task::{Context, Poll};

use super::stream::TcpStream;
use crate::halves;

/// The reading half of a [`TcpStream`], from [`TcpStream::split`].
pub type ReadHalf<'a> = halves::ReadHalf<'a, TcpStream>;

/// The writing half of a [`TcpStream`], from [`TcpStream::split`]. Closing it
/// (`poll_close`) shuts the stream's write side down; dropping it does
/// nothing, since the stream is only borrowed.
pub type WriteHalf<'a> = halves::WriteHalf<'a, TcpStream>;

/// The reading half of a [`TcpStream`], from [`TcpStream::into_split`].
/// Dropping it does not affect the write half.
pub type OwnedReadHalf = halves::OwnedReadHalf<TcpStream>;

/// The writing half of a [`TcpStream`], from [`TcpStream::into_split`].
///
/// Dropping it shuts the stream's write side down, so the peer reads end
/// of file; `poll_close` does the same explicitly. The socket closes when
/// both halves are gone.
pub type OwnedWriteHalf = halves::OwnedWriteHalf<TcpStream>;

impl TcpStream {
    /// Splits the stream into a read half and a write half borrowing it,
    /// for one task (or one `select`) reading while another writes. For
    /// halves that move into spawned tasks, see
    /// [`into_split`](Self::into_split).
    ///
    /// With `futures_util::AsyncReadExt` in scope, `stream.split()` means
    /// that trait's `split(self)`; write `TcpStream::split(&stream)` for
    /// this one.
    ///
    /// # Examples
    ///
    /// An echo through the halves of one stream:
    ///
    /// ```
    /// use futures_util::{AsyncReadExt, AsyncWriteExt};
    /// use ioloop::net::{TcpListener, TcpStream};
    ///
    /// ioloop::block_on(async {
    ///     let listener = TcpListener::bind("127.0.0.1:0").await?;
    ///     let mut client = TcpStream::connect(listener.local_addr()?).await?;
    ///     let (server, _) = listener.accept().await?;
    ///     client.write_all(b"echo me").await?;
    ///     client.close().await?; // half-close: the copy below ends
    ///     let (reader, mut writer) = TcpStream::split(&server);
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
        halves::split(self)
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
    /// use ioloop::net::{TcpListener, TcpStream};
    ///
    /// ioloop::block_on(async {
    ///     let listener = TcpListener::bind("127.0.0.1:0").await?;
    ///     let client = TcpStream::connect(listener.local_addr()?).await?;
    ///     let (mut server, _) = listener.accept().await?;
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
        halves::into_split(self)
    }
}

impl halves::Stream for TcpStream {
    fn poll_recv(&self, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<io::Result<usize>> {
        TcpStream::poll_recv(self, cx, buf)
    }

    fn poll_send(&self, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        TcpStream::poll_send(self, cx, buf)
    }

    fn poll_send_vectored(
        &self,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        TcpStream::poll_send_vectored(self, cx, bufs)
    }

    fn poll_shutdown_write(&self) -> Poll<io::Result<()>> {
        TcpStream::poll_shutdown_write(self)
    }

    fn shutdown(&self, how: Shutdown) -> io::Result<()> {
        TcpStream::shutdown(self, how)
    }
}
