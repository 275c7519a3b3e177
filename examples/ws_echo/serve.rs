//! `ws_echo`'s connections: accept, the WebSocket handshake, then every
//! text or binary message sent back, until the client closes.
//!
//! Shared by `main.rs` and by tests/servers/ws_echo.rs.

use std::fmt;
use std::io;
use std::net::SocketAddr;

use async_tungstenite::tungstenite::{Error, Message};
use futures_util::StreamExt;
use ioloop::net::{TcpListener, TcpStream};

/// How a connection ended.
#[derive(Debug)]
pub enum End {
    /// The client closed after `messages` echoes.
    Closed {
        /// Messages echoed.
        messages: usize,
    },
    /// The handshake or the conversation failed.
    Failed(Error),
}

impl fmt::Display for End {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            End::Closed { messages } => write!(f, "closed after {messages} message(s)"),
            End::Failed(err) => write!(f, "failed: {err}"),
        }
    }
}

/// Accepts connections forever, one task each; `on_end` hears how each
/// ended.
///
/// # Errors
///
/// Only the listener's own.
pub async fn serve(
    listener: TcpListener,
    on_end: impl Fn(SocketAddr, &End) + Clone + 'static,
) -> io::Result<()> {
    loop {
        let (stream, peer) = listener.accept().await?;
        let on_end = on_end.clone();
        drop(ioloop::spawn_local(async move {
            let end = match handle(stream).await {
                Ok(messages) => End::Closed { messages },
                Err(err) => End::Failed(err),
            };
            on_end(peer, &end);
        }));
    }
}

/// One connection: upgrade, then echo; returns how many messages were
/// echoed. Pings are answered by tungstenite itself.
pub async fn handle(stream: TcpStream) -> Result<usize, Error> {
    stream.set_nodelay(true)?;
    let mut ws = async_tungstenite::accept_async(stream).await?;
    let mut messages = 0;
    while let Some(message) = ws.next().await {
        match message? {
            message @ (Message::Text(_) | Message::Binary(_)) => {
                ws.send(message).await?;
                messages += 1;
            }
            // The closing handshake: tungstenite has queued the reply,
            // and the next `next()` sends it and ends the stream.
            Message::Close(_) | Message::Ping(_) | Message::Pong(_) | Message::Frame(_) => {}
        }
    }
    Ok(messages)
}
