//! `line_echo`'s handler, the example's own code, as a simulated host.

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use ioloop::net::TcpListener;
use ioloop::sim::{Faults, Sim, run_seeds};
use testkit::handler::{Config, serve};

use crate::clients::line_client;
use crate::seeds;

/// A world of one `line_echo` server and three clients sending 8 lines
/// each; the clients' reconnects are added to `reconnects`. With no
/// faults, the clients are strict: a connection that breaks or goes
/// silent fails the run.
pub fn echo_world(seed: u64, faults: Faults, reconnects: Rc<RefCell<u32>>) -> Sim {
    let strict = !crate::worlds::breaks_tcp(&faults);
    let mut sim = crate::worlds::sim(seed, faults);
    sim.host("server", || async {
        let listener = TcpListener::bind("0.0.0.0:7000").await?;
        let config = Config {
            idle_timeout: Duration::from_secs(60),
            slow_poll_threshold: None,
            ..Config::default()
        };
        serve(listener, config, |_, _| {}, std::future::pending()).await
    });
    for client in 0..3u64 {
        let reconnects = reconnects.clone();
        sim.client(&format!("client{client}"), move || async move {
            let seen = line_client(
                "server:7000",
                8,
                seed.wrapping_mul(7).wrapping_add(client),
                strict,
            )
            .await?;
            *reconnects.borrow_mut() += seen.reconnects;
            Ok(())
        });
    }
    sim
}

#[test]
fn every_line_is_echoed_exactly_without_faults_and_with_no_reconnect() {
    let reconnects = Rc::new(RefCell::new(0));
    let runs = run_seeds(0..100, |seed| {
        echo_world(seed, Faults::default(), reconnects.clone())
    })
    .unwrap_or_else(|failure| panic!("{failure}"));
    assert!(runs >= 1);
    assert_eq!(
        *reconnects.borrow(),
        0,
        "a connection broke with no fault injected"
    );
}

#[test]
fn every_line_is_echoed_exactly_under_faults_and_nothing_hangs() {
    let reconnects = Rc::new(RefCell::new(0));
    let runs = run_seeds(0..seeds(), |seed| {
        echo_world(seed, Faults::all(), reconnects.clone())
    })
    .unwrap_or_else(|failure| panic!("{failure}"));
    // The faults were felt: some connections broke and were made again.
    if runs > 20 {
        assert!(
            *reconnects.borrow() > 0,
            "no fault broke anything in {runs} runs"
        );
    }
}
