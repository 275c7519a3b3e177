//! `line_echo` in a simulated world (issue 32): its server (the example's
//! own handler) and a few clients on one thread, over a simulated network
//! that delays, splits, resets and partitions as the seed says, on a
//! virtual clock. Nothing touches a real socket, and the same seed replays
//! the same run: the last line, `trace <hash>`, is the same every time.
//!
//! ```sh
//! cargo run --example sim_echo -- --seed 42
//! cargo run --example sim_echo -- --seed 42 --faults off --clients 5 --lines 20
//! cargo run --example sim_echo -- --seed 42 --rare off  # the library's rare paths not taken
//! cargo run --example sim_echo -- --seeds 1000      # seeds 0..1000, to the first failure
//! ```
//!
//! A failure (a wrong echo, a deadlock, a client still busy at the
//! deadline) prints the seed, how to replay it, and the network's last
//! events, and exits 1. The guide's chapter "Simulation" walks from a
//! failing seed to the fix.

#[path = "../common/args.rs"]
mod args;
mod client;
#[path = "../line_echo/handler.rs"]
#[allow(dead_code, reason = "the simulation uses the server half")]
mod handler;

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use ioloop::net::TcpListener;
use ioloop::sim::{Faults, Sim};

const USAGE: &str = "usage: sim_echo [--seed 1 | --seeds N] [--clients 3] [--lines 8] [--faults on|off] [--rare on|off]";

fn main() {
    let args = args::Args::parse(USAGE);
    let clients: u64 = args.get("clients", 3);
    let lines: usize = args.get("lines", 8);
    let faults = args.get("faults", String::from("on")) == "on";
    let rare = args.get("rare", String::from("on")) == "on";
    let seeds: u64 = args.get("seeds", 0);
    if seeds > 0 {
        // Many seeds, to the first failure.
        let world = |seed| world(seed, clients, lines, (faults, rare), &Rc::default());
        match ioloop::sim::run_seeds(0..seeds, world) {
            Ok(runs) => println!("{runs} seeds passed"),
            Err(failure) => {
                eprintln!("{failure}");
                std::process::exit(1);
            }
        }
        return;
    }
    let seed: u64 = args.get("seed", 1);
    println!(
        "sim_echo: seed {seed}, {clients} clients x {lines} lines, faults {}",
        if faults { "on" } else { "off" }
    );
    let seen = Rc::new(RefCell::new(Vec::new()));
    match world(seed, clients, lines, (faults, rare), &seen).run() {
        Ok(report) => {
            let mut seen = seen.borrow_mut();
            seen.sort_by(|a, b| a.0.cmp(&b.0));
            for (name, stats) in seen.iter() {
                println!(
                    "{name}: {} lines echoed exactly, {} reconnects",
                    stats.echoed, stats.reconnects
                );
            }
            println!("virtual time {:.3} s", report.elapsed.as_secs_f64());
            let rare: Vec<_> = report
                .rare
                .iter()
                .map(|(point, n)| format!("{point} {n}"))
                .collect();
            let rare = if rare.is_empty() {
                "none".to_owned()
            } else {
                rare.join(", ")
            };
            println!("rare paths taken: {rare}");
            println!("trace {:016x}", report.trace_hash);
        }
        Err(failure) => {
            eprintln!("{failure}");
            std::process::exit(1);
        }
    }
}

/// What each client saw, by name.
type Seen = Rc<RefCell<Vec<(String, client::Seen)>>>;

/// The world of one seed: the server and `clients` clients of `lines`
/// lines each, strict when no fault is on; the library's rare paths taken
/// or not.
fn world(seed: u64, clients: u64, lines: usize, (faults, rare): (bool, bool), seen: &Seen) -> Sim {
    let mut sim = Sim::new(seed);
    sim.rare_paths(rare);
    if faults {
        sim.faults(Faults::all());
    }
    sim.host("server", || async {
        let listener = TcpListener::bind("0.0.0.0:7000").await?;
        let config = handler::Config {
            idle_timeout: Duration::from_secs(60),
            slow_poll_threshold: None,
            ..handler::Config::default()
        };
        handler::serve(listener, config, |_, _| {}, std::future::pending()).await
    });
    for n in 0..clients {
        let seen = seen.clone();
        let name = format!("client{n}");
        sim.client(&name.clone(), move || async move {
            let client_seed = seed.wrapping_mul(7).wrapping_add(n);
            let stats = client::line_client("server:7000", lines, client_seed, !faults).await?;
            seen.borrow_mut().push((name, stats));
            Ok(())
        });
    }
    sim
}
