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

use crate::kv_pubsub::Subscriber;
use crate::kv_store::{self, Outcome, Progress, Store};
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
/// As `kv_server`'s: the most bytes read before others get a turn.
const YIELD_EVERY: usize = 64 * 1024;

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
    let mut subscriber = Subscriber::new(&store);
    let writer = BufWriter::new(writer);
    let _ = converse(reader, writer, &store, &mut subscriber, &mut stopped).await;
    while subscriber.leave_slice() {
        tokio::task::yield_now().await;
    }
}

async fn converse(
    mut reader: OwnedReadHalf,
    mut writer: BufWriter<OwnedWriteHalf>,
    store: &Store,
    subscriber: &mut Subscriber,
    stopped: &mut watch::Receiver<bool>,
) -> io::Result<()> {
    let (mut inbuf, mut out) = (Vec::new(), Vec::new());
    let mut parser = resp::Parser::new();
    let (mut delivering, mut unyielded) = (0, 0);
    loop {
        out.clear();
        let mut args = match parser.parse(&inbuf) {
            Parsed::Command(args) => args,
            Parsed::Invalid(why) => {
                resp::error(&mut out, &format!("ERR Protocol error: {why}"));
                writer.write_all(&out).await?;
                break;
            }
            Parsed::Incomplete => {
                parser.consume(&mut inbuf);
                // A large command (a big SET) leaves no large buffer behind.
                if inbuf.capacity() > MAX_KEPT && inbuf.len() < MAX_KEPT {
                    inbuf.shrink_to(MAX_KEPT);
                }
                writer.flush().await?;
                subscriber.delivered(std::mem::take(&mut delivering));
                if *stopped.borrow() {
                    break;
                }
                tokio::select! {
                    biased;
                    _ = stopped.changed() => break,
                    read = read_more(&mut reader, &mut inbuf) => match read? {
                        0 => break,
                        n => unyielded += n,
                    },
                    taken = subscriber.messages(&mut out) => {
                        delivering = taken?;
                        writer.write_all(&out).await?;
                    }
                }
                if unyielded >= YIELD_EVERY {
                    unyielded = 0;
                    tokio::task::yield_now().await;
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
        let turn = match Store::on_keys(&args) {
            true => Some(store.turn().await),
            false => None,
        };
        let mut progress = Progress::default();
        let outcome = loop {
            match store.execute(
                &mut args,
                &mut out,
                subscriber.is_subscribed(),
                &mut progress,
            ) {
                Outcome::More => {}
                Outcome::PubSub if !subscriber.command(&mut args, &mut out, &mut progress) => {}
                outcome => break outcome,
            }
            // Only pub/sub commands, which hold no turn, have replies
            // between slices: a wait on this client holds no one else.
            writer.write_all(&out).await?;
            out.clear();
            tokio::task::yield_now().await;
        };
        drop(turn);
        while kv_store::free_slice(&mut args) {
            tokio::task::yield_now().await;
        }
        match outcome {
            Outcome::Done | Outcome::More | Outcome::PubSub => writer.write_all(&out).await?,
            Outcome::Value(value) => {
                writer.write_all(&out).await?;
                writer.write_all(&value).await?;
                writer.write_all(b"\r\n").await?;
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
