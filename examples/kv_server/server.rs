//! The key-value server on ioloop: an accept loop under a connection
//! limit, one task per connection, a background task sweeping expired
//! keys, and a graceful stop. Shared with the tests (testkit/src/lib.rs
//! includes this file).
//!
//! Each connection reads into a buffer of its own ([`read_buf`]) and
//! parses whole commands out of it ([`resp::parse`]), so waiting for
//! the next bytes can race the stop notice and a subscriber's messages in
//! `select!` and lose nothing. Replies go out through a [`StreamWriter`]:
//! `write`, then `drain` once no whole command is left to answer.
//!
//! While a reply drains, the connection reads no more commands: a client
//! that pipelines a large `SET` behind a large `GET` and reads nothing
//! until it has written everything waits forever, both sides' buffers
//! full (tests/sim/kv.rs found it in its own client). Redis reads on,
//! since a normal client's output buffer is unbounded there; here the
//! memory a slow reader can pin stays bounded. Clients that read while
//! they write (redis-cli, redis-benchmark) never meet it.

use std::future::Future;
use std::io;
use std::pin::pin;
use std::sync::Arc;
use std::time::Duration;

use ioloop::io::{StreamWriter, read_buf};
use ioloop::net::{TcpListener, TcpStream};
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
/// How often expired keys nobody reads are swept.
const SWEEP_EVERY: Duration = Duration::from_millis(100);
/// A value larger than this is not copied into the reply: it is queued as
/// it is (`StreamWriter::write_owned`).
const VALUE_PIECE: usize = 16 * 1024;

/// A stored value, as the writer's owned buffers take it.
struct Shared(Arc<Vec<u8>>);

impl AsRef<[u8]> for Shared {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

/// Serves `listener` until `shutdown` completes; then stops accepting,
/// tells every connection to stop after the command it is on, and waits
/// for them (`config.grace` at most).
pub async fn serve(
    listener: TcpListener,
    config: Config,
    shutdown: impl Future<Output = ()>,
) -> io::Result<()> {
    let store = Store::default();
    let limit = Arc::new(Semaphore::new(config.max_connections));
    let (stop, stopped) = watch::channel(false);
    let sweeper = ioloop::spawn(sweep(store.clone()));
    let mut shutdown = pin!(shutdown);
    loop {
        // A permit first: past the limit, clients wait in the backlog.
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
                    log::warn!("kv_server: accept: {err}");
                    continue;
                }
            },
        };
        let task = connection(stream, store.clone(), stopped.clone(), permit);
        // Detached: the permit it holds is how the stop waits for it.
        drop(ioloop::spawn(task));
    }
    drop(listener);
    let _ = stop.send(true);
    let all = u32::try_from(config.max_connections).unwrap_or(u32::MAX);
    if ioloop::time::timeout(config.grace, limit.acquire_many(all))
        .await
        .is_err()
    {
        eprintln!("kv_server: connections still open after the grace period");
    }
    sweeper.abort();
    Ok(())
}

/// Removes expired keys nobody reads, every [`SWEEP_EVERY`].
async fn sweep(store: Store) {
    let mut every = ioloop::time::interval(SWEEP_EVERY);
    loop {
        every.tick().await;
        store.sweep();
    }
}

/// One connection's task; `_permit` is its place under the limit.
pub async fn connection(
    stream: TcpStream,
    store: Store,
    mut stopped: watch::Receiver<bool>,
    _permit: OwnedSemaphorePermit,
) {
    if let Err(err) = converse(&stream, &store, &mut stopped).await {
        log::debug!("kv_server: connection ended: {err}");
    }
}

async fn converse(
    stream: &TcpStream,
    store: &Store,
    stopped: &mut watch::Receiver<bool>,
) -> io::Result<()> {
    let mut writer = StreamWriter::new(stream);
    // Each reply is formatted in `out` and written as soon as it is made.
    // The writes of one poll leave together, in one `send`, however many
    // replies a pipelining client is owed: the writer gathers them.
    let (mut inbuf, mut out) = (Vec::new(), Vec::new());
    let mut subscribed = kv_store::Subscriptions::new();
    loop {
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
                break;
            }
            Parsed::Incomplete => {
                // Every whole command is answered: wait for the socket to
                // take the replies, then for more bytes, a message or the
                // stop.
                writer.write(&out);
                out.clear();
                writer.drain().await?;
                if *stopped.borrow() {
                    break;
                }
                tokio::select! {
                    biased;
                    _ = stopped.changed() => break,
                    read = read_buf(stream, &mut inbuf) => if read? == 0 {
                        break;
                    },
                    Some((channel, message)) = subscribed.next(), if !subscribed.is_empty() => {
                        let message = message.map_err(|lagged| io::Error::other(format!(
                            "a subscriber fell behind ({lagged}): disconnected"
                        )))?;
                        kv_store::message(&mut out, &channel, &message);
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
            break;
        }
        if !subscribed.is_empty() && kv_store::answered_while_subscribed(&mut out, &args) {
            continue;
        }
        match store.execute(&mut args, &mut out) {
            Outcome::Done => {}
            Outcome::Value(value) if value.len() <= VALUE_PIECE => {
                out.extend_from_slice(&value);
                out.extend_from_slice(b"\r\n");
            }
            // A large value is queued as it is (an `Arc` of the stored
            // bytes, not a copy) and sent as the socket takes it; each send
            // spends budget, so the loop serves others in between.
            Outcome::Value(value) => {
                writer.write(&out);
                out.clear();
                writer.write_owned(Shared(value));
                writer.drain().await?;
                out.extend_from_slice(b"\r\n");
            }
            Outcome::PubSub => kv_store::pub_sub(&args, store, &mut subscribed, &mut out),
        }
        writer.write(&out);
        out.clear();
    }
    writer.write(&out);
    writer.close().await
}
