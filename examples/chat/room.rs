//! The chat room: every line a client sends reaches every client, through
//! tokio's runtime-neutral `sync::broadcast` (no tokio runtime runs); one
//! task per client races its next line against the next message for it
//! (`tokio::select!`, also runtime-neutral).

use std::io;
use std::sync::Arc;

use ioloop::io::{StreamReader, StreamWriter};
use ioloop::net::{TcpListener, TcpStream};
use tokio::sync::broadcast::{self, Sender, error::RecvError};

/// Messages kept for a client that falls behind: past this, it is told
/// how many it missed instead of holding the others back.
pub const BACKLOG: usize = 256;

/// The longest line a client may send; a longer one ends its session.
pub const MAX_LINE: usize = 4096;

/// Accepts clients on `listener` until it fails, one task each.
pub async fn serve(listener: TcpListener) -> io::Result<()> {
    let (room, _) = broadcast::channel::<Arc<str>>(BACKLOG);
    let mut guests = 0u64;
    loop {
        let (stream, peer) = listener.accept().await?;
        guests += 1;
        let (room, name) = (room.clone(), format!("guest{guests}"));
        drop(ioloop::spawn(async move {
            if let Err(err) = client(stream, &name, room).await {
                eprintln!("{name} ({peer}): {err}");
            }
        }));
    }
}

/// One client's session: a greeting, then its lines out to the room and
/// the room's messages in, until it leaves.
async fn client(stream: TcpStream, name: &str, room: Sender<Arc<str>>) -> io::Result<()> {
    let (reader, writer) = stream.into_split();
    let mut reader = StreamReader::new(reader);
    reader.set_max_line_length(MAX_LINE);
    let mut writer = StreamWriter::new(writer);
    // Subscribed before announcing: the client sees its own arrival.
    let mut inbox = room.subscribe();
    writer.write(format!("welcome, {name}\n").as_bytes());
    writer.drain().await?;
    let _ = room.send(format!("* {name} joined\n").into());
    let ended = loop {
        // Both branches are cancel-safe: a line half read stays in the
        // reader, a message not yet received stays in the channel.
        tokio::select! {
            line = reader.read_line() => match line {
                Ok(Some(line)) => {
                    let text = String::from_utf8_lossy(line);
                    let _ = room.send(format!("{name}: {text}\n").into());
                }
                Ok(None) => break Ok(()),
                Err(err) => break Err(err),
            },
            message = inbox.recv() => {
                match message {
                    Ok(message) => writer.write(message.as_bytes()),
                    Err(RecvError::Lagged(missed)) => {
                        writer.write(format!("* you missed {missed} messages\n").as_bytes())
                    }
                    Err(RecvError::Closed) => break Ok(()),
                }
                writer.drain().await?;
            }
        }
    };
    let _ = room.send(format!("* {name} left\n").into());
    ended
}
