//! Borrowed halves: `TcpStream::split`.
//!
//! `&TcpStream` already reads and writes, so a half is a reference with
//! one direction's trait. The reactor keeps one reader waker and one writer
//! waker per socket, which is exactly one reading task and one writing
//! task: what the halves are for.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures_io::{AsyncRead, AsyncWrite};

use super::TcpStream;

/// The reading half of a [`TcpStream`], from [`TcpStream::split`].
///
/// # Examples
///
/// ```
/// use futures_util::{AsyncReadExt, AsyncWriteExt};
/// use ioloop::net::{TcpListener, TcpStream};
///
/// ioloop::block_on(async {
///     let listener = TcpListener::bind("127.0.0.1:0").await?;
///     let mut client = TcpStream::connect(listener.local_addr()?).await?;
///     let (server, _) = listener.accept().await?;
///     let (mut reader, _writer) = TcpStream::split(&server);
///     client.write_all(b"hi").await?;
///     let mut buf = [0; 2];
///     reader.read_exact(&mut buf).await?;
///     assert_eq!(&buf, b"hi");
///     Ok::<_, std::io::Error>(())
/// })
/// .unwrap();
/// ```
#[derive(Debug)]
pub struct ReadHalf<'a>(&'a TcpStream);

/// The writing half of a [`TcpStream`], from [`TcpStream::split`].
/// Closing it (`poll_close`) shuts the stream's write side down; dropping
/// it does nothing, since the stream is only borrowed.
///
/// # Examples
///
/// ```
/// use futures_util::{AsyncReadExt, AsyncWriteExt};
/// use ioloop::net::{TcpListener, TcpStream};
///
/// ioloop::block_on(async {
///     let listener = TcpListener::bind("127.0.0.1:0").await?;
///     let mut client = TcpStream::connect(listener.local_addr()?).await?;
///     let (server, _) = listener.accept().await?;
///     let (_reader, mut writer) = TcpStream::split(&server);
///     writer.write_all(b"bye").await?;
///     writer.close().await?; // the client reads end of file
///     let mut got = Vec::new();
///     client.read_to_end(&mut got).await?;
///     assert_eq!(got, b"bye");
///     Ok::<_, std::io::Error>(())
/// })
/// .unwrap();
/// ```
#[derive(Debug)]
pub struct WriteHalf<'a>(&'a TcpStream);

impl TcpStream {
    /// Splits the stream into a read half and a write half borrowing it,
    /// for one task (or one `select`) reading while another writes.
    ///
    /// For halves that move into spawned tasks, see
    /// [`into_split`](Self::into_split).
    ///
    /// With `futures_util::AsyncReadExt` in scope, `stream.split()` means
    /// that trait's `split(self)` (it takes the stream by value, so Rust
    /// finds it first); write `TcpStream::split(&stream)` or
    /// `(&stream).split()` for this one.
    ///
    /// # Examples
    ///
    /// An echo: copy what the client sends back to it, through the halves
    /// of one stream.
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
        (ReadHalf(self), WriteHalf(self))
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

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_close(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.0.poll_shutdown_write()
    }
}

impl AsRef<TcpStream> for ReadHalf<'_> {
    fn as_ref(&self) -> &TcpStream {
        self.0
    }
}

impl AsRef<TcpStream> for WriteHalf<'_> {
    fn as_ref(&self) -> &TcpStream {
        self.0
    }
}
