//! `compat::hyper`'s graceful stop under faults, with requests in flight
//! (issue 41, item 8): the server is stopped at a seeded moment while
//! clients send requests whose handlers take up to half a second, well
//! within the grace period. Every answer a client gets is exact; every
//! client learns the server stopped (no hang); the server returns within
//! its grace period; and, with no fault, every request whose handler
//! finished was answered: a graceful stop loses no response.

use std::cell::{Cell, RefCell};
use std::collections::BTreeSet;
use std::io;
use std::rc::Rc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::client::conn::http1::handshake;
use hyper::service::service_fn;
use hyper::{Request, Response};
use ioloop::compat::hyper::{HyperIo, Server};
use ioloop::net::{TcpListener, TcpStream};
use ioloop::sim::{Faults, Rng, Sim, run_seeds};
use ioloop::time::{Instant, sleep, timeout};

use crate::hyper::Conn;
use crate::retry::{check, value};
use crate::worlds::{breaks_tcp, sim};

/// The grace period: longer than any handler takes.
const GRACE: Duration = Duration::from_secs(3);
/// Clients sending requests.
const CLIENTS: u64 = 3;

/// What the server and the clients record (one thread: `RefCell`s).
#[derive(Default)]
struct Board {
    /// Requests (paths) whose handler finished: their answer was made.
    finished: RefCell<BTreeSet<String>>,
    /// Requests a client got the exact answer to.
    answered: RefCell<BTreeSet<String>>,
    /// When the stop began.
    stopped_at: Cell<Option<Instant>>,
    /// When `serve` returned.
    returned_at: Cell<Option<Instant>>,
    /// Clients that are done.
    done: Cell<u64>,
    /// Answers that came after the stop began, over every run: requests
    /// the stop met in flight (shared by the runs of a test).
    late: Rc<Cell<u64>>,
}

/// Answers the path, a newline and the body, after a pause the path's
/// hash picks (up to 500 ms).
async fn handler(
    board: Rc<Board>,
    req: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, hyper::Error> {
    let path = req.uri().path().to_owned();
    let mut answer = format!("{path}\n").into_bytes();
    answer.extend_from_slice(&req.into_body().collect().await?.to_bytes());
    let pause = path
        .bytes()
        .fold(0u64, |h, b| h.wrapping_mul(31) + u64::from(b))
        % 500;
    sleep(Duration::from_millis(pause)).await;
    board.finished.borrow_mut().insert(path);
    Ok(Response::new(Full::new(Bytes::from(answer))))
}

/// The server: stopped after `stop_after`, with `GRACE` to finish.
async fn server(board: Rc<Board>, stop_after: Duration) -> io::Result<()> {
    let listener = TcpListener::bind("0.0.0.0:80").await?;
    let stop = {
        let board = board.clone();
        async move {
            sleep(stop_after).await;
            board.stopped_at.set(Some(Instant::now()));
        }
    };
    let service = {
        let board = board.clone();
        service_fn(move |req| handler(board.clone(), req))
    };
    let served = Server::new()
        .grace_period(GRACE)
        .serve(listener, service, stop)
        .await;
    board.returned_at.set(Some(Instant::now()));
    served?;
    // Stay up, listening no more: the world goes on until its clients end.
    std::future::pending().await
}

/// One request on `conn` (made if there is none): `Ok` with the exact
/// answer, `InvalidData` for a wrong one, another error for a break.
async fn exchange(conn: &mut Option<Conn>, path: &str, body: &[u8]) -> io::Result<()> {
    if conn.is_none() {
        let stream = TcpStream::connect("server:80").await?;
        let (sender, connection) = handshake(HyperIo::new(stream))
            .await
            .map_err(io::Error::other)?;
        let task = ioloop::spawn_local(connection);
        *conn = Some(Conn { sender, task });
    }
    let conn = conn.as_mut().expect("connected");
    conn.sender.ready().await.map_err(io::Error::other)?;
    let request = Request::post(path)
        .header("host", "server")
        .body(Full::new(Bytes::copy_from_slice(body)))
        .map_err(io::Error::other)?;
    let response = conn
        .sender
        .send_request(request)
        .await
        .map_err(io::Error::other)?;
    let status = response.status();
    let got = response
        .into_body()
        .collect()
        .await
        .map_err(io::Error::other)?;
    let mut want = format!("{path}\n").into_bytes();
    want.extend_from_slice(body);
    if !status.is_success() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{path}: {status}"),
        ));
    }
    check(path, &got.to_bytes(), &want)
}

/// Sends requests until the server is gone: each attempt a new path (so
/// `finished` names attempts, not requests), a break before the stop made
/// good by a new connection when faults may break one, and a failure
/// otherwise.
async fn client(board: Rc<Board>, id: u64, strict: bool, seed: u64) -> io::Result<()> {
    let mut rng = Rng::new(seed);
    let mut conn = None;
    for attempt in 0.. {
        let path = format!("/c{id}/a{attempt}");
        let body = value(&mut rng);
        match timeout(Duration::from_secs(10), exchange(&mut conn, &path, &body)).await {
            Err(_) => return Err(io::Error::other(format!("{path}: silent for 10 s, a hang"))),
            Ok(Ok(())) => {
                if board.stopped_at.get().is_some() {
                    board.late.set(board.late.get() + 1);
                }
                board.answered.borrow_mut().insert(path);
            }
            Ok(Err(err)) if err.kind() == io::ErrorKind::InvalidData => return Err(err),
            Ok(Err(_)) if board.stopped_at.get().is_some() => break,
            Ok(Err(err)) if strict => {
                return Err(io::Error::other(format!(
                    "{path}: {err}, with no fault and no stop"
                )));
            }
            Ok(Err(_)) => {
                conn = None;
                sleep(Duration::from_millis(rng.range(1..200))).await;
            }
        }
        // Now and then a new connection: a stop then finds idle ones, busy
        // ones and ones being made.
        if rng.chance(0.2) {
            conn = None;
        }
        sleep(Duration::from_millis(rng.range(0..100))).await;
    }
    board.done.set(board.done.get() + 1);
    Ok(())
}

/// Once every client is done: the server returned within its grace
/// period (and a tick), and, with no fault, every finished request was
/// answered.
async fn audit(board: Rc<Board>, strict: bool) -> io::Result<()> {
    while board.done.get() < CLIENTS {
        sleep(Duration::from_millis(100)).await;
    }
    let stopped = board
        .stopped_at
        .get()
        .expect("the clients end after the stop");
    let mut waited = Duration::ZERO;
    while board.returned_at.get().is_none() && waited < Duration::from_secs(60) {
        sleep(Duration::from_millis(100)).await;
        waited += Duration::from_millis(100);
    }
    let Some(returned) = board.returned_at.get() else {
        return Err(io::Error::other(
            "serve did not return a minute after its stop",
        ));
    };
    if strict && returned - stopped > GRACE + Duration::from_millis(1) {
        return Err(io::Error::other(format!(
            "serve returned {:?} after its stop, past its grace period",
            returned - stopped
        )));
    }
    if strict {
        let finished = board.finished.borrow();
        let answered = board.answered.borrow();
        if let Some(lost) = finished.difference(&answered).next() {
            return Err(io::Error::other(format!(
                "{lost}: its handler finished, its answer never came ({} finished, {} answered)",
                finished.len(),
                answered.len()
            )));
        }
    }
    Ok(())
}

fn world(seed: u64, faults: Faults, late: Rc<Cell<u64>>) -> Sim {
    let strict = !breaks_tcp(&faults);
    let board = Rc::new(Board {
        late,
        ..Board::default()
    });
    let stop_after = Duration::from_millis(Rng::new(seed).range(0..1_500));
    let mut sim = sim(seed, faults);
    let b = board.clone();
    sim.host("server", move || server(b, stop_after));
    for id in 0..CLIENTS {
        let b = board.clone();
        let seed = seed.wrapping_mul(43).wrapping_add(id);
        sim.client(&format!("client{id}"), move || client(b, id, strict, seed));
    }
    sim.client("auditor", move || audit(board, strict));
    sim
}

/// Runs the world over the seeds with `faults`; the stop met requests
/// in flight in some runs.
fn stops_gracefully(faults: Faults) {
    let late = Rc::new(Cell::new(0));
    let runs = run_seeds(0..crate::seeds(), |seed| {
        world(seed, faults.clone(), late.clone())
    })
    .unwrap_or_else(|failure| panic!("{failure}"));
    if runs > 20 {
        assert!(late.get() > 0, "no request was in flight at a stop");
    }
}

#[test]
fn a_graceful_hyper_stop_loses_no_finished_answer_without_faults() {
    stops_gracefully(Faults::default());
}

#[test]
fn a_graceful_hyper_stop_under_faults_answers_exactly_and_nothing_hangs() {
    stops_gracefully(Faults::all());
}
