//! `kv_server`'s server.rs on tokio: the same loop, with tokio's socket
//! halves, a `BufWriter` and `tokio::spawn`.

use std::future::Future;
use std::io;
use std::pin::pin;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt, BufWriter};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, watch};
use tokio_stream::StreamExt;

use crate::kv_store::{self, Outcome, Store};
use crate::resp::{self, Parsed};

/// The server's settings.
#[derive(Clone, Copy, Debug)]
pub struct Config {
    /// Connections served at once; the next client waits until one leaves.
    pub max_connections: usize,
    /// How long a stop waits for open connections to finish.
    pub grace: Duration,
}

/// The most a connection's input buffer keeps between commands.
const MAX_KEPT: usize = 64 * 1024;
const SWEEP_EVERY: Duration = Duration::from_millis(100);

/// As `kv_server`'s `serve`.
pub async fn serve(
    listener: TcpListener,
    config: Config,
    shutdown: impl Future<Output = ()>,
) -> io::Result<()> {
    let store = Store::default();
    let limit = Arc::new(Semaphore::new(config.max_connections));
    let (stop, stopped) = watch::channel(false);
    let sweeper = tokio::spawn({
        let store = store.clone();
        async move {
            let mut every = tokio::time::interval(SWEEP_EVERY);
            loop {
                every.tick().await;
                store.sweep();
            }
        }
    });
    let mut shutdown = pin!(shutdown);
    loop {
        let permit = tokio::select! {
            biased;
            () = &mut shutdown => break,
            permit = limit.clone().acquire_owned() => permit.expect("never closed"),
        };
        let stream = tokio::select! {
            biased;
            () = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                // As Redis does: a reply goes out at once, never held
                // back waiting for the client's ACK of the previous one.
                Ok((stream, _)) => {
                    let _ = stream.set_nodelay(true);
                    stream
                }
                Err(err) => {
                    eprintln!("kv_server_tokio: accept: {err}");
                    continue;
                }
            },
        };
        tokio::spawn(connection(stream, store.clone(), stopped.clone(), permit));
    }
    drop(listener);
    let _ = stop.send(true);
    let all = u32::try_from(config.max_connections).unwrap_or(u32::MAX);
    if tokio::time::timeout(config.grace, limit.acquire_many(all))
        .await
        .is_err()
    {
        eprintln!("kv_server_tokio: connections still open after the grace period");
    }
    sweeper.abort();
    Ok(())
}

async fn connection(
    stream: TcpStream,
    store: Store,
    mut stopped: watch::Receiver<bool>,
    _permit: OwnedSemaphorePermit,
) {
    let (reader, writer) = stream.into_split();
    let _ = converse(reader, BufWriter::new(writer), &store, &mut stopped).await;
}

async fn converse(
    mut reader: OwnedReadHalf,
    mut writer: BufWriter<OwnedWriteHalf>,
    store: &Store,
    stopped: &mut watch::Receiver<bool>,
) -> io::Result<()> {
    let (mut inbuf, mut out) = (Vec::new(), Vec::new());
    let mut subscribed = kv_store::Subscriptions::new();
    loop {
        out.clear();
        let mut args = match resp::parse(&inbuf) {
            Parsed::Command(args, used) => {
                inbuf.drain(..used);
                // A large command (a big SET) leaves no large buffer behind.
                if inbuf.capacity() > MAX_KEPT && inbuf.len() < MAX_KEPT {
                    inbuf.shrink_to(MAX_KEPT);
                }
                args
            }
            Parsed::Invalid(why) => {
                resp::error(&mut out, &format!("ERR Protocol error: {why}"));
                writer.write_all(&out).await?;
                break;
            }
            Parsed::Incomplete => {
                writer.flush().await?;
                if *stopped.borrow() {
                    break;
                }
                tokio::select! {
                    biased;
                    _ = stopped.changed() => break,
                    read = read_more(&mut reader, &mut inbuf) => if read? == 0 {
                        break;
                    },
                    Some((channel, message)) = subscribed.next(), if !subscribed.is_empty() => {
                        let message = message.map_err(|lagged| io::Error::other(format!(
                            "a subscriber fell behind ({lagged}): disconnected"
                        )))?;
                        kv_store::message(&mut out, &channel, &message);
                        writer.write_all(&out).await?;
                    }
                }
                continue;
            }
        };
        if args.is_empty() {
            continue;
        }
        if args[0].eq_ignore_ascii_case(b"QUIT") {
            resp::simple(&mut out, "OK");
            writer.write_all(&out).await?;
            break;
        }
        if !subscribed.is_empty() && kv_store::answered_while_subscribed(&mut out, &args) {
            writer.write_all(&out).await?;
            continue;
        }
        match store.execute(&mut args, &mut out) {
            Outcome::Done => writer.write_all(&out).await?,
            Outcome::Value(value) => {
                writer.write_all(&out).await?;
                writer.write_all(&value).await?;
                writer.write_all(b"\r\n").await?;
            }
            Outcome::PubSub => {
                kv_store::pub_sub(&args, store, &mut subscribed, &mut out);
                writer.write_all(&out).await?;
            }
        }
    }
    writer.flush().await?;
    writer.shutdown().await
}

async fn read_more(reader: &mut OwnedReadHalf, inbuf: &mut Vec<u8>) -> io::Result<usize> {
    let mut chunk = [0; 16 * 1024];
    let n = reader.read(&mut chunk).await?;
    inbuf.extend_from_slice(&chunk[..n]);
    Ok(n)
}
