//! `compat::hyper::serve` as a simulated host, with a service that echoes
//! each request's path and body, and hyper's own HTTP/1.1 client over
//! `HyperIo`: many requests on each keep-alive connection, bodies up to
//! 20 KB of random bytes, every response checked byte for byte.

use std::cell::RefCell;
use std::io;
use std::rc::Rc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::client::conn::http1::{SendRequest, handshake};
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use ioloop::compat::hyper::{HyperIo, serve};
use ioloop::net::{TcpListener, TcpStream};
use ioloop::sim::{Faults, Rng, Sim};
use ioloop::task::JoinHandle;

use crate::retry::{Seen, check, exact_under_faults, exact_without_faults, until_done, value};

/// Answers the request's path, a newline, and its body.
async fn echo(req: Request<Incoming>) -> Result<Response<Full<Bytes>>, hyper::Error> {
    let mut answer = format!("{}\n", req.uri().path()).into_bytes();
    answer.extend_from_slice(&req.into_body().collect().await?.to_bytes());
    Ok(Response::new(Full::new(Bytes::from(answer))))
}

/// A client connection: hyper's sender, and the task driving the
/// connection, stopped when this is dropped (a connection given up on).
pub(crate) struct Conn {
    pub(crate) sender: SendRequest<Full<Bytes>>,
    pub(crate) task: JoinHandle<hyper::Result<()>>,
}

impl Drop for Conn {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// A connection's failure, as an error that makes the client reconnect.
fn broken(err: hyper::Error) -> io::Error {
    io::Error::other(err)
}

/// Sends `body` to `path` on `conn` and checks the answer is exactly the
/// path and the body.
async fn exchange(conn: &mut Conn, path: &str, body: &[u8]) -> io::Result<()> {
    conn.sender.ready().await.map_err(broken)?;
    let request = Request::post(path)
        .header("host", "server")
        .body(Full::new(Bytes::copy_from_slice(body)))
        .map_err(io::Error::other)?;
    let response = conn.sender.send_request(request).await.map_err(broken)?;
    if response.status() != StatusCode::OK {
        let status = response.status();
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{status}"),
        ));
    }
    let got = response.into_body().collect().await.map_err(broken)?;
    let mut want = format!("{path}\n").into_bytes();
    want.extend_from_slice(body);
    check("the response body", &got.to_bytes(), &want)
}

/// Sends `requests` requests with random bodies to `server`, one after
/// another on one keep-alive connection, checking each answer; a
/// connection that breaks or goes silent is made again and the request
/// sent again (an echo is idempotent).
pub async fn http_client(
    server: &str,
    client: u64,
    requests: usize,
    seed: u64,
) -> io::Result<Seen> {
    let mut rng = Rng::new(seed);
    let mut seen = Seen::default();
    let mut conn: Option<Conn> = None;
    for i in 0..requests {
        let path = format!("/c{client}/r{i}");
        let body = value(&mut rng);
        let mut pause = Rng::new(rng.next_u64());
        let what = format!("client {client}, request {i}");
        until_done(&what, &mut conn, &mut seen, &mut pause, async |conn, _| {
            if conn.is_none() {
                let stream = TcpStream::connect(server).await?;
                let (sender, connection) = handshake(HyperIo::new(stream)).await.map_err(broken)?;
                let task = ioloop::spawn_local(connection);
                *conn = Some(Conn { sender, task });
            }
            exchange(conn.as_mut().expect("connected"), &path, &body).await
        })
        .await?;
        ioloop::time::sleep(Duration::from_millis(rng.range(0..50))).await;
    }
    Ok(seen)
}

/// A world of one hyper server and three clients sending `requests`
/// requests each; what they saw is added to `seen`.
pub fn hyper_world(seed: u64, faults: Faults, requests: usize, seen: Rc<RefCell<Seen>>) -> Sim {
    let mut sim = crate::worlds::sim(seed, faults);
    sim.host("server", || async {
        let listener = TcpListener::bind("0.0.0.0:80").await?;
        serve(listener, service_fn(echo), std::future::pending::<()>()).await
    });
    for client in 0..3u64 {
        let seen = seen.clone();
        let seed = seed.wrapping_mul(37).wrapping_add(client);
        sim.client(&format!("client{client}"), move || async move {
            let saw = http_client("server:80", client, requests, seed).await?;
            seen.borrow_mut().add(&saw);
            Ok(())
        });
    }
    sim
}

/// The world with 8 requests a client.
fn world(seed: u64, faults: Faults, seen: Rc<RefCell<Seen>>) -> Sim {
    hyper_world(seed, faults, 8, seen)
}

#[test]
fn every_http_response_is_exact_without_faults_and_with_no_reconnect() {
    exact_without_faults(world);
}

#[test]
fn every_http_response_is_exact_under_faults_and_nothing_hangs() {
    exact_under_faults("hyper", world);
}
