//! The key-value server's state, and every command but the pub/sub ones'
//! subscriber side: shared by `kv_server` and its tokio twin (included
//! with `#[path]`), so the two differ only in their I/O.
//!
//! Keys expire two ways, as in Redis: a key read after its deadline is
//! gone (lazily), and a sweep of the heap of deadlines, run by a
//! background task, removes the keys nobody reads.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use tokio::sync::broadcast;
use tokio_stream::StreamMap;
use tokio_stream::wrappers::BroadcastStream;

use crate::resp;

/// A value: shared, so a `GET` writes it out without holding the lock or
/// copying it.
pub type Value = Arc<Vec<u8>>;

/// How many messages a channel holds for a subscriber that has not taken
/// them yet; one that falls further behind is disconnected, as Redis
/// does with a client over its pub/sub output limit.
pub const CHANNEL_CAPACITY: usize = 1024;

/// The store, shared by every connection.
#[derive(Clone, Default)]
pub struct Store {
    inner: Arc<Mutex<Inner>>,
}

#[derive(Default)]
struct Inner {
    keys: HashMap<Vec<u8>, Entry>,
    /// Deadlines, nearest first; an entry whose key was since overwritten
    /// or deleted is skipped when it comes up.
    deadlines: BinaryHeap<Reverse<(Instant, Vec<u8>)>>,
    channels: HashMap<Vec<u8>, broadcast::Sender<Value>>,
}

struct Entry {
    value: Value,
    expires: Option<Instant>,
}

/// What a command asks of the connection, beyond the reply written.
pub enum Outcome {
    /// The reply is written; read the next command.
    Done,
    /// A `GET` that found a value: write it after the header in `out`.
    Value(Value),
    /// `SUBSCRIBE` or `UNSUBSCRIBE`: the connection's own business.
    PubSub,
}

impl Store {
    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Runs `args` (a command with at least its name), writing the reply to
    /// `out`. A `SET` takes its value out of `args` rather than copy it.
    pub fn execute(&self, args: &mut [Vec<u8>], out: &mut Vec<u8>) -> Outcome {
        let mut buf = [0; 16];
        match (upper(&args[0], &mut buf), args.len()) {
            (b"PING", 1) => resp::simple(out, "PONG"),
            (b"PING", 2) => resp::bulk(out, &args[1]),
            (b"GET", 2) => match self.get(&args[1]) {
                Some(value) => {
                    resp::bulk_header(out, value.len());
                    return Outcome::Value(value);
                }
                None => resp::null(out),
            },
            (b"SET", n) if n >= 3 => match expiry(&args[3..]) {
                Ok(ttl) => {
                    let value = std::mem::take(&mut args[2]);
                    self.set(&args[1], value, ttl);
                    resp::simple(out, "OK");
                }
                Err(text) => resp::error(out, text),
            },
            (b"DEL", n) if n >= 2 => {
                let mut inner = self.lock();
                let removed = args[1..]
                    .iter()
                    .filter(|k| inner.keys.remove(k.as_slice()).is_some())
                    .count();
                resp::integer(out, removed as i64);
            }
            (b"DBSIZE", 1) => resp::integer(out, self.lock().keys.len() as i64),
            (b"PUBLISH", 3) => {
                let sent = self.publish(&args[1], Arc::new(args[2].clone()));
                resp::integer(out, sent as i64);
            }
            (b"SUBSCRIBE", n) if n >= 2 => return Outcome::PubSub,
            (b"UNSUBSCRIBE", _) => return Outcome::PubSub,
            (b"PING" | b"GET" | b"SET" | b"DEL" | b"PUBLISH" | b"SUBSCRIBE", _) => {
                let name = String::from_utf8_lossy(&args[0]).to_lowercase();
                resp::error(
                    out,
                    &format!("ERR wrong number of arguments for '{name}' command"),
                );
            }
            _ => resp::unknown_command(out, args),
        }
        Outcome::Done
    }

    fn get(&self, key: &[u8]) -> Option<Value> {
        let mut inner = self.lock();
        let entry = inner.keys.get(key)?;
        if entry.expires.is_some_and(|at| at <= Instant::now()) {
            inner.keys.remove(key);
            return None;
        }
        Some(entry.value.clone())
    }

    fn set(&self, key: &[u8], value: Vec<u8>, ttl: Option<Duration>) {
        let expires = ttl.map(|ttl| Instant::now() + ttl);
        let mut inner = self.lock();
        if let Some(at) = expires {
            inner.deadlines.push(Reverse((at, key.to_vec())));
        }
        let value = Arc::new(value);
        inner.keys.insert(key.to_vec(), Entry { value, expires });
    }

    /// Sends `message` to the channel's subscribers; returns how many.
    fn publish(&self, channel: &[u8], message: Value) -> usize {
        let inner = self.lock();
        inner
            .channels
            .get(channel)
            .and_then(|tx| tx.send(message).ok())
            .unwrap_or(0)
    }

    /// A receiver of `channel`'s messages from now on.
    pub fn subscribe(&self, channel: &[u8]) -> broadcast::Receiver<Value> {
        let mut inner = self.lock();
        let tx = inner
            .channels
            .entry(channel.to_vec())
            .or_insert_with(|| broadcast::channel(CHANNEL_CAPACITY).0);
        tx.subscribe()
    }

    /// Forgets `channel` once its last subscriber has dropped its receiver.
    pub fn unsubscribed(&self, channel: &[u8]) {
        let mut inner = self.lock();
        if inner
            .channels
            .get(channel)
            .is_some_and(|tx| tx.receiver_count() == 0)
        {
            inner.channels.remove(channel);
        }
    }

    /// Removes every key whose deadline has passed; returns how many.
    pub fn sweep(&self) -> usize {
        let now = Instant::now();
        let mut inner = self.lock();
        let mut removed = 0;
        while let Some(Reverse((at, _))) = inner.deadlines.peek() {
            if *at > now {
                break;
            }
            let Some(Reverse((at, key))) = inner.deadlines.pop() else {
                break;
            };
            // The key may have been set again since, with another deadline
            // or none: only the entry this deadline belongs to goes.
            if inner.keys.get(&key).is_some_and(|e| e.expires == Some(at)) {
                inner.keys.remove(&key);
                removed += 1;
            }
        }
        // Overwritten keys leave dead deadlines behind: rebuilt once they
        // outnumber the keys, so the heap stays bounded.
        if inner.deadlines.len() > 2 * inner.keys.len() + 1024 {
            let live: Vec<_> = inner
                .keys
                .iter()
                .filter_map(|(k, e)| Some(Reverse((e.expires?, k.clone()))))
                .collect();
            inner.deadlines = live.into();
        }
        removed
    }
}

/// A connection's subscriptions: each channel's messages, merged.
pub type Subscriptions = StreamMap<Vec<u8>, BroadcastStream<Value>>;

/// `SUBSCRIBE` and `UNSUBSCRIBE` for a connection: one reply per channel.
pub fn pub_sub(args: &[Vec<u8>], store: &Store, subscribed: &mut Subscriptions, out: &mut Vec<u8>) {
    if args[0].eq_ignore_ascii_case(b"SUBSCRIBE") {
        for channel in &args[1..] {
            if !subscribed.contains_key(channel) {
                let messages = BroadcastStream::new(store.subscribe(channel));
                subscribed.insert(channel.clone(), messages);
            }
            subscription(out, "subscribe", Some(channel), subscribed.len());
        }
        return;
    }
    let channels: Vec<Vec<u8>> = if args.len() > 1 {
        args[1..].to_vec()
    } else {
        subscribed.keys().cloned().collect()
    };
    if channels.is_empty() {
        subscription(out, "unsubscribe", None, 0);
    }
    for channel in channels {
        drop(subscribed.remove(&channel));
        store.unsubscribed(&channel);
        subscription(out, "unsubscribe", Some(&channel), subscribed.len());
    }
}

/// A command's name in capitals, written into `buf` rather than a new
/// `Vec` for every command; a name longer than any command is empty, which
/// matches none.
fn upper<'a>(name: &[u8], buf: &'a mut [u8; 16]) -> &'a [u8] {
    let Some(upper) = buf.get_mut(..name.len()) else {
        return &[];
    };
    upper.copy_from_slice(name);
    upper.make_ascii_uppercase();
    upper
}

/// `SET`'s options after the value: nothing, `EX seconds` or
/// `PX milliseconds`.
fn expiry(options: &[Vec<u8>]) -> Result<Option<Duration>, &'static str> {
    let (unit, amount) = match options {
        [] => return Ok(None),
        [unit, amount] => (unit, amount),
        _ => return Err("ERR syntax error"),
    };
    let amount: u64 = std::str::from_utf8(amount)
        .ok()
        .and_then(|a| a.parse().ok())
        .filter(|&a| a > 0)
        .ok_or("ERR invalid expire time in 'set' command")?;
    if unit.eq_ignore_ascii_case(b"EX") {
        Ok(Some(Duration::from_secs(amount)))
    } else if unit.eq_ignore_ascii_case(b"PX") {
        Ok(Some(Duration::from_millis(amount)))
    } else {
        Err("ERR syntax error")
    }
}

/// The reply to a pub/sub subscription change: `kind` (`subscribe` or
/// `unsubscribe`), the channel, and how many channels the connection is
/// now subscribed to.
pub fn subscription(out: &mut Vec<u8>, kind: &str, channel: Option<&[u8]>, count: usize) {
    resp::array(out, 3);
    resp::bulk(out, kind.as_bytes());
    match channel {
        Some(channel) => resp::bulk(out, channel),
        None => resp::null(out),
    }
    resp::integer(out, count as i64);
}

/// A message delivered to a subscriber.
pub fn message(out: &mut Vec<u8>, channel: &[u8], message: &[u8]) {
    resp::array(out, 3);
    resp::bulk(out, b"message");
    resp::bulk(out, channel);
    resp::bulk(out, message);
}

/// A command on a subscribed connection: `PING` answered in the pub/sub
/// form, anything but (un)subscribing refused; `true` if `out` now holds
/// the reply, `false` if the command runs as usual.
pub fn answered_while_subscribed(out: &mut Vec<u8>, args: &[Vec<u8>]) -> bool {
    let mut buf = [0; 16];
    let name = upper(&args[0], &mut buf);
    if name == b"PING" {
        resp::array(out, 2);
        resp::bulk(out, b"pong");
        resp::bulk(out, args.get(1).map_or(&b""[..], |m| m));
        return true;
    }
    if matches!(name, b"SUBSCRIBE" | b"UNSUBSCRIBE" | b"QUIT") {
        return false;
    }
    let name = String::from_utf8_lossy(&args[0]).to_lowercase();
    resp::error(
        out,
        &format!(
            "ERR Can't execute '{name}': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context"
        ),
    );
    true
}
