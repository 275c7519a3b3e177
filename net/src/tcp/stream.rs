//! [`TcpStream`], whole: connecting, addresses and options, and reads
//! (its writes, readiness and `futures_io` impls are `impls.rs`'s, shared
//! with `UnixStream`).

use std::future::poll_fn;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::task::{Context, Poll, ready};

use ioloop_runtime::io::Registration;

use crate::addr::{self, ToSocketAddrs};
use crate::outbox::Sock;
use crate::{impls, options, sys};

/// A TCP connection registered with the reactor: the lesson's `conn`.
///
/// `TcpStream` and `&TcpStream` implement `futures_io::AsyncRead` and
/// `AsyncWrite`, so one task can read while another writes (see
/// [`split`](Self::split) and [`into_split`](Self::into_split)). Writes
/// never raise `SIGPIPE`: a peer that has gone is `BrokenPipe` or
/// `ConnectionReset`. Dropping the stream closes the socket.
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
    io: Arc<Sock<sys::TcpStream>>,
}

impls::stream!(TcpStream: SocketAddr;
    short_reads_drain: true, peek: sys::TcpStream::peek);

impl TcpStream {
    /// Opens a connection to `addr`, any [`ToSocketAddrs`] (a host name is
    /// resolved on the blocking pool first). Several addresses are tried in
    /// turn, not raced, until one connects. No timeout of its own: wrap it
    /// in `ioloop::time::timeout`.
    ///
    /// # Errors
    ///
    /// The last address's connect error if none connects
    /// (`ConnectionRefused`, `TimedOut`, ...); the lookup's error;
    /// `InvalidInput` for a malformed address or an empty slice; an error
    /// if no ioloop runtime runs on this thread.
    ///
    /// # Cancellation
    ///
    /// Dropping the future closes the half-open socket (and abandons a
    /// lookup under way).
    #[doc(alias = "open_connection", alias = "create_connection")]
    pub async fn connect(addr: impl ToSocketAddrs) -> io::Result<TcpStream> {
        addr::each_addr(&addr, Self::connect_one).await
    }

    /// One connect attempt, to one address.
    async fn connect_one(addr: SocketAddr) -> io::Result<TcpStream> {
        Self::connected(sys::TcpStream::connect(addr)?).await
    }

    /// Registers a socket whose non-blocking `connect(2)` has begun (here
    /// or in `TcpSocket`) and waits for the connect to finish.
    pub(crate) async fn connected(stream: sys::TcpStream) -> io::Result<TcpStream> {
        let stream = Self::from_mio(stream)?;
        poll_fn(|cx| stream.poll_connected(cx)).await?;
        Ok(stream)
    }

    /// Ready once a non-blocking connect has finished, with its outcome.
    fn poll_connected(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        loop {
            // Writable means the connect finished, well or not: `SO_ERROR`
            // says which. A wake-up before that (a new registration starts
            // out "ready") shows as `ENOTCONN` from `getpeername`: clear the
            // readiness and wait for the real edge.
            let event = ready!(self.io.poll_write_ready(cx))?;
            let socket = self.io.get_ref();
            if let Some(err) = socket.take_error()? {
                return Poll::Ready(Err(err));
            }
            match socket.peer_addr() {
                Ok(_) => return Poll::Ready(Ok(())),
                // A write-closed socket stays "ready" (the closed bit never
                // clears), so waiting again would spin: report it instead.
                Err(err)
                    if err.kind() == io::ErrorKind::NotConnected && !event.is_write_closed() =>
                {
                    self.io.clear_readiness(event);
                }
                Err(err) => return Poll::Ready(Err(err)),
            }
        }
    }

    /// Wraps a connected stream made elsewhere, switching it to
    /// non-blocking mode and registering it with this thread's runtime.
    ///
    /// # Errors
    ///
    /// If the socket cannot be made non-blocking, or no ioloop runtime runs
    /// on this thread.
    pub fn from_std(stream: std::net::TcpStream) -> io::Result<TcpStream> {
        stream.set_nonblocking(true)?;
        Self::from_mio(sys::TcpStream::from_std(stream))
    }

    pub(crate) fn from_mio(stream: sys::TcpStream) -> io::Result<TcpStream> {
        Registration::new(stream).map(|io| TcpStream { io: Sock::new(io) })
    }

    options::sockopt!(@tcp);
    options::sockopt!(@ip);
}
