//! Running handlers on ioloop: `Config`, `serve`, `serve_with` and
//! `serve_connection`, the lesson's `Reactor.run` and `_accept`.

use std::io;
use std::time::Duration;

use super::Handler;
use super::driver;
use crate::io::DEFAULT_MAX_LINE_LENGTH;
use crate::{TcpListener, TcpStream};

/// The limits every connection of a server runs with.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use ioloop::callbacks::Config;
///
/// let config = Config {
///     idle_timeout: Some(Duration::from_secs(5)),
///     ..Config::default()
/// };
/// assert_eq!(config.max_inbuf, 64 * 1024);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Config {
    /// The most bytes a handler may leave unconsumed after
    /// [`on_data`](Handler::on_data); beyond it,
    /// [`on_inbuf_full`](Handler::on_inbuf_full). For a line protocol it is
    /// the longest line, `\r` included, as `StreamReader`'s line limit:
    /// 64 KiB by default.
    ///
    /// The connection reads at most one byte past it, so that a message of
    /// exactly `max_inbuf` bytes still has room for its terminator; the
    /// inbuf never holds more than `max_inbuf + 1` bytes, whatever the peer
    /// sends.
    pub max_inbuf: usize,
    /// How long a connection may go with no byte moving either way before
    /// it is closed with [`Disconnect::Idle`](super::Disconnect::Idle);
    /// `None` for never. 30 seconds by default, the lesson's
    /// `IDLE_DEADLINE`.
    pub idle_timeout: Option<Duration>,
    /// Reading pauses while more than this many bytes wait in the outbuf,
    /// and resumes once the peer has taken enough of them: a peer that
    /// sends requests without reading the replies is held back instead of
    /// growing the outbuf. 64 KiB by default.
    pub write_high_water: usize,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            max_inbuf: DEFAULT_MAX_LINE_LENGTH,
            idle_timeout: Some(Duration::from_secs(30)),
            write_high_water: 64 * 1024,
        }
    }
}

/// Accepts connections on `listener` forever and runs a handler made by
/// `factory` for each, on a task of its own, with the default [`Config`]:
/// the lesson's `Reactor.run`.
///
/// # Errors
///
/// Only an error of the listener itself (see
/// [`TcpListener::accept`]); a failing connection ends alone, and its
/// handler hears of it in [`on_disconnect`](Handler::on_disconnect).
///
/// # Cancellation
///
/// Dropping the future stops accepting and closes the listener.
/// Connections already accepted go on: their tasks are detached.
///
/// # Examples
///
/// ```
/// use ioloop::callbacks::{Connection, Handler, serve};
/// use ioloop::io::StreamReader;
/// use ioloop::net::{TcpListener, TcpStream};
///
/// struct Hello;
/// impl Handler for Hello {
///     fn on_connect(&mut self, conn: &mut Connection) {
///         conn.queue_send(b"Hello!\n");
///         conn.close();
///     }
///     fn on_data(&mut self, _conn: &mut Connection) {}
/// }
///
/// ioloop::block_on(async {
///     let listener = TcpListener::bind("127.0.0.1:0").await?;
///     let addr = listener.local_addr()?;
///     ioloop::spawn(serve(listener, || Hello));
///     let client = TcpStream::connect(addr).await?;
///     let mut reader = StreamReader::new(&client);
///     assert_eq!(reader.read_line().await?, Some(&b"Hello!"[..]));
///     assert_eq!(reader.read_line().await?, None, "closed after the greeting");
///     Ok::<_, std::io::Error>(())
/// })
/// .unwrap();
/// ```
#[doc(alias = "run", alias = "create_server")]
pub async fn serve<F, H>(listener: TcpListener, factory: F) -> io::Result<()>
where
    F: FnMut() -> H,
    H: Handler + Send + 'static,
{
    serve_with(listener, Config::default(), factory).await
}

/// [`serve`], with the limits of `config`.
///
/// # Errors
///
/// As [`serve`].
///
/// # Cancellation
///
/// As [`serve`].
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use ioloop::callbacks::{Config, Connection, Handler, serve_with};
/// use ioloop::io::StreamReader;
/// use ioloop::net::{TcpListener, TcpStream};
///
/// struct Silent;
/// impl Handler for Silent {
///     fn on_data(&mut self, _conn: &mut Connection) {}
/// }
///
/// ioloop::block_on(async {
///     let listener = TcpListener::bind("127.0.0.1:0").await?;
///     let addr = listener.local_addr()?;
///     let config = Config { idle_timeout: Some(Duration::from_millis(10)), ..Config::default() };
///     ioloop::spawn(serve_with(listener, config, || Silent));
///     let client = TcpStream::connect(addr).await?;
///     // Say nothing: the server closes the connection.
///     assert_eq!(StreamReader::new(&client).read_line().await?, None);
///     Ok::<_, std::io::Error>(())
/// })
/// .unwrap();
/// ```
pub async fn serve_with<F, H>(
    listener: TcpListener,
    config: Config,
    mut factory: F,
) -> io::Result<()>
where
    F: FnMut() -> H,
    H: Handler + Send + 'static,
{
    loop {
        let (stream, peer) = listener.accept().await?;
        log::debug!("callbacks: accepted {peer}");
        let handler = factory();
        // Detached: the task owns its connection, and nothing awaits it.
        drop(ioloop_runtime::spawn(driver::drive(
            stream, peer, config, handler,
        )));
    }
}

/// Runs `handler` on one connection accepted elsewhere, until it is over
/// (after [`on_disconnect`](Handler::on_disconnect)); the socket is closed
/// on return. [`serve`] runs this on a task per connection.
///
/// A connection already reset before it could be served (it has no peer
/// address any more) is closed without calling the handler.
///
/// # Cancellation
///
/// Dropping the future closes the connection at once, without
/// `on_disconnect`; queued bytes are lost.
///
/// # Examples
///
/// ```
/// use futures_util::io::{AsyncReadExt, AsyncWriteExt};
/// use ioloop::callbacks::{Config, Connection, Handler, serve_connection};
/// use ioloop::net::{TcpListener, TcpStream};
///
/// struct Upper;
/// impl Handler for Upper {
///     fn on_data(&mut self, conn: &mut Connection) {
///         let upper = conn.inbuf().to_ascii_uppercase();
///         conn.consume(upper.len());
///         conn.queue_send(&upper);
///     }
/// }
///
/// ioloop::block_on(async {
///     let listener = TcpListener::bind("127.0.0.1:0").await?;
///     let mut client = TcpStream::connect(listener.local_addr()?).await?;
///     let (stream, _) = listener.accept().await?;
///     let server = ioloop::spawn(serve_connection(stream, Config::default(), Upper));
///     client.write_all(b"shout").await?;
///     client.close().await?; // half-close: the server sees EOF, answers, closes
///     let mut answer = String::new();
///     client.read_to_string(&mut answer).await?;
///     assert_eq!(answer, "SHOUT");
///     server.await.unwrap();
///     Ok::<_, std::io::Error>(())
/// })
/// .unwrap();
/// ```
pub async fn serve_connection<H: Handler>(stream: TcpStream, config: Config, handler: H) {
    match stream.peer_addr() {
        Ok(peer) => driver::drive(stream, peer, config, handler).await,
        // Reset between accept and now: there is no one to serve.
        Err(err) => log::debug!("callbacks: connection gone before it was served: {err}"),
    }
}
