//! A workload reader: one direction's `StreamReader`, read by every
//! method it has, picked per step by the seed, some under a timeout of
//! any length, each result checked against the [`Ledger`].

use std::cell::RefCell;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::time::Duration;

use ioloop::io::{AsyncReadExt, StreamReader, read_buf};
use ioloop::net::tcp::OwnedReadHalf;
use ioloop::sim::Rng;
use ioloop::time::{Instant, sleep, timeout};

use super::model::{End, Ledger, duration, on_time, pattern, violation};

/// What one read step gave.
enum Got {
    /// Bytes, in order.
    Bytes(Vec<u8>),
    /// Bytes (maybe none) and then the end of the stream.
    Last(Vec<u8>),
    /// Nothing: the step slept, or its timeout fired.
    Nothing,
}

/// One step's future.
type Step<'a> = Pin<Box<dyn Future<Output = io::Result<Got>> + 'a>>;

/// Runs `read`, under a timeout of `limit` if there is one: a timeout
/// that fires is `Got::Nothing`, and the reader is cancel-safe, so the
/// bytes it was gathering wait for the next step.
async fn within(
    limit: Option<Duration>,
    read: impl Future<Output = io::Result<Got>>,
    strict: bool,
) -> io::Result<Got> {
    let Some(limit) = limit else {
        return read.await;
    };
    let start = Instant::now();
    match timeout(limit, read).await {
        Ok(read) => read,
        Err(_) => on_time("a read's timeout", start, limit, strict).map(|()| Got::Nothing),
    }
}

/// The bytes a read that ended early left in `reader`'s buffer, taken.
fn rest(reader: &mut StreamReader<OwnedReadHalf>) -> Got {
    let rest = reader.buffer().to_vec();
    reader.consume(rest.len());
    Got::Last(rest)
}

/// Reads `reader` to its end, checking every byte against `ledger`'s
/// pattern and the end against what its writer did. `strict` (no fault,
/// no abort) allows no error and no loss. Returns the bytes read.
pub async fn read_all(
    mut reader: StreamReader<OwnedReadHalf>,
    ledger: &RefCell<Ledger>,
    strict: impl Fn() -> bool,
    mut rng: Rng,
    name: &str,
) -> io::Result<u64> {
    let key = ledger.borrow().key;
    let mut got = 0u64;
    loop {
        let limit = rng.chance(0.25).then(|| duration(&mut rng));
        let reader = &mut reader;
        let now_strict = strict();
        let step: Step<'_> = match rng.below(9) {
            0 => Box::pin(within(
                limit,
                async move {
                    Ok(match reader.read_line().await? {
                        None => Got::Last(Vec::new()),
                        Some(line) => {
                            // `read_line` drops the `\n`; it was there unless
                            // this is an unterminated last line.
                            let mut line = line.to_vec();
                            let end = got + line.len() as u64;
                            if end < ledger.borrow().offered && pattern(key, end, 1) == b"\n" {
                                line.push(b'\n');
                            }
                            Got::Bytes(line)
                        }
                    })
                },
                now_strict,
            )),
            1 => {
                let delimiter = if rng.chance(0.5) { b'\n' } else { b'z' };
                Box::pin(within(
                    limit,
                    async move {
                        match reader.read_until(delimiter).await {
                            Ok(None) => Ok(Got::Last(Vec::new())),
                            Ok(Some(record)) => Ok(Got::Bytes(record.to_vec())),
                            Err(err) if err.kind() == io::ErrorKind::UnexpectedEof => {
                                Ok(rest(reader))
                            }
                            Err(err) => Err(err),
                        }
                    },
                    now_strict,
                ))
            }
            2 => {
                let n = match rng.below(4) {
                    0 => rng.range(10_000..40_000),
                    _ => rng.range(1..2_000),
                } as usize;
                Box::pin(within(
                    limit,
                    async move {
                        match reader.read_exact(n).await {
                            Ok(bytes) => Ok(Got::Bytes(bytes.to_vec())),
                            Err(err) if err.kind() == io::ErrorKind::UnexpectedEof => {
                                Ok(rest(reader))
                            }
                            Err(err) => Err(err),
                        }
                    },
                    now_strict,
                ))
            }
            3 => {
                let take = rng.next_u64();
                Box::pin(within(
                    limit,
                    async move {
                        if reader.fill_more().await? == 0 {
                            return Ok(rest(reader));
                        }
                        let n = (take % (reader.buffer().len() as u64 + 1)) as usize;
                        let bytes = reader.buffer()[..n].to_vec();
                        reader.consume(n);
                        Ok(Got::Bytes(bytes))
                    },
                    now_strict,
                ))
            }
            4 | 5 => {
                // Plain `read`, into a small buffer or a large one.
                let size = match rng.below(2) {
                    0 => rng.range(1..16),
                    _ => rng.range(16_000..70_000),
                } as usize;
                Box::pin(within(
                    limit,
                    async move {
                        let mut buf = vec![0; size];
                        let n = AsyncReadExt::read(reader, &mut buf).await?;
                        buf.truncate(n);
                        Ok(if n == 0 {
                            Got::Last(buf)
                        } else {
                            Got::Bytes(buf)
                        })
                    },
                    now_strict,
                ))
            }
            6 => Box::pin(within(
                limit,
                async move {
                    let mut buf = Vec::new();
                    let n = read_buf(&mut *reader, &mut buf).await?;
                    Ok(if n == 0 {
                        Got::Last(buf)
                    } else {
                        Got::Bytes(buf)
                    })
                },
                now_strict,
            )),
            _ => {
                let pause = duration(&mut rng);
                Box::pin(async move {
                    let start = Instant::now();
                    sleep(pause).await;
                    on_time("a sleep", start, pause, now_strict).map(|()| Got::Nothing)
                })
            }
        };
        let step = match step.await {
            Ok(step) => step,
            // A model violation (a timer off time), or a line over the
            // limit, which the pattern never makes: fails, faults or not.
            Err(err) if err.kind() == io::ErrorKind::InvalidData => {
                return Err(violation(format!("{name}: {err}")));
            }
            Err(err) if !strict() => {
                log::debug!("{name}: {err} after {got} bytes, a fault");
                return Ok(got);
            }
            Err(err) => {
                return Err(violation(format!(
                    "{name}: {err} after {got} bytes, with no fault"
                )));
            }
        };
        let (bytes, last) = match step {
            Got::Bytes(bytes) => (bytes, false),
            Got::Last(bytes) => (bytes, true),
            Got::Nothing => continue,
        };
        let want = pattern(key, got, bytes.len());
        if bytes != want {
            let at = bytes.iter().zip(&want).position(|(a, b)| a != b);
            return Err(violation(format!(
                "{name}: {} bytes at offset {got} differ from what was sent, first at {at:?}",
                bytes.len()
            )));
        }
        got += bytes.len() as u64;
        let ledger = ledger.borrow();
        if got > ledger.offered {
            return Err(violation(format!(
                "{name}: read {got} bytes, only {} were written",
                ledger.offered
            )));
        }
        if last {
            let fine = match ledger.end {
                _ if !strict() => true,
                End::Closed => got == ledger.offered,
                End::Dropped => got >= ledger.confirmed,
                End::Open | End::Broken => false,
            };
            if !fine {
                return Err(violation(format!(
                    "{name}: the stream ended after {got} bytes; its writer is {:?}, \
                     offered {}, confirmed {}",
                    ledger.end, ledger.offered, ledger.confirmed
                )));
            }
            return Ok(got);
        }
    }
}
