//! `StreamReader::read_line` against tokio's `BufReader`, over an in-memory
//! reader, so the framing is measured and not the socket.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput};
use ioloop::io::StreamReader;
use tokio::io::{AsyncBufReadExt, BufReader};

use crate::{Host, ioloop_rt, tokio_rt};

const LINES: usize = 10_000;
const LINE_BYTES: usize = 64;

/// 10,000 lines of 63 printable bytes and a `\n`, made once per run
/// (leaked: the tasks that read it are `'static`).
fn text() -> &'static [u8] {
    let line: Vec<u8> = (0..LINE_BYTES - 1).map(|i| b'a' + (i % 26) as u8).collect();
    let mut text = Vec::with_capacity(LINES * LINE_BYTES);
    for _ in 0..LINES {
        text.extend_from_slice(&line);
        text.push(b'\n');
    }
    Vec::leak(text)
}

/// One iteration reads every line of the text. ioloop's `read_line` hands
/// out a slice of its buffer; tokio's `read_until` copies each line into a
/// `Vec` (the like-for-like), `read_line` into a `String` after checking
/// UTF-8 (what tokio users write).
pub fn read_line(c: &mut Criterion) {
    let text = text();
    let mut group = c.benchmark_group("read_line");
    group.throughput(Throughput::Bytes(text.len() as u64));
    let ioloop = ioloop_rt();
    group.bench_function("ioloop", |b| {
        b.iter_custom(|iters| {
            ioloop.time(async move {
                let start = Instant::now();
                for _ in 0..iters {
                    let mut reader = StreamReader::new(text);
                    while let Some(line) = reader.read_line().await.unwrap() {
                        black_box(line);
                    }
                }
                start.elapsed()
            })
        })
    });
    let tokio = tokio_rt();
    group.bench_function("tokio_ct/read_until", |b| {
        b.iter_custom(|iters| tokio.time(tokio_lines(text, iters, false)))
    });
    group.bench_function("tokio_ct/read_line", |b| {
        b.iter_custom(|iters| tokio.time(tokio_lines(text, iters, true)))
    });
    group.finish();
}

async fn tokio_lines(text: &'static [u8], iters: u64, utf8: bool) -> Duration {
    let mut bytes = Vec::with_capacity(LINE_BYTES);
    let mut string = String::with_capacity(LINE_BYTES);
    let start = Instant::now();
    for _ in 0..iters {
        let mut reader = BufReader::new(text);
        loop {
            let n = if utf8 {
                string.clear();
                reader.read_line(&mut string).await.unwrap()
            } else {
                bytes.clear();
                reader.read_until(b'\n', &mut bytes).await.unwrap()
            };
            if n == 0 {
                break;
            }
            black_box(if utf8 { string.as_bytes() } else { &bytes[..] });
        }
    }
    start.elapsed()
}
