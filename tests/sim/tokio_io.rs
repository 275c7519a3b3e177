//! `compat::tokio::TokioIo` in a simulated world: a server echoing
//! tokio-util `LengthDelimitedCodec` frames over `TokioIo<TcpStream>`, and
//! three clients sending frames of random bytes (up to 128 KiB, so reads
//! into tokio's uninitialized `ReadBuf` come short and writes vectored
//! and partial), each answer checked byte for byte; under faults a broken
//! connection is made again and the frame sent again (an echo is
//! idempotent).

use std::cell::RefCell;
use std::io;
use std::rc::Rc;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use ioloop::compat::tokio::TokioIo;
use ioloop::net::{TcpListener, TcpStream};
use ioloop::sim::{Faults, Rng, Sim};
use tokio_util::bytes::Bytes;
use tokio_util::codec::{Framed, LengthDelimitedCodec};

use crate::retry::{Seen, check, exact_under_faults, exact_without_faults, until_done, value};

/// A framed connection over ioloop's socket.
type Conn = Framed<TokioIo<TcpStream>, LengthDelimitedCodec>;

/// Echoes every frame of one connection until it ends or fails.
async fn echo(stream: TcpStream) -> io::Result<()> {
    let mut framed = Framed::new(TokioIo::new(stream), LengthDelimitedCodec::new());
    while let Some(frame) = framed.next().await {
        framed.send(frame?.freeze()).await?;
    }
    Ok(())
}

/// Sends `frames` random frames to `server`, one at a time, each answer
/// checked; reconnects and sends again after a fault.
async fn frame_client(server: &str, client: u64, frames: usize, seed: u64) -> io::Result<Seen> {
    let mut rng = Rng::new(seed);
    let mut seen = Seen::default();
    let mut conn: Option<Conn> = None;
    for i in 0..frames {
        let frame = value(&mut rng);
        let mut pause = Rng::new(rng.next_u64());
        let what = format!("client {client}, frame {i}");
        until_done(&what, &mut conn, &mut seen, &mut pause, async |conn, _| {
            if conn.is_none() {
                let stream = TcpStream::connect(server).await?;
                *conn = Some(Framed::new(
                    TokioIo::new(stream),
                    LengthDelimitedCodec::new(),
                ));
            }
            let framed = conn.as_mut().expect("connected");
            framed.send(Bytes::copy_from_slice(&frame)).await?;
            let answer = framed
                .next()
                .await
                .ok_or_else(|| io::Error::from(io::ErrorKind::UnexpectedEof))??;
            check("the echoed frame", &answer, &frame)
        })
        .await?;
        ioloop::time::sleep(Duration::from_millis(rng.range(0..50))).await;
    }
    Ok(seen)
}

/// One echo server and three clients of 8 frames each.
fn world(seed: u64, faults: Faults, seen: Rc<RefCell<Seen>>) -> Sim {
    let mut sim = crate::worlds::sim(seed, faults);
    sim.host("server", || async {
        let listener = TcpListener::bind("0.0.0.0:80").await?;
        loop {
            let (stream, _) = listener.accept().await?;
            drop(ioloop::spawn_local(echo(stream)));
        }
    });
    for client in 0..3u64 {
        let seen = seen.clone();
        let seed = seed.wrapping_mul(41).wrapping_add(client);
        sim.client(&format!("client{client}"), move || async move {
            let saw = frame_client("server:80", client, 8, seed).await?;
            seen.borrow_mut().add(&saw);
            Ok(())
        });
    }
    sim
}

#[test]
fn every_frame_is_echoed_exactly_without_faults_and_with_no_reconnect() {
    exact_without_faults(world);
}

#[test]
fn every_frame_is_echoed_exactly_under_faults_and_nothing_hangs() {
    exact_under_faults("tokio_io", world);
}
