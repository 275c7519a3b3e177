//! `TcpStream`: the type, addresses and socket options. Connecting is in
//! `connect`, reading and writing in `stream_io`.

use std::fmt;
use std::io;
use std::net::{Shutdown, SocketAddr};

use ioloop_runtime::io::Registration;

/// A TCP connection registered with the reactor: the lesson's `conn`.
///
/// `TcpStream` and `&TcpStream` implement `futures_io::AsyncRead` and
/// `AsyncWrite`, so one task can read while another writes (the reactor
/// keeps one waiting task per direction, so not two readers or two writers
/// at once; see
/// [`split`](Self::split) and [`into_split`](Self::into_split)). For
/// line-oriented protocols wrap it in asyncio-style streams,
/// `ioloop::io::StreamReader` and `StreamWriter`.
///
/// Dropping the stream closes the socket.
///
/// # Examples
///
/// ```
/// use ioloop::net::{TcpListener, TcpStream};
///
/// ioloop::block_on(async {
///     let listener = TcpListener::bind("127.0.0.1:0").await?;
///     let client = TcpStream::connect(listener.local_addr()?).await?;
///     let (server, _) = listener.accept().await?;
///     assert_eq!(client.peer_addr()?, server.local_addr()?);
///     assert_eq!(server.peer_addr()?, client.local_addr()?);
///     Ok::<_, std::io::Error>(())
/// })
/// .unwrap();
/// ```
pub struct TcpStream {
    pub(super) io: Registration<mio::net::TcpStream>,
}

impl TcpStream {
    /// Wraps a connected stream made elsewhere, switching it to
    /// non-blocking mode and registering it with the runtime running on
    /// this thread.
    ///
    /// # Errors
    ///
    /// If the socket cannot be made non-blocking, or no ioloop runtime runs
    /// on this thread.
    ///
    /// # Examples
    ///
    /// ```
    /// use ioloop::net::{TcpListener, TcpStream};
    ///
    /// ioloop::block_on(async {
    ///     let listener = TcpListener::bind("127.0.0.1:0").await?;
    ///     let std_stream = std::net::TcpStream::connect(listener.local_addr()?)?;
    ///     let stream = TcpStream::from_std(std_stream)?;
    ///     assert_eq!(stream.peer_addr()?, listener.local_addr()?);
    ///     Ok::<_, std::io::Error>(())
    /// })
    /// .unwrap();
    /// ```
    pub fn from_std(stream: std::net::TcpStream) -> io::Result<TcpStream> {
        stream.set_nonblocking(true)?;
        Self::from_mio(mio::net::TcpStream::from_std(stream))
    }

    pub(crate) fn from_mio(stream: mio::net::TcpStream) -> io::Result<TcpStream> {
        Ok(TcpStream {
            io: Registration::new(stream)?,
        })
    }

    /// The address of the peer this stream is connected to.
    ///
    /// # Errors
    ///
    /// `NotConnected` once the connection was reset.
    ///
    /// # Examples
    ///
    /// ```
    /// use ioloop::net::{TcpListener, TcpStream};
    ///
    /// ioloop::block_on(async {
    ///     let listener = TcpListener::bind("127.0.0.1:0").await?;
    ///     let stream = TcpStream::connect(listener.local_addr()?).await?;
    ///     assert_eq!(stream.peer_addr()?, listener.local_addr()?);
    ///     Ok::<_, std::io::Error>(())
    /// })
    /// .unwrap();
    /// ```
    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        self.io.get_ref().peer_addr()
    }

    /// The local address of this stream.
    ///
    /// # Errors
    ///
    /// The OS's error from `getsockname(2)` (rare).
    ///
    /// # Examples
    ///
    /// ```
    /// use ioloop::net::{TcpListener, TcpStream};
    ///
    /// ioloop::block_on(async {
    ///     let listener = TcpListener::bind("127.0.0.1:0").await?;
    ///     let client = TcpStream::connect(listener.local_addr()?).await?;
    ///     let (_server, peer) = listener.accept().await?;
    ///     assert_eq!(client.local_addr()?, peer);
    ///     Ok::<_, std::io::Error>(())
    /// })
    /// .unwrap();
    /// ```
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.io.get_ref().local_addr()
    }

    /// Sets `TCP_NODELAY`: with `true`, small writes go out at once instead
    /// of waiting (Nagle's algorithm) to be merged with later ones.
    ///
    /// # Errors
    ///
    /// The OS's error from `setsockopt(2)`.
    ///
    /// # Examples
    ///
    /// ```
    /// use ioloop::net::{TcpListener, TcpStream};
    ///
    /// ioloop::block_on(async {
    ///     let listener = TcpListener::bind("127.0.0.1:0").await?;
    ///     let stream = TcpStream::connect(listener.local_addr()?).await?;
    ///     assert!(!stream.nodelay()?);
    ///     stream.set_nodelay(true)?;
    ///     assert!(stream.nodelay()?);
    ///     Ok::<_, std::io::Error>(())
    /// })
    /// .unwrap();
    /// ```
    pub fn set_nodelay(&self, nodelay: bool) -> io::Result<()> {
        self.io.get_ref().set_nodelay(nodelay)
    }

    /// Whether `TCP_NODELAY` is set; see [`set_nodelay`](Self::set_nodelay).
    ///
    /// # Errors
    ///
    /// The OS's error from `getsockopt(2)`.
    ///
    /// # Examples
    ///
    /// ```
    /// use ioloop::net::{TcpListener, TcpStream};
    ///
    /// ioloop::block_on(async {
    ///     let listener = TcpListener::bind("127.0.0.1:0").await?;
    ///     let stream = TcpStream::connect(listener.local_addr()?).await?;
    ///     assert!(!stream.nodelay()?, "Nagle's algorithm is on by default");
    ///     Ok::<_, std::io::Error>(())
    /// })
    /// .unwrap();
    /// ```
    pub fn nodelay(&self) -> io::Result<bool> {
        self.io.get_ref().nodelay()
    }

    /// Shuts down one or both directions: `Shutdown::Write` is a half-close
    /// (the peer reads end of file once it has read what was sent, and this
    /// side can still read), the lesson's `conn.shutdown(SHUT_WR)`.
    ///
    /// # Errors
    ///
    /// The OS's error from `shutdown(2)`. A connection the peer already
    /// reset is not one: it is shut, and the call returns `Ok`.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::net::Shutdown;
    /// use futures_util::{AsyncReadExt, AsyncWriteExt};
    /// use ioloop::net::{TcpListener, TcpStream};
    ///
    /// ioloop::block_on(async {
    ///     let listener = TcpListener::bind("127.0.0.1:0").await?;
    ///     let mut client = TcpStream::connect(listener.local_addr()?).await?;
    ///     let (mut server, _) = listener.accept().await?;
    ///     client.write_all(b"question").await?;
    ///     client.shutdown(Shutdown::Write)?;
    ///     let mut asked = Vec::new();
    ///     server.read_to_end(&mut asked).await?; // ends: the client half-closed
    ///     server.write_all(b"answer").await?;
    ///     drop(server);
    ///     let mut answer = Vec::new();
    ///     client.read_to_end(&mut answer).await?; // the client still reads
    ///     assert_eq!((&asked[..], &answer[..]), (&b"question"[..], &b"answer"[..]));
    ///     Ok::<_, std::io::Error>(())
    /// })
    /// .unwrap();
    /// ```
    pub fn shutdown(&self, how: Shutdown) -> io::Result<()> {
        match self.io.get_ref().shutdown(how) {
            // A reset got there first (a race with the kernel): nothing left to shut.
            Err(err) if err.kind() == io::ErrorKind::NotConnected => Ok(()),
            result => result,
        }
    }
}

impl fmt::Debug for TcpStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TcpStream")
            .field("local_addr", &self.local_addr().ok())
            .field("peer_addr", &self.peer_addr().ok())
            .finish()
    }
}

#[cfg(unix)]
impl std::os::fd::AsFd for TcpStream {
    fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        self.io.get_ref().as_fd()
    }
}

#[cfg(unix)]
impl std::os::fd::AsRawFd for TcpStream {
    fn as_raw_fd(&self) -> std::os::fd::RawFd {
        self.io.get_ref().as_raw_fd()
    }
}
