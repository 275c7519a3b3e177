//! `TcpStream::connect`: a non-blocking connect, awaited.

use std::future::poll_fn;
use std::io;
use std::task::{Context, Poll, ready};

use super::TcpStream;
use crate::ToSocketAddr;

impl TcpStream {
    /// Opens a connection to `addr`: a non-blocking `connect(2)`, then a
    /// wait for the socket to become writable, then its error, if any.
    ///
    /// There is no timeout of its own (the kernel gives up after minutes of
    /// unanswered SYNs): wrap it in `ioloop::time::timeout` to bound it.
    ///
    /// # Errors
    ///
    /// `InvalidInput` if `addr` is not a literal `ip:port` (no DNS on the
    /// loop thread); the connect error otherwise (`ConnectionRefused` when
    /// nothing listens, `TimedOut`, `NetworkUnreachable`, ...); an error if
    /// no ioloop runtime runs on this thread.
    ///
    /// # Cancellation
    ///
    /// Dropping the future closes the half-open socket.
    ///
    /// # Examples
    ///
    /// ```
    /// use ioloop::net::{TcpListener, TcpStream};
    ///
    /// ioloop::block_on(async {
    ///     let listener = TcpListener::bind("127.0.0.1:0").await?;
    ///     let addr = listener.local_addr()?;
    ///     let stream = TcpStream::connect(addr).await?;
    ///     assert_eq!(stream.peer_addr()?, addr);
    ///     drop(listener);
    ///     let refused = TcpStream::connect(addr).await.unwrap_err();
    ///     assert_eq!(refused.kind(), std::io::ErrorKind::ConnectionRefused);
    ///     Ok::<_, std::io::Error>(())
    /// })
    /// .unwrap();
    /// ```
    #[doc(alias = "open_connection", alias = "create_connection")]
    pub async fn connect(addr: impl ToSocketAddr) -> io::Result<TcpStream> {
        let addr = addr.to_socket_addr()?;
        let stream = Self::from_mio(mio::net::TcpStream::connect(addr)?)?;
        poll_fn(|cx| stream.poll_connected(cx)).await?;
        Ok(stream)
    }

    /// Ready once a non-blocking connect has finished, with its outcome.
    ///
    /// The connect's own pattern: a writable socket has finished
    /// connecting, successfully or not; `SO_ERROR` says which. A wake-up
    /// before that (a new registration starts out "ready", so the first
    /// poll usually is one) shows as `ENOTCONN` from `getpeername`: clear
    /// the readiness and wait for the real edge.
    fn poll_connected(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        loop {
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
}
