//! A workload writer: one direction's `StreamWriter`, and the socket half
//! under it, written by every method they have, picked per step by the
//! seed, each result entered in the [`Ledger`] its reader checks.

use std::cell::RefCell;
use std::io::{self, IoSlice};
use std::net::Shutdown;

use ioloop::io::{AsyncWriteExt, StreamWriter};
use ioloop::net::tcp::OwnedWriteHalf;
use ioloop::sim::Rng;
use ioloop::time::{Instant, sleep, timeout};

use super::model::{End, Ledger, duration, on_time, pattern, violation};

/// The length of one write: mostly under a segment, one in sixteen up to
/// 40 KB (past most socket buffers: the writer waits for room).
fn length(rng: &mut Rng) -> usize {
    match rng.below(16) {
        0 => rng.range(10_000..40_000) as usize,
        _ => rng.below(3_000) as usize,
    }
}

/// The next `len` bytes `ledger`'s writer owes.
fn next(ledger: &RefCell<Ledger>, len: usize) -> Vec<u8> {
    let ledger = ledger.borrow();
    pattern(ledger.key, ledger.offered, len)
}

/// `bytes` cut into 1 to 2,000 slices, some empty: past `IOV_MAX`
/// (1,024) one time in four.
fn slices<'a>(rng: &mut Rng, mut bytes: &'a [u8]) -> Vec<IoSlice<'a>> {
    let count = match rng.below(4) {
        0 => rng.range(1_000..2_001),
        _ => rng.range(1..8),
    } as usize;
    let mut slices = Vec::with_capacity(count);
    for i in 0..count {
        let take = if i + 1 == count {
            bytes.len()
        } else {
            (rng.below(2 * (bytes.len() / (count - i)) as u64 + 1) as usize).min(bytes.len())
        };
        let (slice, rest) = bytes.split_at(take);
        slices.push(IoSlice::new(slice));
        bytes = rest;
    }
    slices
}

/// Writes `steps` steps to `writer`, entering each in `ledger`, then ends
/// the stream one of three ways (close, flush and shutdown, drop). With
/// `strict` (no fault, no abort) any error fails; otherwise it ends the
/// writer, `End::Broken`.
pub async fn write_all(
    mut writer: StreamWriter<OwnedWriteHalf>,
    ledger: &RefCell<Ledger>,
    strict: impl Fn() -> bool,
    mut rng: Rng,
    steps: u64,
    name: &str,
) -> io::Result<()> {
    let offer = |n: usize| ledger.borrow_mut().offered += n as u64;
    let confirm = || {
        let mut ledger = ledger.borrow_mut();
        ledger.confirmed = ledger.offered;
    };
    let mut outcome = Ok(());
    for _ in 0..steps {
        // The socket half is written directly only with nothing of the
        // `StreamWriter`'s queued before it: the order stays the stream's.
        let raw = writer.buffered() == 0;
        outcome = match rng.below(11) {
            0 => {
                let data = next(ledger, length(&mut rng));
                offer(data.len());
                writer.write(&data);
                Ok(())
            }
            1 => {
                let data = next(ledger, length(&mut rng));
                offer(data.len());
                writer.write_owned(data);
                Ok(())
            }
            2 | 3 => {
                let data = next(ledger, length(&mut rng));
                let slices = slices(&mut rng, &data);
                let written = if raw && rng.chance(0.5) {
                    writer.get_mut().write_vectored(&slices).await
                } else {
                    writer.write_vectored(&slices).await
                };
                written.map(offer)
            }
            4 => {
                let data = next(ledger, length(&mut rng));
                offer(data.len());
                writer.write_all(&data).await
            }
            5 if raw => {
                let data = next(ledger, length(&mut rng));
                offer(data.len());
                let written = writer.get_mut().write_all(&data).await;
                written.map(|()| confirm())
            }
            6 if raw => {
                // `try_write` on the stream itself: what it takes now.
                let data = next(ledger, length(&mut rng));
                match writer.get_ref().as_ref().try_write(&data) {
                    Ok(n) => {
                        offer(n);
                        Ok(())
                    }
                    Err(err) if err.kind() == io::ErrorKind::WouldBlock => Ok(()),
                    Err(err) => Err(err),
                }
            }
            7 | 8 => {
                // A drain or a flush, maybe under a timeout: one that
                // fires leaves the bytes queued, confirmed by a later one.
                let limit = rng.chance(0.3).then(|| duration(&mut rng));
                let flush = rng.chance(0.5);
                let sent = async {
                    match flush {
                        true => writer.flush().await,
                        false => writer.drain().await,
                    }
                };
                let start = Instant::now();
                match limit {
                    None => sent.await.map(|()| confirm()),
                    Some(limit) => match timeout(limit, sent).await {
                        Ok(sent) => sent.map(|()| confirm()),
                        Err(_) => on_time("a drain's timeout", start, limit, strict()),
                    },
                }
            }
            _ => {
                let (start, pause) = (Instant::now(), duration(&mut rng));
                sleep(pause).await;
                on_time("a sleep", start, pause, strict())
            }
        };
        if outcome.is_err() {
            break;
        }
    }
    if outcome.is_ok() {
        outcome = match rng.below(10) {
            0 => {
                ledger.borrow_mut().end = End::Dropped;
                drop(writer);
                return Ok(());
            }
            1 => {
                let flushed = writer.flush().await;
                flushed.and_then(|()| {
                    ledger.borrow_mut().end = End::Closed;
                    writer.get_ref().as_ref().shutdown(Shutdown::Write)
                })
            }
            _ => {
                // Marked first: the end of the stream may reach the reader
                // before this task runs again.
                let end = std::mem::replace(&mut ledger.borrow_mut().end, End::Closed);
                let closed = writer.close().await;
                if closed.is_err() {
                    ledger.borrow_mut().end = end;
                }
                closed
            }
        };
    }
    match outcome {
        Ok(()) => Ok(()),
        // A model violation (a timer off time): fails, faults or not.
        Err(err) if err.kind() == io::ErrorKind::InvalidData => Err(err),
        Err(err) => {
            ledger.borrow_mut().end = End::Broken;
            if strict() {
                let offered = ledger.borrow().offered;
                return Err(violation(format!(
                    "{name}: {err} after {offered} bytes, with no fault"
                )));
            }
            log::debug!("{name}: {err}, a fault");
            Ok(())
        }
    }
}
