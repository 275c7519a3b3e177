//! `compat::hyper::serve` stopped while requests are in flight, and its
//! grace period running out (bug 3 of issue 40): the server's `JoinSet`
//! of connections aborts them all, and the same seed must replay that,
//! trace for trace.

use std::convert::Infallible;
use std::io;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::Request;
use hyper::body::Incoming;
use hyper::client::conn::http1::handshake;
use hyper::service::service_fn;
use ioloop::compat::hyper::{HyperIo, Server};
use ioloop::net::{TcpListener, TcpStream};
use ioloop::sim::{Faults, Sim};
use ioloop::time::sleep;

/// Clients, each with a request in flight when the server stops.
const CLIENTS: u64 = 8;

/// Answers after an hour: longer than any grace period here.
async fn slow(_req: Request<Incoming>) -> Result<hyper::Response<Full<Bytes>>, Infallible> {
    sleep(Duration::from_secs(3600)).await;
    Ok(hyper::Response::new(Full::new(Bytes::from_static(b"late"))))
}

/// Sends one request and waits for its answer, which never comes: the
/// server drops the connection once its grace period is over.
async fn waits_for_an_answer() -> io::Result<()> {
    let stream = TcpStream::connect("server:80").await?;
    let (mut sender, connection) = handshake(HyperIo::new(stream))
        .await
        .map_err(io::Error::other)?;
    let connection = ioloop::spawn_local(connection);
    let request = Request::get("/")
        .header("host", "server")
        .body(Full::new(Bytes::new()))
        .map_err(io::Error::other)?;
    match sender.send_request(request).await {
        Ok(response) => {
            let body = response.into_body().collect().await;
            Err(io::Error::other(format!("an answer came: {body:?}")))
        }
        // The connection was dropped with the request unanswered.
        Err(_) => {
            let _ = connection.await;
            Ok(())
        }
    }
}

/// A hyper server with a 1-second grace period, stopped 100 ms in, while
/// each of the clients waits for an answer that takes an hour.
fn world(seed: u64) -> Sim {
    let mut sim = crate::worlds::sim(seed, Faults::default());
    sim.host("server", || async {
        let listener = TcpListener::bind("0.0.0.0:80").await?;
        Server::new()
            .grace_period(Duration::from_secs(1))
            .serve(
                listener,
                service_fn(slow),
                sleep(Duration::from_millis(100)),
            )
            .await
    });
    for client in 0..CLIENTS {
        sim.client(&format!("client{client}"), waits_for_an_answer);
    }
    sim
}

#[test]
fn a_hyper_server_stopped_in_its_grace_period_replays_from_its_seed() {
    for seed in [0, 1, 7, 42] {
        let run = || {
            world(seed)
                .run()
                .unwrap_or_else(|failure| panic!("{failure}"))
        };
        let first = run();
        // Every client waited out the grace period.
        assert!(first.elapsed >= Duration::from_secs(1), "{first:?}");
        assert_eq!(run(), first, "seed {seed}");
    }
}
