//! The key-value server of `examples/kv_server`, its own code, as a
//! simulated host, and clients speaking RESP to it: batches of SET, GET
//! and DEL on keys of their own, values up to 20 KB of random bytes, every
//! reply checked byte for byte against what the client last set.

use std::cell::RefCell;
use std::io;
use std::rc::Rc;
use std::time::Duration;

use ioloop::io::{StreamReader, StreamWriter};
use ioloop::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use ioloop::net::{TcpListener, TcpStream};
use ioloop::sim::{Faults, Rng, Sim, run_seeds};
use testkit::kv_server::{Config, serve};
use testkit::resp;

use crate::retry::{Seen, check, until_done, value};
use crate::seeds;

/// The keys each client owns (named after it: no other client's command
/// touches them, so the client knows every value).
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
fn batch(rng: &mut Rng) -> Vec<Op> {
    let mut keys: Vec<usize> = (0..KEYS).collect();
    rng.shuffle(&mut keys);
    let n = rng.range(1..4) as usize;
    keys[..n]
        .iter()
        .map(|&k| match rng.below(20) {
            0..9 => Op::Set(k, value(rng)),
            9..17 => Op::Get(k),
            _ => Op::Del(k),
        })
        .collect()
}

/// Appends the command `args` to `wire`, as clients send it.
fn command(wire: &mut Vec<u8>, args: &[&[u8]]) {
    resp::array(wire, args.len());
    for arg in args {
        resp::bulk(wire, arg);
    }
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
async fn exchange(
    conn: &mut Conn,
    wire: &[u8],
    ops: &[Op],
    model: &[Option<Vec<u8>>],
    retried: bool,
) -> io::Result<()> {
    let (reader, writer) = conn;
    writer.write(wire);
    writer.drain().await?;
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
}

/// Runs `batches` batches of commands (and a last one reading every key)
/// against `server`, checking every reply; a connection that breaks or
/// goes silent is made again and the batch sent again.
pub async fn kv_client(server: &str, client: u64, batches: usize, seed: u64) -> io::Result<Seen> {
    let mut rng = Rng::new(seed);
    let key = |k: usize| format!("c{client}:k{k}").into_bytes();
    let mut model: Vec<Option<Vec<u8>>> = vec![None; KEYS];
    let mut seen = Seen::default();
    let mut conn: Option<Conn> = None;
    for b in 0..=batches {
        let ops = if b < batches {
            batch(&mut rng)
        } else {
            (0..KEYS).map(Op::Get).collect()
        };
        let mut wire = Vec::new();
        for op in &ops {
            match op {
                Op::Set(k, value) => command(&mut wire, &[b"SET", &key(*k), value]),
                Op::Get(k) => command(&mut wire, &[b"GET", &key(*k)]),
                Op::Del(k) => command(&mut wire, &[b"DEL", &key(*k)]),
            }
        }
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

/// A world of one key-value server and three clients running `batches`
/// batches each; what they saw is added to `seen`.
pub fn kv_world(seed: u64, faults: Faults, batches: usize, seen: Rc<RefCell<Seen>>) -> Sim {
    let mut sim = Sim::new(seed);
    sim.faults(faults).host("server", || async {
        let listener = TcpListener::bind("0.0.0.0:6379").await?;
        let config = Config {
            max_connections: 250,
            grace: Duration::from_secs(1),
        };
        serve(listener, config, std::future::pending()).await
    });
    for client in 0..3u64 {
        let seen = seen.clone();
        let seed = seed.wrapping_mul(31).wrapping_add(client);
        sim.client(&format!("client{client}"), move || async move {
            let saw = kv_client("server:6379", client, batches, seed).await?;
            seen.borrow_mut().add(&saw);
            Ok(())
        });
    }
    sim
}

#[test]
fn every_kv_reply_is_exact_without_faults_and_with_no_reconnect() {
    let seen = Rc::new(RefCell::new(Seen::default()));
    run_seeds(0..50, |seed| {
        kv_world(seed, Faults::default(), 10, seen.clone())
    })
    .unwrap_or_else(|failure| panic!("{failure}"));
    assert_eq!(
        seen.borrow().reconnects,
        0,
        "a connection broke with no fault injected"
    );
}

#[test]
fn every_kv_reply_is_exact_under_faults_and_nothing_hangs() {
    let seen = Rc::new(RefCell::new(Seen::default()));
    let runs = run_seeds(0..seeds(), |seed| {
        kv_world(seed, Faults::all(), 10, seen.clone())
    })
    .unwrap_or_else(|failure| panic!("{failure}"));
    eprintln!("kv: {runs} runs, {:?}", seen.borrow());
    if runs > 20 {
        assert!(
            seen.borrow().reconnects > 0,
            "no fault broke anything in {runs} runs"
        );
    }
}
