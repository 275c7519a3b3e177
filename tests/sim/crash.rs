//! A host that crashes and restarts (issue 41 item 6, turmoil's
//! `bounce`): every task of it aborted, its sockets closed, what it kept
//! in memory lost, and its async fn called again after a while.
//!
//! The world: a counter server that keeps its count in memory and answers
//! each connection with the count so far, and a client asking twenty
//! times, reconnecting on any trouble. Without a crash the answers are
//! 0, 1, 2, ... exactly; a crash starts the count again at 0.

use std::cell::{Cell, RefCell};
use std::io;
use std::rc::Rc;
use std::time::Duration;

use ioloop::io::{AsyncReadExt, AsyncWriteExt};
use ioloop::net::{TcpListener, TcpStream};
use ioloop::sim::{Faults, Sim, run_seed, run_seeds};
use ioloop::time::{sleep, timeout};

/// Asks the client makes.
const ASKS: usize = 20;

/// What a run saw: each answer, and how many times the server started.
#[derive(Debug, Default)]
struct Seen {
    answers: Vec<u64>,
    starts: u32,
}

/// The counter server: its count is in memory, lost in a crash.
async fn counter(seen: Rc<RefCell<Seen>>) -> io::Result<()> {
    seen.borrow_mut().starts += 1;
    let listener = TcpListener::bind("0.0.0.0:7").await?;
    let count = Rc::new(Cell::new(0u64));
    loop {
        let (mut stream, _) = listener.accept().await?;
        let count = count.clone();
        drop(ioloop::spawn_local(async move {
            let mut ask = [0; 1];
            stream.read_exact(&mut ask).await?;
            let answer = count.replace(count.get() + 1);
            stream.write_all(&answer.to_le_bytes()).await?;
            stream.close().await
        }));
    }
}

/// One ask: connect, send a byte, read the count.
async fn ask() -> io::Result<u64> {
    let mut stream = TcpStream::connect("counter:7").await?;
    stream.write_all(b"?").await?;
    let mut answer = [0; 8];
    stream.read_exact(&mut answer).await?;
    Ok(u64::from_le_bytes(answer))
}

/// The client: [`ASKS`] answers, each retried until one comes.
async fn client(seen: Rc<RefCell<Seen>>) -> io::Result<()> {
    for _ in 0..ASKS {
        let mut tries = 0;
        let answer = loop {
            match timeout(Duration::from_secs(10), ask()).await {
                Ok(Ok(answer)) => break answer,
                _ if tries < 200 => tries += 1,
                failed => return Err(io::Error::other(format!("gave up: {failed:?}"))),
            }
            sleep(Duration::from_millis(20)).await;
        };
        seen.borrow_mut().answers.push(answer);
        sleep(Duration::from_millis(30)).await;
    }
    Ok(())
}

fn world(seed: u64, faults: Faults, seen: &Rc<RefCell<Seen>>) -> Sim {
    *seen.borrow_mut() = Seen::default();
    let mut sim = crate::worlds::sim(seed, faults);
    let (server, asker) = (seen.clone(), seen.clone());
    sim.restartable_host("counter", move || counter(server.clone()))
        .client("client", move || client(asker));
    sim
}

/// Crashes and nothing else: every answer is the one after the last, or
/// 0 from a count started again, and only as many of those as restarts.
#[test]
fn a_crash_loses_the_hosts_state_and_its_restart_serves_again() {
    let crashes = Faults {
        crashes: true,
        ..Faults::default()
    };
    let seen = Rc::new(RefCell::new(Seen::default()));
    let (mut restarted, mut lost) = (0, 0);
    for seed in 0..crate::seeds() {
        let report = run_seed(seed, |seed| world(seed, crashes.clone(), &seen))
            .unwrap_or_else(|failure| panic!("{failure}"));
        // Crashes only: the chaos stops no host.
        assert!(
            !report.recent.iter().any(|line| line.contains(" stop ")),
            "seed {seed}: {:?}",
            report.recent
        );
        let seen = seen.borrow();
        assert_eq!(seen.answers.len(), ASKS, "seed {seed}: {seen:?}");
        let mut zeros = 0;
        for pair in seen.answers.windows(2) {
            match pair[1] {
                0 => zeros += 1,
                next => assert_eq!(next, pair[0] + 1, "seed {seed}: {seen:?}"),
            }
        }
        assert!(zeros < seen.starts, "seed {seed}: {seen:?}");
        restarted += u32::from(seen.starts > 1);
        lost += u32::from(zeros > 0);
    }
    // Crashes happened, and some lost a count the client then saw.
    assert!(
        restarted > 0 && lost > 0,
        "{restarted} runs restarted, {lost} lost a count"
    );
}

#[test]
fn without_crashes_a_restartable_host_runs_once_and_under_every_fault_it_serves() {
    let seen = Rc::new(RefCell::new(Seen::default()));
    let no_crash = Faults {
        crashes: false,
        ..Faults::all()
    };
    for seed in 0..20 {
        world(seed, no_crash.clone(), &seen)
            .run()
            .unwrap_or_else(|failure| panic!("{failure}"));
        assert_eq!(seen.borrow().starts, 1, "seed {seed}");
    }
    // Every fault on, crashes too: the client gets its answers.
    run_seeds(0..crate::seeds(), |seed| world(seed, Faults::all(), &seen))
        .unwrap_or_else(|failure| panic!("{failure}"));
}

#[test]
fn a_crash_and_a_restart_are_in_the_trace() {
    let seen = Rc::new(RefCell::new(Seen::default()));
    let crashes = Faults {
        crashes: true,
        ..Faults::default()
    };
    let report = (0..50)
        .map(|seed| world(seed, crashes.clone(), &seen).run())
        .find_map(|run| {
            let report = run.unwrap_or_else(|failure| panic!("{failure}"));
            report
                .recent
                .iter()
                .any(|line| line.ends_with("restart counter"))
                .then_some(report)
        })
        .expect("a restart in 50 seeds");
    assert!(
        report
            .recent
            .iter()
            .any(|line| line.ends_with("crash counter")),
        "{:?}",
        report.recent
    );
}
