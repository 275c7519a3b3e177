//! The workload's datagrams: an echo server on `udp:53` and clients that
//! send rounds of datagrams of 8 bytes to 64 KB by `send` or `send_to`,
//! and take the echoes by `recv`, `recv_from`, `recv_buf`, `peek_from`
//! or `readable` + `try_recv`, into buffers larger or smaller than the
//! datagram (the kernel cuts a datagram to the buffer). The model: each
//! echo is a datagram sent, whole or cut to the buffer, never one not
//! sent; with no fault, every one arrives once, in order; with faults,
//! at most once unless duplication is on.

use std::collections::BTreeMap;
use std::io;
use std::net::SocketAddr;
use std::time::Duration;

use ioloop::net::UdpSocket;
use ioloop::sim::{Faults, Rng, Sim};
use ioloop::time::timeout;

use super::model::{pattern, violation};

/// Rounds a client sends, and datagrams a round.
const ROUNDS: u64 = 4;
const PER_ROUND: u64 = 5;
/// Bytes a round sends at most: well inside the simulated socket's
/// receive buffer (Linux's default, 212,992 bytes), so with no fault none
/// is dropped for want of room.
const ROUND_BYTES: usize = 100_000;

/// Datagram `seq` of the client keyed `key`, `len` bytes long: its
/// sequence number, then the pattern.
fn datagram(key: u64, seq: u64, len: usize) -> Vec<u8> {
    let mut bytes = seq.to_le_bytes().to_vec();
    bytes.extend(pattern(key ^ seq, 8, len - 8));
    bytes
}

/// The echo server: one datagram at a time, taken by a method the seed
/// picks, sent back whole.
async fn echo(seed: u64) -> io::Result<()> {
    let socket = UdpSocket::bind("0.0.0.0:53").await?;
    let mut rng = Rng::new(seed ^ 0x0055_4450);
    let mut buf = vec![0; 65_536];
    loop {
        let (n, from) = match rng.below(6) {
            0..3 => socket.recv_from(&mut buf).await?,
            3 | 4 => {
                // A peek shows the datagram the receive then takes.
                let (peeked, at) = socket.peek_from(&mut buf).await?;
                let first = buf[..peeked].to_vec();
                let (n, from) = socket.recv_from(&mut buf).await?;
                if (n, from) != (peeked, at) || buf[..n] != first[..] {
                    return Err(violation(format!(
                        "udp: peeked {peeked} bytes from {at}, received {n} from {from}"
                    )));
                }
                (n, from)
            }
            _ => {
                let mut owned = Vec::with_capacity(65_536);
                let (n, from) = socket.recv_buf_from(&mut owned).await?;
                buf[..n].copy_from_slice(&owned[..n]);
                (n, from)
            }
        };
        socket.send_to(&buf[..n], from).await?;
    }
}

/// Takes one datagram into a buffer of `size` bytes, by a method the
/// seed picks: what arrived (cut to `size`) and from where (the server,
/// for a connected socket).
async fn receive(
    socket: &UdpSocket,
    size: usize,
    rng: &mut Rng,
    connected: bool,
) -> io::Result<(Vec<u8>, Option<SocketAddr>)> {
    let mut buf = vec![0; size];
    let (n, from) = match (connected, rng.below(3)) {
        (true, 0) => (socket.recv(&mut buf).await?, None),
        (true, 1) => {
            let mut owned = Vec::with_capacity(size);
            let n = socket.recv_buf(&mut owned).await?;
            buf[..n].copy_from_slice(&owned[..n]);
            (n, None)
        }
        (false, 0 | 1) => {
            let (n, from) = socket.recv_from(&mut buf).await?;
            (n, Some(from))
        }
        _ => loop {
            socket.readable().await?;
            match socket.try_recv_from(&mut buf) {
                Ok((n, from)) => break (n, Some(from)),
                Err(err) if err.kind() == io::ErrorKind::WouldBlock => continue,
                Err(err) => return Err(err),
            }
        },
    };
    buf.truncate(n);
    Ok((buf, from))
}

/// A client: `ROUNDS` rounds of datagrams, each echo checked.
async fn client(seed: u64, id: u64, faults: Faults) -> io::Result<()> {
    let name = format!("udp client {id}");
    let mut rng = Rng::new(seed ^ id.wrapping_mul(0x5851_f42d_4c95_7f2d));
    let key = rng.next_u64();
    let socket = UdpSocket::bind("0.0.0.0:0").await?;
    let server: SocketAddr = ioloop::net::lookup_host("udp:53")
        .await?
        .next()
        .expect("an address");
    let connected = rng.chance(0.5);
    if connected {
        socket.connect(server).await?;
    }
    let exact = faults.udp_loss == 0.0
        && faults.udp_duplicate == 0.0
        && faults.udp_reorder == 0.0
        && !faults.partitions
        && !faults.stops;
    // Every datagram sent: its length, and the times its echo came.
    let mut sent: BTreeMap<u64, (usize, u32)> = BTreeMap::new();
    let mut seq = 0;
    for _ in 0..ROUNDS {
        let mut round = Vec::new();
        let mut bytes = 0;
        for _ in 0..rng.range(1..PER_ROUND + 1) {
            let len = match rng.below(20) {
                0 => rng.range(8_000..65_508),
                _ => rng.range(8..1_500),
            } as usize;
            if bytes + len > ROUND_BYTES {
                break;
            }
            bytes += len;
            let data = datagram(key, seq, len);
            let n = match connected && rng.chance(0.5) {
                true => socket.send(&data).await?,
                false => socket.send_to(&data, server).await?,
            };
            if n != len {
                return Err(violation(format!("{name}: sent {n} of {len} bytes")));
            }
            sent.insert(seq, (len, 0));
            round.push(seq);
            seq += 1;
        }
        // The echoes: with no fault exactly these, in order; with faults,
        // whatever comes within a second (and late ones of earlier rounds).
        let mut next = 0;
        loop {
            let want = round.get(next).map(|s| sent[s].0);
            if exact && want.is_none() {
                break;
            }
            // At least the sequence number; one time in four, less than
            // the whole datagram.
            let size = match (want, rng.below(4)) {
                (Some(len), 0) => rng.range(8..len as u64 + 1) as usize,
                _ => 65_536,
            };
            let got = match exact {
                true => receive(&socket, size, &mut rng, connected).await?,
                false => match timeout(
                    Duration::from_secs(1),
                    receive(&socket, size, &mut rng, connected),
                )
                .await
                {
                    Ok(got) => got?,
                    Err(_) => break,
                },
            };
            let (got, from) = got;
            if from.is_some_and(|from| from != server) {
                return Err(violation(format!("{name}: a datagram from {from:?}")));
            }
            let s = u64::from_le_bytes(got[..8].try_into().expect("8 bytes"));
            let Some((len, seen)) = sent.get_mut(&s) else {
                return Err(violation(format!(
                    "{name}: an echo of datagram {s}, never sent"
                )));
            };
            let whole = datagram(key, s, *len);
            if got != whole[..got.len().min(*len)] || got.len() != size.min(*len) {
                return Err(violation(format!(
                    "{name}: datagram {s}: {} bytes into a buffer of {size}, not the {len} sent",
                    got.len()
                )));
            }
            *seen += 1;
            if *seen > 1 && faults.udp_duplicate == 0.0 {
                return Err(violation(format!(
                    "{name}: datagram {s} arrived {seen} times"
                )));
            }
            if exact && Some(&s) != round.get(next) {
                return Err(violation(format!(
                    "{name}: datagram {s} came where {:?} was due",
                    round.get(next)
                )));
            }
            next += 1;
        }
    }
    if exact {
        // Nothing more: no echo twice.
        let mut buf = [0; 8];
        match socket.try_recv_from(&mut buf) {
            Err(err) if err.kind() == io::ErrorKind::WouldBlock => {}
            other => return Err(violation(format!("{name}: after the last echo, {other:?}"))),
        }
    }
    Ok(())
}

/// Adds the UDP echo server and its client to `sim`.
pub fn add(sim: &mut Sim, seed: u64, faults: &Faults) {
    sim.host("udp", move || echo(seed));
    for id in 0..1 {
        let faults = faults.clone();
        sim.client(&format!("udp{id}"), move || client(seed, id, faults));
    }
}
