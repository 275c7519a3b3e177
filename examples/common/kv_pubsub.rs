//! The key-value server's pub/sub, shared by `kv_server` and its tokio
//! twin (included with `#[path]`): which connection hears which channel,
//! and each subscriber's mailbox of messages not yet sent.
//!
//! A subscriber is bounded by the bytes waiting for it, as Redis bounds
//! it (`client-output-buffer-limit pubsub 32mb 8mb 60`, [`PUBSUB_LIMIT`]),
//! not by a count of messages: a fast publisher's 2,000 small messages all
//! reach a subscriber, and one that reads nothing is disconnected once
//! 32 MiB wait for it (issue 40; a broadcast channel of 1,024 slots per
//! channel dropped the first and held 30 KB per subscription).
//!
//! A subscription costs a name and a pointer; a connection's
//! [`Subscriber`] leaves every channel when it is dropped, however the
//! connection ended (EOF, reset, error, the bound, the server's stop).

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::future::poll_fn;
use std::io;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use crate::kv_store::{Progress, SLICE, Store, Value};
use crate::resp;

/// When a subscriber is disconnected for the bytes waiting for it: once
/// they reach `hard`, or once they have stayed at `soft` or more for
/// longer than `soft_for`. The bytes waiting are the messages queued for
/// it and those handed to its socket that the socket has not taken yet,
/// counted as they go on the wire.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OutputLimit {
    /// Bytes that disconnect at once.
    pub hard: usize,
    /// Bytes that disconnect if they last.
    pub soft: usize,
    /// How long the soft limit may last.
    pub soft_for: Duration,
}

/// Redis's default for pub/sub clients: 32 MiB, or 8 MiB for 60 s.
pub const PUBSUB_LIMIT: OutputLimit = OutputLimit {
    hard: 32 << 20,
    soft: 8 << 20,
    soft_for: Duration::from_secs(60),
};

/// At most this many bytes of messages are formatted for the socket at
/// once; the rest wait in the mailbox, counted.
const BATCH: usize = 64 * 1024;

impl OutputLimit {
    /// Checks `waiting` bytes at `now` (Redis's
    /// `checkClientOutputBufferLimits`): `Err` names the limit broken;
    /// `over_soft_since` is when the soft limit was reached, kept here.
    pub fn check(
        &self,
        waiting: usize,
        over_soft_since: &mut Option<Instant>,
        now: Instant,
    ) -> Result<(), &'static str> {
        if waiting >= self.hard {
            return Err("hard limit");
        }
        if waiting < self.soft {
            *over_soft_since = None;
            return Ok(());
        }
        match *over_soft_since {
            None => *over_soft_since = Some(now),
            Some(since) if now.saturating_duration_since(since) > self.soft_for => {
                return Err("soft limit");
            }
            Some(_) => {}
        }
        Ok(())
    }
}

/// The bytes of a message on `channel` carrying `payload` bytes, as
/// [`message`] writes it.
pub fn message_len(channel: usize, payload: usize) -> usize {
    let bulk = |n: usize| 1 + n.to_string().len() + 2 + n + 2;
    b"*3\r\n".len() + bulk(b"message".len()) + bulk(channel) + bulk(payload)
}

/// A message waiting in a mailbox: shared with every subscriber it went to.
struct Message {
    channel: Arc<[u8]>,
    payload: Value,
}

/// A subscriber's messages not yet sent, and the bytes waiting for it.
pub struct Mailbox {
    state: Mutex<MailboxState>,
    limit: OutputLimit,
}

#[derive(Default)]
struct MailboxState {
    queue: VecDeque<Message>,
    /// Bytes queued, and taken but not yet [delivered](Mailbox::delivered).
    waiting: usize,
    over_soft_since: Option<Instant>,
    /// Why the subscriber was disconnected, once it was.
    dropped: Option<&'static str>,
    waker: Option<Waker>,
}

impl Mailbox {
    /// An empty mailbox under `limit`.
    pub fn new(limit: OutputLimit) -> Arc<Mailbox> {
        Arc::new(Mailbox {
            state: Mutex::default(),
            limit,
        })
    }

    fn lock(&self) -> MutexGuard<'_, MailboxState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Queues a message at `now`; `false` if the subscriber is gone (or
    /// goes now, over its limit: what was queued is freed at once). The
    /// waker to wake, after every lock is released, goes to `wake`.
    pub fn push(
        &self,
        channel: &Arc<[u8]>,
        payload: &Value,
        now: Instant,
        wake: &mut Vec<Waker>,
    ) -> bool {
        let mut state = self.lock();
        if state.dropped.is_some() {
            return false;
        }
        state.waiting += message_len(channel.len(), payload.len());
        let MailboxState {
            waiting,
            over_soft_since,
            ..
        } = &mut *state;
        let queued = match self.limit.check(*waiting, over_soft_since, now) {
            Ok(()) => {
                state.queue.push_back(Message {
                    channel: channel.clone(),
                    payload: payload.clone(),
                });
                true
            }
            Err(why) => {
                state.dropped = Some(why);
                state.queue = VecDeque::new();
                false
            }
        };
        wake.extend(state.waker.take());
        queued
    }

    /// Writes waiting messages to `out` (about [`BATCH`] bytes at most,
    /// one message at least) and returns their bytes, to be passed to
    /// [`delivered`](Mailbox::delivered) once the socket has taken them;
    /// pending while there are none; an error once the subscriber is
    /// disconnected for its limit. Writes nothing unless ready.
    pub fn poll_take(&self, cx: &mut Context<'_>, out: &mut Vec<u8>) -> Poll<io::Result<usize>> {
        let mut state = self.lock();
        if let Some(why) = state.dropped {
            let text = format!("a subscriber reached its output {why}: disconnected");
            return Poll::Ready(Err(io::Error::other(text)));
        }
        if state.queue.is_empty() {
            if !state
                .waker
                .as_ref()
                .is_some_and(|w| w.will_wake(cx.waker()))
            {
                state.waker = Some(cx.waker().clone());
            }
            return Poll::Pending;
        }
        let mut taken = 0;
        while taken < BATCH {
            let Some(next) = state.queue.pop_front() else {
                break;
            };
            taken += message_len(next.channel.len(), next.payload.len());
            message(out, &next.channel, &next.payload);
        }
        if state.queue.is_empty() && state.queue.capacity() > 64 {
            state.queue = VecDeque::new();
        }
        Poll::Ready(Ok(taken))
    }

    /// `bytes` taken by [`poll_take`](Mailbox::poll_take) are on the
    /// socket: no longer waiting.
    pub fn delivered(&self, bytes: usize) {
        let mut state = self.lock();
        state.waiting = state.waiting.saturating_sub(bytes);
    }
}

/// Every channel with a subscriber, and its subscribers' mailboxes. A
/// channel's name is shared with its subscribers' [`Subscriber`]s and
/// messages; a channel nobody hears is no entry.
#[derive(Default)]
pub struct Channels {
    map: HashMap<Arc<[u8]>, Vec<Arc<Mailbox>>>,
    /// The table shrank since [`take_shrunk`](Channels::take_shrunk).
    shrunk: bool,
}

impl Channels {
    /// Adds `mailbox` to `channel`'s subscribers; returns the shared name.
    fn join(&mut self, channel: &[u8], mailbox: &Arc<Mailbox>) -> Arc<[u8]> {
        if let Some(subscribers) = self.map.get_mut(channel) {
            subscribers.push(mailbox.clone());
            let (name, _) = self.map.get_key_value(channel).expect("just found");
            return name.clone();
        }
        let name: Arc<[u8]> = channel.into();
        self.map.insert(name.clone(), vec![mailbox.clone()]);
        name
    }

    /// Removes `mailbox` from `channel`'s subscribers, and the channel
    /// with its last.
    fn leave(&mut self, channel: &[u8], mailbox: &Arc<Mailbox>) {
        let Some(subscribers) = self.map.get_mut(channel) else {
            return;
        };
        subscribers.retain(|m| !Arc::ptr_eq(m, mailbox));
        if subscribers.is_empty() {
            self.map.remove(channel);
        }
    }

    /// Gives back the table's room once most of it is empty (a hashed
    /// table keeps its largest size otherwise: 9,000 channels left would
    /// leave their slots).
    fn shrink(&mut self) {
        self.shrunk |= crate::kv_store::shrink_sparse(&mut self.map);
    }

    /// Whether the table shrank since the last call: much was freed.
    pub fn take_shrunk(&mut self) -> bool {
        std::mem::take(&mut self.shrunk)
    }

    /// Queues `payload` for `channel`'s subscribers at `now`; returns how
    /// many took it. The wakers to wake go to `wake`.
    pub fn publish(
        &self,
        channel: &[u8],
        payload: &Value,
        now: Instant,
        wake: &mut Vec<Waker>,
    ) -> usize {
        let Some((name, subscribers)) = self.map.get_key_value(channel) else {
            return 0;
        };
        subscribers
            .iter()
            .filter(|m| m.push(name, payload, now, wake))
            .count()
    }
}

/// A connection's side of pub/sub: its channels and its mailbox. Dropped
/// with the connection, it leaves every channel.
pub struct Subscriber {
    store: Store,
    /// Made at the first `SUBSCRIBE`.
    mailbox: Option<Arc<Mailbox>>,
    /// In order, for `UNSUBSCRIBE` with no channel named.
    channels: BTreeSet<Arc<[u8]>>,
}

impl Subscriber {
    /// A connection that hears nothing yet.
    pub fn new(store: &Store) -> Subscriber {
        Subscriber {
            store: store.clone(),
            mailbox: None,
            channels: BTreeSet::new(),
        }
    }

    /// Whether it hears a channel: then only (un)subscribing, PING and
    /// QUIT run.
    pub fn is_subscribed(&self) -> bool {
        !self.channels.is_empty()
    }

    /// `SUBSCRIBE` and `UNSUBSCRIBE`: one reply per channel, up to
    /// [`SLICE`] channels a call; `false` while some are left (call again
    /// with the same `progress`). Each channel named is freed as it goes.
    pub fn command(
        &mut self,
        args: &mut [Vec<u8>],
        out: &mut Vec<u8>,
        progress: &mut Progress,
    ) -> bool {
        let start = progress.next.max(1);
        let end = args.len().min(start + SLICE);
        progress.next = end;
        if args[0].eq_ignore_ascii_case(b"SUBSCRIBE") {
            let mailbox = self
                .mailbox
                .get_or_insert_with(|| Mailbox::new(self.store.pubsub_limit()))
                .clone();
            for channel in &mut args[start..end] {
                let channel = std::mem::take(channel);
                if !self.channels.contains(channel.as_slice()) {
                    let name = self.store.channels(|c| c.join(&channel, &mailbox));
                    self.channels.insert(name);
                }
                subscription(out, "subscribe", Some(&channel), self.channels.len());
            }
            return end == args.len();
        }
        if args.len() > 1 {
            for channel in &mut args[start..end] {
                let channel = std::mem::take(channel);
                self.unsubscribe(&channel, out);
            }
            return end == args.len();
        }
        // Every channel, in order, a slice at a time.
        if start == 1 && self.channels.is_empty() {
            subscription(out, "unsubscribe", None, 0);
        }
        for _ in 0..SLICE {
            let Some(channel) = self.channels.first().cloned() else {
                break;
            };
            self.unsubscribe(&channel, out);
        }
        self.channels.is_empty()
    }

    /// Leaves up to [`SLICE`] channels, answering nothing: how a
    /// connection that ends leaves a slice at a time (dropping it would
    /// leave them all in one step); `true` while some are left.
    pub fn leave_slice(&mut self) -> bool {
        let Some(mailbox) = &self.mailbox else {
            return false;
        };
        self.store.channels(|c| {
            for _ in 0..SLICE {
                let Some(channel) = self.channels.pop_first() else {
                    break;
                };
                c.leave(&channel, mailbox);
            }
            c.shrink();
        });
        !self.channels.is_empty()
    }

    /// Leaves `channel` if it hears it, and answers.
    fn unsubscribe(&mut self, channel: &[u8], out: &mut Vec<u8>) {
        if self.channels.remove(channel)
            && let Some(mailbox) = &self.mailbox
        {
            self.store.channels(|c| {
                c.leave(channel, mailbox);
                c.shrink();
            });
        }
        subscription(out, "unsubscribe", Some(channel), self.channels.len());
    }

    /// Waits for messages and writes them to `out`: see
    /// [`Mailbox::poll_take`]. Cancel-safe: nothing is taken unless it
    /// returns. Never ready for a connection that never subscribed.
    pub async fn messages(&self, out: &mut Vec<u8>) -> io::Result<usize> {
        let Some(mailbox) = &self.mailbox else {
            return std::future::pending().await;
        };
        poll_fn(|cx| mailbox.poll_take(cx, out)).await
    }

    /// See [`Mailbox::delivered`].
    pub fn delivered(&self, bytes: usize) {
        if let Some(mailbox) = &self.mailbox
            && bytes > 0
        {
            mailbox.delivered(bytes);
        }
    }
}

impl Drop for Subscriber {
    fn drop(&mut self) {
        let Some(mailbox) = &self.mailbox else {
            return;
        };
        let channels = std::mem::take(&mut self.channels);
        if channels.is_empty() {
            return;
        }
        self.store.channels(|c| {
            for channel in &channels {
                c.leave(channel, mailbox);
            }
            c.shrink();
        });
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
