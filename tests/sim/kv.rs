//! The key-value server of `examples/kv_server`, its own code, as a
//! simulated host, and clients speaking RESP to it: batches of SET, GET
//! and DEL on keys of their own, values up to 20 KB of random bytes, every
//! reply checked byte for byte against what the client last set.

use std::cell::RefCell;
use std::io;
use std::rc::Rc;
use std::time::Duration;

use futures_util::future::try_join;
use ioloop::io::{StreamReader, StreamWriter};
use ioloop::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use ioloop::net::{TcpListener, TcpStream};
use ioloop::sim::{Faults, Rng, Sim, run_seed};
use ioloop::time::timeout;
use testkit::kv_server::{Config, serve};
use testkit::resp;

use crate::retry::{Seen, check, exact_under_faults, exact_without_faults, until_done, value};

/// The keys each client owns (named after it: no other client's command
/// touches them, so the client knows every value), and so at most one
/// command less in a batch; `kv_more`'s deep pipelines own more.
const KEYS: usize = 4;

enum Op {
    Set(usize, Vec<u8>),
    Get(usize),
    Del(usize),
}

/// One to three commands, each on a different key: then retrying the
/// batch whole is idempotent (a SET sets the same value again, a GET reads
/// a key no command before it in the batch touched, and a DEL deletes
/// again, answering 0 if the lost attempt had deleted it).
fn batch(rng: &mut Rng, owned: usize) -> Vec<Op> {
    let mut keys: Vec<usize> = (0..owned).collect();
    rng.shuffle(&mut keys);
    let n = rng.range(1..owned as u64) as usize;
    keys[..n]
        .iter()
        .map(|&k| match rng.below(20) {
            0..9 => Op::Set(k, value(rng)),
            9..17 => Op::Get(k),
            _ => Op::Del(k),
        })
        .collect()
}

/// The batch `ops` of client `client`, as it goes on the wire.
fn encode(client: u64, ops: &[Op]) -> Vec<u8> {
    let mut wire = Vec::new();
    for op in ops {
        let (name, k, value) = match op {
            Op::Set(k, value) => (&b"SET"[..], k, Some(value)),
            Op::Get(k) => (&b"GET"[..], k, None),
            Op::Del(k) => (&b"DEL"[..], k, None),
        };
        resp::array(&mut wire, 2 + usize::from(value.is_some()));
        resp::bulk(&mut wire, name);
        resp::bulk(&mut wire, format!("c{client}:k{k}").as_bytes());
        if let Some(value) = value {
            resp::bulk(&mut wire, value);
        }
    }
    wire
}

type Conn = (StreamReader<OwnedReadHalf>, StreamWriter<OwnedWriteHalf>);

/// Reads one line of a reply, `\r\n` included; the stream ending first is
/// a broken connection.
async fn line(reader: &mut StreamReader<OwnedReadHalf>) -> io::Result<Vec<u8>> {
    match reader.read_until(b'\n').await? {
        Some(line) => Ok(line.to_vec()),
        None => Err(io::ErrorKind::UnexpectedEof.into()),
    }
}

/// Sends `wire` (the batch `ops`, encoded) and checks each reply against
/// `model`, the values this client last set; `retried` says an attempt
/// of this batch was lost, so a DEL may find its key already gone.
///
/// The replies are read while the batch goes out: `kv_server` reads no
/// command while a large reply drains, so a client sending a large SET
/// behind a large GET before reading any reply could wait forever.
async fn exchange(
    conn: &mut Conn,
    wire: &[u8],
    ops: &[Op],
    model: &[Option<Vec<u8>>],
    retried: bool,
) -> io::Result<()> {
    let (reader, writer) = conn;
    let send = async {
        writer.write(wire);
        writer.drain().await
    };
    let replies = async {
        for (i, op) in ops.iter().enumerate() {
            let what = format!("reply {i} of the batch");
            let got = line(reader).await?;
            match op {
                Op::Set(..) => check(&what, &got, b"+OK\r\n")?,
                Op::Get(k) => match &model[*k] {
                    None => check(&what, &got, b"$-1\r\n")?,
                    Some(value) => {
                        check(&what, &got, format!("${}\r\n", value.len()).as_bytes())?;
                        let body = reader.read_exact(value.len() + 2).await?;
                        check(&what, &body[..value.len()], value)?;
                        check(&what, &body[value.len()..], b"\r\n")?;
                    }
                },
                Op::Del(k) => {
                    let want = format!(":{}\r\n", u8::from(model[*k].is_some()));
                    if !(retried && got == b":0\r\n") {
                        check(&what, &got, want.as_bytes())?;
                    }
                }
            }
        }
        Ok(())
    };
    try_join(send, replies).await.map(drop)
}

/// Runs `batches` batches of commands (and a last one reading every key)
/// against `server`, checking every reply; a connection that breaks or
/// goes silent is made again and the batch sent again. The client owns
/// `keys` keys, and pipelines up to one command less in a batch.
pub async fn kv_client(
    server: &str,
    client: u64,
    batches: usize,
    keys: usize,
    seed: u64,
) -> io::Result<Seen> {
    let mut rng = Rng::new(seed);
    let mut model: Vec<Option<Vec<u8>>> = vec![None; keys];
    let mut seen = Seen::default();
    let mut conn: Option<Conn> = None;
    for b in 0..=batches {
        let ops = if b < batches {
            batch(&mut rng, keys)
        } else {
            (0..keys).map(Op::Get).collect()
        };
        let wire = encode(client, &ops);
        let what = format!("client {client}, batch {b}");
        let mut pause = Rng::new(rng.next_u64());
        until_done(
            &what,
            &mut conn,
            &mut seen,
            &mut pause,
            async |conn, retried| {
                if conn.is_none() {
                    let (read, write) = TcpStream::connect(server).await?.into_split();
                    *conn = Some((StreamReader::new(read), StreamWriter::new(write)));
                }
                let conn = conn.as_mut().expect("connected");
                exchange(conn, &wire, &ops, &model, retried).await
            },
        )
        .await?;
        for op in ops {
            match op {
                Op::Set(k, value) => model[k] = Some(value),
                Op::Del(k) => model[k] = None,
                Op::Get(_) => {}
            }
        }
        // A moment's thought before the next batch, so runs last long
        // enough for the faults to meet them.
        ioloop::time::sleep(Duration::from_millis(rng.range(0..50))).await;
    }
    Ok(seen)
}

/// The key-value server, on port 6379.
pub async fn kv_host() -> io::Result<()> {
    let listener = TcpListener::bind("0.0.0.0:6379").await?;
    let config = Config {
        max_connections: 250,
        grace: Duration::from_secs(1),
    };
    serve(listener, config, std::future::pending()).await
}

/// A world of one key-value server and three clients running `batches`
/// batches each; what they saw is added to `seen`.
pub fn kv_world(seed: u64, faults: Faults, batches: usize, seen: Rc<RefCell<Seen>>) -> Sim {
    let mut sim = crate::worlds::sim(seed, faults);
    sim.host("server", kv_host);
    for client in 0..3u64 {
        let seen = seen.clone();
        let seed = seed.wrapping_mul(31).wrapping_add(client);
        sim.client(&format!("client{client}"), move || async move {
            let saw = kv_client("server:6379", client, batches, KEYS, seed).await?;
            seen.borrow_mut().add(&saw);
            Ok(())
        });
    }
    sim
}

/// The world with 8 batches a client.
fn world(seed: u64, faults: Faults, seen: Rc<RefCell<Seen>>) -> Sim {
    kv_world(seed, faults, 8, seen)
}

#[test]
fn every_kv_reply_is_exact_without_faults_and_with_no_reconnect() {
    exact_without_faults(world);
}

#[test]
fn every_kv_reply_is_exact_under_faults_and_nothing_hangs() {
    exact_under_faults("kv", world);
}

/// The client's own bug, found by a run with values up to 300 KB: it sent
/// a whole batch before reading a reply, and `kv_server` reads nothing
/// while a large reply drains, so with a large SET behind a large GET
/// both sides waited on full buffers.
#[test]
fn kv_client_reads_replies_while_a_large_set_behind_a_large_get_goes_out() {
    run_seed(10, |seed| {
        let mut sim = Sim::new(seed);
        sim.host("server", kv_host).client("client", || async {
            let (read, write) = TcpStream::connect("server:6379").await?.into_split();
            let mut conn = (StreamReader::new(read), StreamWriter::new(write));
            let big = vec![b'v'; 200_000];
            let set = [Op::Set(0, big.clone())];
            exchange(&mut conn, &encode(0, &set), &set, &[None, None], false).await?;
            let both = [Op::Get(0), Op::Set(1, big.clone())];
            let model = [Some(big), None];
            let wire = encode(0, &both);
            let pipelined = exchange(&mut conn, &wire, &both, &model, false);
            timeout(Duration::from_secs(5), pipelined).await?
        });
        sim
    })
    .unwrap_or_else(|failure| panic!("{failure}"));
}
