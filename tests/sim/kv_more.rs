//! The key-value server in the worlds `kv` leaves out (issue 41, item 8):
//! deep pipelines (up to 31 commands a batch), pub/sub under faults (every
//! message a subscriber gets is right, in order, never twice; with no fault,
//! every one), and clients that never read: one pipelining GETs of a large
//! value, which the server must stop reading from rather than buffer
//! without end, and a subscriber, which it must drop at its output bound
//! (32 MiB); others are served meanwhile.

use std::cell::{Cell, RefCell};
use std::io;
use std::rc::Rc;
use std::time::Duration;

use ioloop::io::{StreamReader, StreamWriter};
use ioloop::net::TcpStream;
use ioloop::net::tcp::OwnedReadHalf;
use ioloop::sim::{Faults, Rng, Sim, run_seed, run_seeds};
use ioloop::time::{sleep, timeout};
use testkit::resp;

use crate::kv::{kv_client, kv_host};
use crate::retry::{Seen, exact_under_faults, exact_without_faults};
use crate::workload::pattern;
use crate::worlds::{breaks_tcp, sim};

/// A world of the key-value server and a client pipelining batches of up
/// to 31 commands on 32 keys (one client: its bytes are most of a run's
/// cost, and depth, not company, is the point).
fn deep(seed: u64, faults: Faults, seen: Rc<RefCell<Seen>>) -> Sim {
    let mut sim = sim(seed, faults);
    sim.host("server", kv_host);
    for client in 0..1u64 {
        let seen = seen.clone();
        let seed = seed.wrapping_mul(41).wrapping_add(client);
        sim.client(&format!("client{client}"), move || async move {
            let saw = kv_client("server:6379", client, 3, 32, seed).await?;
            seen.borrow_mut().add(&saw);
            Ok(())
        });
    }
    sim
}

#[test]
fn deep_kv_pipelines_are_answered_exactly_without_faults() {
    exact_without_faults(deep);
}

#[test]
fn deep_kv_pipelines_are_answered_exactly_under_faults() {
    exact_under_faults("kv deep", deep);
}

#[test]
fn a_deep_pipeline_of_one_set_behind_a_get_of_the_same_key_is_answered_in_order() {
    // Not in `kv_client`'s batches (their keys differ, to retry them
    // whole): the GET must see the value before the SET, then the new one.
    run_seed(0, |seed| {
        let mut sim = Sim::new(seed);
        sim.host("server", kv_host).client("client", || async {
            let mut conn = connect().await?;
            let mut wire = Vec::new();
            for i in 0..64u32 {
                wire.extend(command(&[b"SET", b"k", &i.to_le_bytes()]));
                wire.extend(command(&[b"GET", b"k"]));
            }
            conn.1.write(&wire);
            conn.1.drain().await?;
            for i in 0..64u32 {
                let set = value(&mut conn.0).await?;
                let get = value(&mut conn.0).await?;
                if set != Value::Simple("OK".into()) || get != Value::Bulk(i.to_le_bytes().to_vec())
                {
                    return Err(io::Error::other(format!(
                        "command pair {i}: {set:?}, {get:?}"
                    )));
                }
            }
            Ok(())
        });
        sim
    })
    .unwrap_or_else(|failure| panic!("{failure}"));
}

/// A RESP reply or message, as far as these clients need.
#[derive(Debug, PartialEq)]
enum Value {
    Simple(String),
    Int(i64),
    Bulk(Vec<u8>),
    Array(Vec<Value>),
}

/// Reads one RESP value; the stream ending first is `UnexpectedEof`.
async fn value(reader: &mut StreamReader<OwnedReadHalf>) -> io::Result<Value> {
    let bad = |what: &str| io::Error::new(io::ErrorKind::InvalidData, what.to_owned());
    let mut count = None;
    let mut items = Vec::new();
    loop {
        let line = match reader.read_until(b'\n').await? {
            Some(line) => line.to_vec(),
            None => return Err(io::ErrorKind::UnexpectedEof.into()),
        };
        let text = std::str::from_utf8(&line[1..line.len() - 2]).map_err(|_| bad("a header"))?;
        let number: i64 = match line[0] {
            b'+' => 0,
            _ => text.parse().map_err(|_| bad(text))?,
        };
        let item = match line[0] {
            b'+' => Value::Simple(text.to_owned()),
            b':' => Value::Int(number),
            b'$' => {
                let body = reader.read_exact(number as usize + 2).await?;
                Value::Bulk(body[..number as usize].to_vec())
            }
            b'*' if count.is_none() => {
                count = Some(number as usize);
                continue;
            }
            _ => return Err(bad("a reply this client does not expect")),
        };
        match count {
            None => return Ok(item),
            Some(n) => {
                items.push(item);
                if items.len() == n {
                    return Ok(Value::Array(items));
                }
            }
        }
    }
}

/// The command `args`, on the wire.
fn command(args: &[&[u8]]) -> Vec<u8> {
    let mut wire = Vec::new();
    resp::array(&mut wire, args.len());
    for arg in args {
        resp::bulk(&mut wire, arg);
    }
    wire
}

type Conn = (
    StreamReader<OwnedReadHalf>,
    StreamWriter<ioloop::net::tcp::OwnedWriteHalf>,
);

async fn connect() -> io::Result<Conn> {
    let (read, write) = TcpStream::connect("server:6379").await?.into_split();
    Ok((StreamReader::new(read), StreamWriter::new(write)))
}

/// Subscribes `conn` to `channel` and reads the confirmation.
async fn subscribe(conn: &mut Conn, channel: &[u8]) -> io::Result<()> {
    conn.1.write(&command(&[b"SUBSCRIBE", channel]));
    conn.1.drain().await?;
    let want = Value::Array(vec![
        Value::Bulk(b"subscribe".to_vec()),
        Value::Bulk(channel.to_vec()),
        Value::Int(1),
    ]);
    match value(&mut conn.0).await? {
        got if got == want => Ok(()),
        got => Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("subscribing: {got:?}"),
        )),
    }
}

/// Message `seq`'s payload: its number, then `len` bytes of pattern.
fn payload(seq: u64, len: usize) -> Vec<u8> {
    let mut bytes = seq.to_le_bytes().to_vec();
    bytes.extend(pattern(0x5eed ^ seq, 0, len));
    bytes
}

/// The message `seq` of the world; the last, `u64::MAX`, says "done".
fn message(rng: &mut Rng, seq: u64) -> Vec<u8> {
    let len = match rng.below(10) {
        0 => rng.range(2_000..10_000),
        _ => rng.below(300),
    };
    payload(seq, len as usize)
}

/// Checks a message `got` is a message, on `channel`, whole, and
/// numbered after `last`: its number.
fn check_message(got: Value, channel: &[u8], last: Option<u64>) -> io::Result<u64> {
    let bad = |what: String| io::Error::new(io::ErrorKind::InvalidData, what);
    let Value::Array(items) = got else {
        return Err(bad(format!("not a message: {got:?}")));
    };
    let [Value::Bulk(kind), Value::Bulk(on), Value::Bulk(body)] = &items[..] else {
        return Err(bad(format!("not a message: {items:?}")));
    };
    if kind != b"message" || on != channel || body.len() < 8 {
        return Err(bad(format!("not a message: {items:?}")));
    }
    let seq = u64::from_le_bytes(body[..8].try_into().expect("8 bytes"));
    if *body != payload(seq, body.len() - 8) {
        return Err(bad(format!(
            "message {seq}: its payload is not what was published"
        )));
    }
    if last.is_some_and(|last| seq <= last) {
        return Err(bad(format!(
            "message {seq} after {last:?}: twice, or out of order"
        )));
    }
    Ok(seq)
}

/// What the pub/sub clients share (one thread: a `Cell` will do).
#[derive(Default)]
struct Board {
    /// The subscriber is subscribed now.
    subscribed: Cell<bool>,
    /// The subscriber got the last message.
    done: Cell<bool>,
}

/// Messages a publisher sends.
const MESSAGES: u64 = 20;

/// Subscribes, reads messages until the last, checking each; with faults,
/// a broken connection is made again and the channel subscribed again.
async fn subscriber(board: Rc<Board>, strict: bool, seed: u64) -> io::Result<()> {
    let mut rng = Rng::new(seed);
    let mut last = None;
    loop {
        let run = async {
            let mut conn = connect().await?;
            subscribe(&mut conn, b"news").await?;
            board.subscribed.set(true);
            loop {
                let seq = check_message(value(&mut conn.0).await?, b"news", last)?;
                if strict && seq != u64::MAX && seq != last.map_or(0, |l| l + 1) {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        format!("message {seq} after {last:?}, with no fault"),
                    ));
                }
                last = Some(seq);
                if seq == u64::MAX {
                    return Ok(());
                }
            }
        };
        match run.await {
            Ok(()) => break,
            Err(err) if err.kind() == io::ErrorKind::InvalidData || strict => return Err(err),
            Err(err) => {
                log::debug!("subscriber: {err}; again");
                board.subscribed.set(false);
                sleep(Duration::from_millis(rng.range(1..200))).await;
            }
        }
    }
    if strict && last != Some(u64::MAX) {
        return Err(io::Error::other("the subscriber missed messages"));
    }
    board.done.set(true);
    Ok(())
}

/// Publishes `MESSAGES` messages once the subscriber is on, never one
/// twice (a publish whose reply is lost is not sent again), then the last
/// until the subscriber has it. With no fault, each reaches 1 subscriber.
async fn publisher(board: Rc<Board>, strict: bool, seed: u64) -> io::Result<()> {
    let mut rng = Rng::new(seed);
    while !board.subscribed.get() {
        sleep(Duration::from_millis(1)).await;
    }
    let mut conn: Option<Conn> = None;
    let mut seq = 0;
    while !board.done.get() {
        // With no fault the last message arrives: sent again, it could
        // find the subscriber gone with it, and answer 0 (seed 363).
        if strict && seq > MESSAGES {
            sleep(Duration::from_millis(10)).await;
            continue;
        }
        let body = match seq < MESSAGES {
            true => message(&mut rng, seq),
            false => payload(u64::MAX, 0),
        };
        let sent = timeout(Duration::from_secs(10), async {
            if conn.is_none() {
                conn = Some(connect().await?);
            }
            let conn = conn.as_mut().expect("connected");
            conn.1.write(&command(&[b"PUBLISH", b"news", &body]));
            conn.1.drain().await?;
            value(&mut conn.0).await
        })
        .await
        .unwrap_or_else(|_| Err(io::ErrorKind::TimedOut.into()));
        match sent {
            Ok(Value::Int(1)) => {}
            Ok(Value::Int(0)) if !strict => {}
            Ok(other) => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("PUBLISH {seq}: {other:?}"),
                ));
            }
            Err(err) if strict => return Err(err),
            Err(err) => {
                log::debug!("publisher: {err}; again");
                conn = None;
            }
        }
        seq += 1;
        sleep(Duration::from_millis(rng.range(0..30))).await;
    }
    Ok(())
}

fn pubsub(seed: u64, faults: Faults) -> Sim {
    let strict = !breaks_tcp(&faults);
    let board = Rc::new(Board::default());
    let mut sim = sim(seed, faults);
    sim.host("server", kv_host);
    let (b1, b2) = (board.clone(), board);
    sim.client("subscriber", move || subscriber(b1, strict, seed));
    sim.client("publisher", move || publisher(b2, strict, seed ^ 1));
    sim
}

#[test]
fn every_published_message_arrives_once_in_order_without_faults() {
    run_seeds(0..crate::seeds(), |seed| pubsub(seed, Faults::default()))
        .unwrap_or_else(|failure| panic!("{failure}"));
}

#[test]
fn published_messages_arrive_right_in_order_never_twice_under_faults() {
    run_seeds(0..crate::seeds(), |seed| pubsub(seed, Faults::all()))
        .unwrap_or_else(|failure| panic!("{failure}"));
}

/// The size of a message the never-reading subscriber is sent.
const BIG: usize = 1 << 20;

/// Subscribes, then reads nothing until the publisher is done; then
/// what it reads is messages in order, and then the server's goodbye (an
/// end of stream or a reset).
async fn never_reads(board: Rc<Board>) -> io::Result<()> {
    let mut conn = connect().await?;
    subscribe(&mut conn, b"firehose").await?;
    board.subscribed.set(true);
    while !board.done.get() {
        sleep(Duration::from_millis(100)).await;
    }
    let mut last = None;
    loop {
        match timeout(Duration::from_secs(60), value(&mut conn.0)).await {
            Err(_) => return Err(io::Error::other("the server neither sent nor closed: held")),
            Ok(Ok(got)) => last = Some(check_message(got, b"firehose", last)?),
            Ok(Err(err)) if err.kind() == io::ErrorKind::InvalidData => return Err(err),
            Ok(Err(_)) => return Ok(()),
        }
    }
}

/// Publishes `BIG` messages until the server says nobody hears them: it
/// must within its bound (32 MiB), plus what the sockets hold.
async fn floods(board: Rc<Board>) -> io::Result<()> {
    while !board.subscribed.get() {
        sleep(Duration::from_millis(1)).await;
    }
    let mut conn = connect().await?;
    let most = (32 << 20) / BIG as u64 + 4;
    for seq in 0..=most {
        conn.1
            .write(&command(&[b"PUBLISH", b"firehose", &payload(seq, BIG - 8)]));
        conn.1.drain().await?;
        match value(&mut conn.0).await? {
            Value::Int(1) => {}
            Value::Int(0) => {
                board.done.set(true);
                return Ok(());
            }
            other => return Err(io::Error::other(format!("PUBLISH: {other:?}"))),
        }
    }
    Err(io::Error::other(format!(
        "{most} MiB published to a subscriber that reads nothing, and it is still there"
    )))
}

fn firehose(seed: u64) -> Sim {
    let board = Rc::new(Board::default());
    let mut sim = sim(seed, Faults::default());
    // Small buffers: the subscriber's socket holds little, so what waits
    // is the server's.
    sim.buffers(4096, 4096).host("server", kv_host);
    let (b1, b2) = (board.clone(), board);
    sim.client("subscriber", move || never_reads(b1));
    sim.client("publisher", move || floods(b2));
    // The server serves others meanwhile.
    sim.client("other", move || async move {
        kv_client("server:6379", 9, 4, 4, seed).await.map(drop)
    });
    sim
}

#[test]
fn a_subscriber_that_never_reads_is_dropped_at_the_bound_and_others_are_served() {
    // 33 MiB through the simulated network, 8 s of a debug build: one
    // seed (the bound is a count of bytes, not an order of events).
    run_seeds(0..1, firehose).unwrap_or_else(|failure| panic!("{failure}"));
}

/// Sets a 64 KiB value, then pipelines GETs of it and never reads a reply:
/// the server, its reply stuck, must stop reading commands, so the GETs
/// stop going out within what the sockets hold (not the 64 KiB replies the
/// server would otherwise queue for each). Then it gives up, and the
/// server has served the other client meanwhile.
async fn pipelines_and_never_reads() -> io::Result<()> {
    let mut conn = connect().await?;
    // Past both sockets' buffers (4 KiB each): its reply cannot go out
    // whole while nobody reads.
    let big = vec![b'v'; 64 * 1024];
    conn.1.write(&command(&[b"SET", b"big", &big]));
    conn.1.drain().await?;
    match value(&mut conn.0).await? {
        Value::Simple(ok) if ok == "OK" => {}
        other => return Err(io::Error::other(format!("SET: {other:?}"))),
    }
    let get = command(&[b"GET", b"big"]);
    // Ten times what the sockets and the server's input buffer hold.
    let most = 10 * (2 * 4096 + 64 * 1024) / get.len();
    for sent in 0..most {
        conn.1.write(&get);
        if timeout(Duration::from_secs(10), conn.1.drain())
            .await
            .is_err()
        {
            log::debug!("held back after {sent} GETs");
            return Ok(());
        }
    }
    Err(io::Error::other(format!(
        "{most} GETs of a 64 KiB value went out, none of the replies read: the server reads on"
    )))
}

fn never_reads_replies(seed: u64) -> Sim {
    let mut sim = sim(seed, Faults::default());
    sim.buffers(4096, 4096).host("server", kv_host);
    sim.client("greedy", pipelines_and_never_reads);
    sim.client("other", move || async move {
        kv_client("server:6379", 9, 4, 4, seed).await.map(drop)
    });
    sim
}

#[test]
fn a_client_pipelining_gets_and_never_reading_is_held_back_and_others_are_served() {
    // A quarter of the seeds: a 64 KiB value a run.
    run_seeds(0..crate::seeds() / 4, never_reads_replies)
        .unwrap_or_else(|failure| panic!("{failure}"));
}
