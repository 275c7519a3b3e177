//! The model every byte is checked against: what one direction of a
//! connection carries (a pattern of bytes, a function of its key and the
//! offset, so a reader checks what it got without a copy of what was
//! sent), and what its writer has done so far (a [`Ledger`]).

use std::cell::{Cell, RefCell};
use std::io;
use std::time::Duration;

use ioloop::sim::Rng;
use ioloop::time::Instant;

/// The bytes `from..from + len` of the stream with key `key`: `\n` about
/// one byte in 51 (lines far under the reader's 64 KiB limit), lowercase
/// letters otherwise (so `z` is a delimiter too, about one byte in 27).
pub fn pattern(key: u64, from: u64, len: usize) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(len);
    let mut at = from;
    let end = from + len as u64;
    while at < end {
        // SplitMix64's finaliser over (key, block of 8): every byte depends
        // on both, so a byte at the wrong offset is caught.
        let block = at / 8;
        let mut x = key ^ block.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        x ^= x >> 31;
        let stop = end.min(block * 8 + 8);
        for i in at..stop {
            let v = (x >> (8 * (i % 8))) as u8;
            bytes.push(if v < 5 { b'\n' } else { b'a' + v % 26 });
        }
        at = stop;
    }
    bytes
}

/// How a direction's writer ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    /// Still writing.
    Open,
    /// Closed or shut down after a flush: every byte offered arrives,
    /// then the end of the stream.
    Closed,
    /// Dropped, with bytes maybe still queued in the `StreamWriter`:
    /// what arrives is at least what was confirmed, at most what was
    /// offered, then the end of the stream.
    Dropped,
    /// Failed (a fault broke the connection): a prefix arrives.
    Broken,
}

/// What one direction's writer has done: the reader's side of the model.
#[derive(Debug)]
pub struct Ledger {
    /// Its pattern's key.
    pub key: u64,
    /// Bytes the writer accepted (`write`, `write_owned`, what
    /// `write_vectored` and `try_write` returned, `write_all`'s whole).
    pub offered: u64,
    /// What was offered at the last `drain`, `flush` or raw `write_all`
    /// that returned `Ok`: handed to the socket, so it survives a drop of
    /// the writer.
    pub confirmed: u64,
    /// How the writer ended.
    pub end: End,
}

impl Ledger {
    fn new(key: u64) -> Ledger {
        Ledger {
            key,
            offered: 0,
            confirmed: 0,
            end: End::Open,
        }
    }
}

/// Where a connection's server half is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Served {
    /// The server has not read its header yet.
    Pending,
    /// The server's half runs.
    Running,
    /// The server's half returned.
    Done,
}

/// One connection of the workload, shared by its two halves (hosts of
/// one world run on one thread).
#[derive(Debug)]
pub struct Conn {
    /// Client to server.
    pub up: RefCell<Ledger>,
    /// Server to client.
    pub down: RefCell<Ledger>,
    /// A loss is allowed: faults are on, or the client aborted it.
    pub lossy: Cell<bool>,
    /// The server half's progress.
    pub served: Cell<Served>,
}

impl Conn {
    /// Connection `id` of a world seeded `seed`; `lossy` if faults are on.
    pub fn new(seed: u64, id: u64, lossy: bool) -> Conn {
        let key = Rng::new(seed ^ id.wrapping_mul(0x2545_f491_4f6c_dd1d)).next_u64();
        Conn {
            up: RefCell::new(Ledger::new(key)),
            down: RefCell::new(Ledger::new(!key)),
            lossy: Cell::new(lossy),
            served: Cell::new(Served::Pending),
        }
    }
}

/// A model violation: the run fails with `what`.
pub fn violation(what: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what)
}

/// A duration from a microsecond to three minutes, short ones most often:
/// a sleep or a timeout of the workload.
pub fn duration(rng: &mut Rng) -> Duration {
    match rng.below(100) {
        0..60 => Duration::from_micros(rng.range(1..1_000)),
        60..90 => Duration::from_millis(rng.range(1..100)),
        90..98 => Duration::from_millis(rng.range(100..5_000)),
        _ => Duration::from_secs(rng.range(5..180)),
    }
}

/// How late a timer may fire on the virtual clock, with no fault: the
/// timer wheel's rounding up to its millisecond tick, and one more.
const LATE: Duration = Duration::from_millis(2);

/// Checks a sleep or a timeout of `asked`, begun at `start`, ended now:
/// never early (a duration over a second is not cut to its fraction), and
/// with no fault (no stopped host) not late either.
pub fn on_time(what: &str, start: Instant, asked: Duration, strict: bool) -> std::io::Result<()> {
    let took = start.elapsed();
    if took < asked || (strict && took > asked + LATE) {
        return Err(violation(format!(
            "{what}: {asked:?} asked, {took:?} on the virtual clock"
        )));
    }
    Ok(())
}
