//! The key-value server's state, and every command but the pub/sub ones'
//! subscriber side: shared by `kv_server` and its tokio twin (included
//! with `#[path]`), so the two differ only in their I/O.
//!
//! Keys expire two ways, as in Redis: a key read after its deadline is
//! gone (lazily), and a sweep of the heap of deadlines, run by a
//! background task, removes the keys nobody reads.

//! The key-value server's state, and every command but the pub/sub ones'
//! subscriber side (`kv_pubsub.rs`): shared by `kv_server` and its tokio
//! twin (included with `#[path]`), so the two differ only in their I/O.
//!
//! Keys expire two ways, as in Redis: a key read after its deadline is
//! gone (lazily), and a sweep of the heap of deadlines, run by a
//! background task, removes the keys nobody reads.
//!
//! Every command is checked as Redis 7 checks it, in Redis's order and
//! with its error texts: the name, the argument count, the pub/sub
//! context, then each option and number (`SET`'s `EX`, `PX`, `EXAT`,
//! `PXAT`, read as Redis reads a 64-bit integer and range-checked as it
//! checks them: issue 40 found `EX 18446744073709551615` panicking the
//! connection).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::hash::Hash;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime};

use tokio::sync::OwnedMutexGuard;

use crate::kv_pubsub::{Channels, OutputLimit, PUBSUB_LIMIT};
use crate::resp;

/// A value: shared, so a `GET` writes it out without holding the lock or
/// copying it.
pub type Value = Arc<Vec<u8>>;

/// The store, shared by every connection.
#[derive(Clone)]
pub struct Store {
    inner: Arc<Mutex<Inner>>,
    /// See [`Store::turn`].
    turn: Arc<tokio::sync::Mutex<()>>,
    pubsub_limit: OutputLimit,
}

impl Default for Store {
    fn default() -> Store {
        Store::with_pubsub_limit(PUBSUB_LIMIT)
    }
}

#[derive(Default)]
struct Inner {
    keys: HashMap<Vec<u8>, Entry>,
    /// Deadlines, nearest first; an entry whose key was since overwritten
    /// or deleted is skipped when it comes up.
    deadlines: BinaryHeap<Reverse<(Instant, Vec<u8>)>>,
    channels: Channels,
    /// A table shrank since the last sweep: much was freed.
    shrunk: bool,
}

struct Entry {
    value: Value,
    expires: Option<Instant>,
}

/// The keys or channels a long command handles at a time: it runs in
/// slices, and the loop serves others between them, so that no step of a
/// command of a million arguments holds the loop for long (issue 40). The
/// store's [turn](Store::turn) keeps it whole for other clients' commands.
pub const SLICE: usize = 1024;

/// How far a command run in slices has come; a new one for each command.
#[derive(Debug, Default)]
pub struct Progress {
    /// The next argument to handle (0: the command has not started).
    pub next: usize,
    /// What it counted so far (`DEL`: the keys removed).
    pub count: usize,
}

/// What a command asks of the connection, beyond the reply written.
pub enum Outcome {
    /// The reply is written; read the next command.
    Done,
    /// A slice is done: let the loop serve others, then run the command
    /// again with the same arguments and progress.
    More,
    /// A value found (`GET`, `SET ... GET`): write it after the header in
    /// `out`, then `\r\n`.
    Value(Value),
    /// `SUBSCRIBE` or `UNSUBSCRIBE`: the connection's own business
    /// ([`Subscriber::command`](crate::kv_pubsub::Subscriber::command)).
    PubSub,
}

/// A command: its name in capitals, its argument counts (the name
/// included), and whether a subscribed connection may run it.
struct Command {
    name: &'static [u8],
    min: usize,
    max: usize,
    while_subscribed: bool,
}

const fn command(name: &'static [u8], min: usize, max: usize, sub: bool) -> Command {
    Command {
        name,
        min,
        max,
        while_subscribed: sub,
    }
}

/// The commands served (QUIT, any arity, is the connection's own).
const COMMANDS: &[Command] = &[
    command(b"PING", 1, 2, true),
    command(b"GET", 2, 2, false),
    command(b"SET", 3, usize::MAX, false),
    command(b"DEL", 2, usize::MAX, false),
    command(b"DBSIZE", 1, 1, false),
    command(b"PUBLISH", 3, 3, false),
    command(b"SUBSCRIBE", 2, usize::MAX, true),
    command(b"UNSUBSCRIBE", 1, usize::MAX, true),
];

impl Store {
    /// A store whose subscribers are bounded by `limit`.
    pub fn with_pubsub_limit(limit: OutputLimit) -> Store {
        Store {
            inner: Arc::default(),
            turn: Arc::default(),
            pubsub_limit: limit,
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The bound of this store's subscribers.
    pub fn pubsub_limit(&self) -> OutputLimit {
        self.pubsub_limit
    }

    /// Runs `f` on the channels, under the store's lock.
    pub fn channels<R>(&self, f: impl FnOnce(&mut Channels) -> R) -> R {
        f(&mut self.lock().channels)
    }

    /// Whether `args` is a command on keys, to run in the store's
    /// [turn](Store::turn).
    pub fn on_keys(args: &[Vec<u8>]) -> bool {
        let mut buf = [0; 16];
        matches!(
            upper(&args[0], &mut buf),
            b"GET" | b"SET" | b"DEL" | b"DBSIZE"
        )
    }

    /// The right to run a command on keys: a command run in slices holds
    /// it from its first slice to its last, so no other client's command
    /// on keys sees it half done (a `DEL` of many keys is atomic, as in
    /// Redis), while PINGs and pub/sub go on. Never held across a wait on
    /// a client, only across the loop's turns.
    pub async fn turn(&self) -> OwnedMutexGuard<()> {
        self.turn.clone().lock_owned().await
    }

    /// Runs `args` (a command with at least its name) for a connection
    /// (`subscribed` if it hears a channel), writing the reply to `out`;
    /// [`Outcome::More`] asks for another call with the same `progress`.
    /// A `SET` takes its value out of `args` rather than copy it; a `DEL`
    /// frees each key as it goes.
    pub fn execute(
        &self,
        args: &mut [Vec<u8>],
        out: &mut Vec<u8>,
        subscribed: bool,
        progress: &mut Progress,
    ) -> Outcome {
        let mut buf = [0; 16];
        let name = upper(&args[0], &mut buf);
        let Some(command) = COMMANDS.iter().find(|c| c.name == name) else {
            resp::unknown_command(out, args);
            return Outcome::Done;
        };
        let lower = || String::from_utf8_lossy(command.name).to_lowercase();
        if !(command.min..=command.max).contains(&args.len()) {
            let text = format!("ERR wrong number of arguments for '{}' command", lower());
            resp::error(out, &text);
            return Outcome::Done;
        }
        if subscribed && !command.while_subscribed {
            let text = format!(
                "ERR Can't execute '{}': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context",
                lower()
            );
            resp::error(out, &text);
            return Outcome::Done;
        }
        match command.name {
            b"PING" if subscribed => {
                resp::array(out, 2);
                resp::bulk(out, b"pong");
                resp::bulk(out, args.get(1).map_or(&b""[..], |m| m));
            }
            b"PING" if args.len() == 1 => resp::simple(out, "PONG"),
            b"PING" => resp::bulk(out, &args[1]),
            b"GET" => return found(out, self.get(&args[1])),
            b"SET" => return self.set(args, out),
            b"DEL" => {
                let now = Instant::now();
                let start = progress.next.max(1);
                let end = args.len().min(start + SLICE);
                let mut inner = self.lock();
                for key in &mut args[start..end] {
                    let key = std::mem::take(key);
                    // A key past its deadline is gone already: not counted.
                    let entry = inner.keys.remove(key.as_slice());
                    if entry.is_some_and(|e| e.expires.is_none_or(|at| at > now)) {
                        progress.count += 1;
                    }
                }
                progress.next = end;
                if end < args.len() {
                    return Outcome::More;
                }
                inner.shrunk |= shrink_sparse(&mut inner.keys);
                resp::integer(out, progress.count as i64);
            }
            b"DBSIZE" => resp::integer(out, self.lock().keys.len() as i64),
            b"PUBLISH" => {
                let message = Arc::new(std::mem::take(&mut args[2]));
                let sent = self.publish(&args[1], message);
                resp::integer(out, sent as i64);
            }
            _ => return Outcome::PubSub,
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

    /// `SET key value [options]`, as Redis 7's `setGenericCommand`.
    fn set(&self, args: &mut [Vec<u8>], out: &mut Vec<u8>) -> Outcome {
        let options = match set_options(&args[3..], unix_ms_now()) {
            Ok(options) => options,
            Err(text) => {
                resp::error(out, text);
                return Outcome::Done;
            }
        };
        let now = Instant::now();
        let mut inner = self.lock();
        let old = inner
            .keys
            .get(args[1].as_slice())
            .filter(|e| e.expires.is_none_or(|at| at > now))
            .map(|e| (e.value.clone(), e.expires));
        let old_value = old.as_ref().map(|(value, _)| value.clone());
        if (options.nx && old.is_some()) || (options.xx && old.is_none()) {
            drop(inner);
            return match options.get {
                true => found(out, old_value),
                false => found(out, None),
            };
        }
        let expires = if options.keep_ttl {
            old.and_then(|(_, expires)| expires)
        } else {
            options
                .deadline
                .and_then(|at| instant_of(at, unix_ms_now(), now))
        };
        let key = std::mem::take(&mut args[1]);
        if let Some(at) = expires {
            inner.deadlines.push(Reverse((at, key.clone())));
        }
        let value = Arc::new(std::mem::take(&mut args[2]));
        inner.keys.insert(key, Entry { value, expires });
        drop(inner);
        if options.get {
            return found(out, old_value);
        }
        resp::simple(out, "OK");
        Outcome::Done
    }

    /// Sends `message` to the channel's subscribers; returns how many.
    fn publish(&self, channel: &[u8], message: Value) -> usize {
        let mut wake = Vec::new();
        let sent = self.channels(|c| c.publish(channel, &message, Instant::now(), &mut wake));
        // Woken with no lock of ours held: a waker may run anything.
        for waker in wake {
            waker.wake();
        }
        sent
    }

    /// Removes every key whose deadline has passed; returns how many. If
    /// a table shrank since the last sweep, hands the freed memory's pages
    /// back to the OS, once.
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
        let shrunk = shrink_sparse(&mut inner.keys);
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
        let trim = std::mem::take(&mut inner.shrunk) | shrunk | inner.channels.take_shrunk();
        drop(inner);
        if trim {
            give_back_freed_pages();
        }
        removed
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

/// `SET`'s options after the key and value, checked.
#[derive(Debug, Default, PartialEq)]
pub struct SetOptions {
    /// `NX`: only if the key is missing.
    pub nx: bool,
    /// `XX`: only if the key is there.
    pub xx: bool,
    /// `GET`: answer the old value instead of `OK`.
    pub get: bool,
    /// `KEEPTTL`: keep the key's deadline.
    pub keep_ttl: bool,
    /// The deadline asked for, in milliseconds since the Unix epoch.
    pub deadline: Option<i64>,
}

/// Redis's answer to a number that is not a 64-bit integer.
pub const NOT_AN_INTEGER: &str = "ERR value is not an integer or out of range";
/// Redis's answer to a deadline out of range.
pub const INVALID_EXPIRE: &str = "ERR invalid expire time in 'set' command";

/// Reads `SET`'s options as Redis 7 reads them (`parseExtendedStringArgumentsOrReply`,
/// then `getExpireMillisecondsOrReply`) when the time is `now_ms`
/// (milliseconds since the Unix epoch): first the words (a repeated
/// `EX` is allowed, the last one counts; two kinds of deadline are a
/// syntax error), then the number. A number is a 64-bit integer or
/// [`NOT_AN_INTEGER`]; an amount of 0 or less, seconds whose milliseconds
/// overflow, or a relative deadline whose `now_ms + amount` overflows is
/// [`INVALID_EXPIRE`].
pub fn set_options(options: &[Vec<u8>], now_ms: i64) -> Result<SetOptions, &'static str> {
    #[derive(Clone, Copy, PartialEq)]
    enum Unit {
        Ex,
        Px,
        ExAt,
        PxAt,
    }
    let mut set = SetOptions::default();
    let mut expire: Option<(Unit, &[u8])> = None;
    let mut j = 0;
    while j < options.len() {
        let mut buf = [0; 16];
        let word = upper(&options[j], &mut buf);
        let next = options.get(j + 1);
        let unit = match word {
            b"NX" if !set.xx => {
                set.nx = true;
                None
            }
            b"XX" if !set.nx => {
                set.xx = true;
                None
            }
            b"GET" => {
                set.get = true;
                None
            }
            b"KEEPTTL" if expire.is_none() => {
                set.keep_ttl = true;
                None
            }
            b"EX" => Some(Unit::Ex),
            b"PX" => Some(Unit::Px),
            b"EXAT" => Some(Unit::ExAt),
            b"PXAT" => Some(Unit::PxAt),
            _ => return Err("ERR syntax error"),
        };
        if let Some(unit) = unit {
            let other = expire.is_some_and(|(u, _)| u != unit);
            let Some(amount) = next.filter(|_| !set.keep_ttl && !other) else {
                return Err("ERR syntax error");
            };
            expire = Some((unit, amount));
            j += 1;
        }
        j += 1;
    }
    if let Some((unit, amount)) = expire {
        let mut ms = resp::parse_integer(amount).ok_or(NOT_AN_INTEGER)?;
        let seconds = matches!(unit, Unit::Ex | Unit::ExAt);
        if ms <= 0 || (seconds && ms > i64::MAX / 1000) {
            return Err(INVALID_EXPIRE);
        }
        if seconds {
            ms *= 1000;
        }
        if matches!(unit, Unit::Ex | Unit::Px) {
            ms = ms.checked_add(now_ms).ok_or(INVALID_EXPIRE)?;
        }
        set.deadline = Some(ms);
    }
    Ok(set)
}

/// Milliseconds since the Unix epoch now.
fn unix_ms_now() -> i64 {
    let since = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH);
    since.map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// The instant of `deadline_ms` (Unix milliseconds) when the time is
/// `now_ms` and `now`: `now` if it has passed; `None`, no deadline, only
/// where the platform's `Instant` cannot reach that far (not Linux's,
/// whose reach is 292 billion years).
fn instant_of(deadline_ms: i64, now_ms: i64, now: Instant) -> Option<Instant> {
    let ahead = deadline_ms.saturating_sub(now_ms).max(0);
    now.checked_add(Duration::from_millis(ahead as u64))
}

/// Frees up to [`SLICE`] of a finished command's arguments, from the
/// end; `true` while some are left (a command of a million arguments is
/// a million allocations to free).
pub fn free_slice(args: &mut Vec<Vec<u8>>) -> bool {
    args.truncate(args.len().saturating_sub(SLICE));
    !args.is_empty()
}

/// Writes a found value's header (the value follows) or nil.
fn found(out: &mut Vec<u8>, value: Option<Value>) -> Outcome {
    match value {
        Some(value) => {
            resp::bulk_header(out, value.len());
            Outcome::Value(value)
        }
        None => {
            resp::null(out);
            Outcome::Done
        }
    }
}

/// Gives a hashed table's room back once it is three quarters empty: a
/// `HashMap` keeps its largest size otherwise, so keys or channels once
/// made and gone would hold their slots for good. Halving each time keeps
/// the cost per removal constant.
/// `true` if it did.
pub fn shrink_sparse<K: Eq + Hash, V>(map: &mut HashMap<K, V>) -> bool {
    let sparse = map.capacity() > 64 && map.len() < map.capacity() / 4;
    if sparse {
        map.shrink_to(map.len() * 2);
    }
    sparse
}

/// Hands the pages of freed memory back to the OS. glibc's allocator
/// returns only the top of its heap by itself: the many small blocks of
/// 9,000 subscriptions, once freed, left the server's RSS 50% over what it
/// was before them (benches/kv_hostile.sh); Redis's jemalloc purges them
/// on its own, over seconds.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn give_back_freed_pages() {
    // SAFETY: `malloc_trim` takes no pointer and touches only glibc's own
    // free lists, under glibc's own locks; any padding value is valid.
    unsafe {
        libc::malloc_trim(0);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn give_back_freed_pages() {}
