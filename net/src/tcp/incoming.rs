//! `Incoming`: a listener's connections as a `futures_core::Stream`.

use std::fmt;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures_core::Stream;
use ioloop_runtime::io::Registration;

use super::TcpStream;
use super::accept::Acceptor;

/// The stream of connections a [`TcpListener`] accepts, returned by
/// [`TcpListener::incoming`].
///
/// It never ends. It yields `Err` only for errors of the listener itself:
/// failed connections are skipped and resource shortages backed off, as in
/// [`TcpListener::accept`]. The back-off state lives here, so it grows for
/// as long as this stream keeps failing.
///
/// # Examples
///
/// ```
/// use std::pin::Pin;
/// use futures_core::Stream;
/// use ioloop::net::{TcpListener, TcpStream};
///
/// ioloop::block_on(async {
///     let listener = TcpListener::bind("127.0.0.1:0").await?;
///     let addr = listener.local_addr()?;
///     let clients = ioloop::spawn(async move {
///         let a = TcpStream::connect(addr).await?;
///         let b = TcpStream::connect(addr).await?;
///         Ok::<_, std::io::Error>((a, b))
///     });
///     let mut incoming = listener.incoming();
///     let mut accepted = Vec::new();
///     while accepted.len() < 2 {
///         let next = std::future::poll_fn(|cx| Pin::new(&mut incoming).poll_next(cx)).await;
///         accepted.push(next.expect("never ends")?);
///     }
///     let (a, b) = clients.await.unwrap()?;
///     let mut peers: Vec<_> = accepted.iter().map(|s| s.peer_addr().unwrap()).collect();
///     peers.sort();
///     let mut locals = vec![a.local_addr()?, b.local_addr()?];
///     locals.sort();
///     assert_eq!(peers, locals);
///     Ok::<_, std::io::Error>(())
/// })
/// .unwrap();
/// ```
///
/// [`TcpListener`]: super::TcpListener
/// [`TcpListener::incoming`]: super::TcpListener::incoming
/// [`TcpListener::accept`]: super::TcpListener::accept
#[must_use = "streams do nothing unless polled"]
pub struct Incoming<'a> {
    listener: &'a Registration<mio::net::TcpListener>,
    acceptor: Acceptor,
}

impl<'a> Incoming<'a> {
    pub(crate) fn new(listener: &'a Registration<mio::net::TcpListener>) -> Self {
        Incoming {
            listener,
            acceptor: Acceptor::new(),
        }
    }
}

impl Stream for Incoming<'_> {
    type Item = io::Result<TcpStream>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        this.acceptor
            .poll_accept(this.listener, cx)
            .map(|accepted| Some(accepted.map(|(stream, _)| stream)))
    }
}

impl fmt::Debug for Incoming<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Incoming")
            .field("listener", self.listener.get_ref())
            .field("acceptor", &self.acceptor)
            .finish()
    }
}
