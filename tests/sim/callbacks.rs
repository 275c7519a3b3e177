//! The callback layer (`ioloop::callbacks`, the lesson's `Reactor` with
//! its `inbuf`, `outbuf` and `queue_send`) under simulation: the callback
//! version of `line_echo` serves the same strict and fault-riding clients
//! as the async one, so its partial sends, its WRITE-interest dance and its
//! inbuf meet small buffers, split reads, resets and partitions.

#[path = "../../examples/line_echo_callbacks/handler.rs"]
#[allow(dead_code, reason = "the simulation uses the server half")]
mod handler;

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use ioloop::net::TcpListener;
use ioloop::sim::{Faults, Sim, run_seeds};

use crate::clients::line_client;

fn world(seed: u64, faults: Faults, reconnects: Rc<RefCell<u32>>) -> Sim {
    let strict = !crate::worlds::breaks_tcp(&faults);
    let mut sim = crate::worlds::sim(seed, faults);
    sim.host("server", || async {
        let listener = TcpListener::bind("0.0.0.0:7000").await?;
        let config = handler::Config {
            idle_timeout: Duration::from_secs(60),
            ..handler::Config::default()
        };
        handler::serve(listener, config, |_, _| {}).await
    });
    for client in 0..3u64 {
        let reconnects = reconnects.clone();
        let seed = seed.wrapping_mul(13).wrapping_add(client);
        sim.client(&format!("client{client}"), move || async move {
            let seen = line_client("server:7000", 8, seed, strict).await?;
            *reconnects.borrow_mut() += seen.reconnects;
            Ok(())
        });
    }
    sim
}

#[test]
fn the_callback_layer_echoes_every_line_exactly_without_faults() {
    let reconnects = Rc::new(RefCell::new(0));
    run_seeds(0..100, |seed| {
        world(seed, Faults::default(), reconnects.clone())
    })
    .unwrap_or_else(|failure| panic!("{failure}"));
    assert_eq!(*reconnects.borrow(), 0);
}

#[test]
fn the_callback_layer_echoes_every_line_exactly_under_faults() {
    let reconnects = Rc::new(RefCell::new(0));
    run_seeds(0..crate::seeds(), |seed| {
        world(seed, Faults::all(), reconnects.clone())
    })
    .unwrap_or_else(|failure| panic!("{failure}"));
}
