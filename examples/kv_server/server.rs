//! The key-value server on ioloop: an accept loop under a connection
//! limit, one task per connection, a background task sweeping expired
//! keys, and a graceful stop. Shared with the tests (testkit/src/lib.rs
//! includes this file).
//!
//! Each connection reads into a buffer of its own ([`read_buf`]) and
//! parses whole commands out of it ([`resp::Parser`], which goes on from
//! where it stopped, so a long command costs work in proportion to its
//! length), so waiting for the next bytes can race the stop notice and a
//! subscriber's messages in `select!` and lose nothing. Replies go out through a [`StreamWriter`]:
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
/// The most bytes a connection reads and parses before the loop serves
/// others: 64 KiB, about half a millisecond of parsing.
const YIELD_EVERY: usize = 64 * 1024;
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
    // Leaves every channel when dropped, however the task ends.
    let mut subscriber = Subscriber::new(&store);
    if let Err(err) = converse(&stream, &store, &mut subscriber, &mut stopped).await {
        log::debug!("kv_server: connection ended: {err}");
    }
    // Its channels left a slice at a time, the loop serving others.
    while subscriber.leave_slice() {
        ioloop::yield_now().await;
    }
}

async fn converse(
    stream: &TcpStream,
    store: &Store,
    subscriber: &mut Subscriber,
    stopped: &mut watch::Receiver<bool>,
) -> io::Result<()> {
    let mut writer = StreamWriter::new(stream);
    // Each reply is formatted in `out` and written as soon as it is made.
    // The writes of one poll leave together, in one `send`, however many
    // replies a pipelining client is owed: the writer gathers them.
    let (mut inbuf, mut out) = (Vec::new(), Vec::new());
    let mut parser = resp::Parser::new();
    // Bytes read since the loop last served others.
    let mut unyielded = 0;
    // Message bytes written but not yet taken by the socket: still
    // waiting, as the subscriber's bound counts them.
    let mut delivering = 0;
    loop {
        let mut args = match parser.parse(&inbuf) {
            Parsed::Command(args) => args,
            Parsed::Invalid(why) => {
                resp::error(&mut out, &format!("ERR Protocol error: {why}"));
                break;
            }
            Parsed::Incomplete => {
                parser.consume(&mut inbuf);
                // A large command (a big SET) leaves no large buffer behind.
                if inbuf.capacity() > MAX_KEPT && inbuf.len() < MAX_KEPT {
                    inbuf.shrink_to(MAX_KEPT);
                }
                // Every whole command is answered: wait for the socket to
                // take the replies, then for more bytes, a message or the
                // stop.
                writer.write(&out);
                out.clear();
                writer.drain().await?;
                subscriber.delivered(std::mem::take(&mut delivering));
                if *stopped.borrow() {
                    break;
                }
                tokio::select! {
                    biased;
                    _ = stopped.changed() => break,
                    read = read_buf(stream, &mut inbuf) => match read? {
                        0 => break,
                        n => unyielded += n,
                    },
                    taken = subscriber.messages(&mut out) => delivering = taken?,
                }
                // A client sending without pause would be read and parsed
                // for a whole budget of reads (2 MB) before others get a
                // turn: they get one every `YIELD_EVERY` bytes.
                if unyielded >= YIELD_EVERY {
                    unyielded = 0;
                    ioloop::yield_now().await;
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
        // A long command runs in slices, the loop serving others between
        // them; one on keys holds the store's turn meanwhile, and never
        // waits on this client while it does (replies are only queued).
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
            writer.write(&out);
            out.clear();
            ioloop::yield_now().await;
        };
        drop(turn);
        while kv_store::free_slice(&mut args) {
            ioloop::yield_now().await;
        }
        match outcome {
            Outcome::Done | Outcome::More | Outcome::PubSub => {}
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
        }
        writer.write(&out);
        out.clear();
    }
    writer.write(&out);
    writer.close().await
}
