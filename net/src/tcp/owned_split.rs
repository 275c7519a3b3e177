//! Owned halves: `TcpStream::into_split`, for a reading task and a writing
//! task.
//!
//! # What dropping the write half does
//!
//! It shuts the write side down (`Shutdown::Write`), as tokio's does.
//! Dropping the writer is how a task says "I am done sending", and a peer
//! often waits for exactly that, an end of file, before it answers or
//! closes. Doing nothing instead would leave the connection open for
//! writing until the read half is dropped too; and if the reading task is
//! waiting for the peer's answer, neither side ever finishes. Closing the
//! socket is not possible while the read half still uses it, so a
//! half-close is the nearest thing to "drop closes". The read half keeps
//! reading whatever the peer still sends.

use std::io;
use std::net::Shutdown;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use futures_io::{AsyncRead, AsyncWrite};

use super::TcpStream;

/// The reading half of a [`TcpStream`], from [`TcpStream::into_split`].
/// Dropping it does not affect the write half.
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
///     let (mut reader, _writer) = server.into_split();
///     let reading = ioloop::spawn(async move {
///         let mut buf = [0; 5];
///         reader.read_exact(&mut buf).await.map(|()| buf)
///     });
///     client.write_all(b"hello").await?;
///     assert_eq!(&reading.await.unwrap()?, b"hello");
///     Ok::<_, std::io::Error>(())
/// })
/// .unwrap();
/// ```
#[derive(Debug)]
pub struct OwnedReadHalf {
    stream: Arc<TcpStream>,
}

/// The writing half of a [`TcpStream`], from [`TcpStream::into_split`].
///
/// Dropping it shuts the stream's write side down, so the peer reads end
/// of file (see [`TcpStream::into_split`] for why); `poll_close` does the
/// same explicitly. The socket closes when both halves are gone.
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
///     let (_reader, mut writer) = server.into_split();
///     ioloop::spawn(async move { writer.write_all(b"news").await }).await.unwrap()?;
///     // The write half was dropped with its task: end of file follows.
///     let mut got = Vec::new();
///     client.read_to_end(&mut got).await?;
///     assert_eq!(got, b"news");
///     Ok::<_, std::io::Error>(())
/// })
/// .unwrap();
/// ```
#[derive(Debug)]
pub struct OwnedWriteHalf {
    stream: Arc<TcpStream>,
    /// Set once the write side is shut down, so drop does not repeat it.
    shut_down: bool,
}

impl TcpStream {
    /// Splits the stream into a read half and a write half that own it
    /// together, to move into two tasks: one reading, one writing.
    ///
    /// Dropping the write half shuts the write side down, so the peer reads
    /// end of file: dropping the writer is how a task says it is done
    /// sending, and a peer that waits for that before answering would
    /// otherwise wait until the read half is dropped too. The socket closes
    /// when both halves are dropped.
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

impl AsRef<TcpStream> for OwnedReadHalf {
    fn as_ref(&self) -> &TcpStream {
        &self.stream
    }
}

impl AsRef<TcpStream> for OwnedWriteHalf {
    fn as_ref(&self) -> &TcpStream {
        &self.stream
    }
}
