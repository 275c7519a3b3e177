//! `--loops N` (examples/common/loops.rs): with two loops, each a runtime
//! on its own thread with its own listener on one port (`SO_REUSEPORT`),
//! 200 connections land on both loops and every one is served; a stop
//! reaches both.

use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, mpsc};
use std::time::Duration;

use handler::{Config, End};
use line_client::Client;
use testkit::{handler, line_client, server, util};

/// Safety net against a hang; never what the test measures.
const SAFETY: Duration = Duration::from_secs(30);
const CONNECTIONS: usize = 200;

#[test]
fn two_loops_share_one_port_and_serve_every_connection() -> io::Result<()> {
    // Connections accepted, per loop; connections that ended well.
    let accepted = Arc::new([AtomicUsize::new(0), AtomicUsize::new(0)]);
    let closed = Arc::new(AtomicUsize::new(0));
    let stop = util::signal();
    let (addr_tx, addr_rx) = mpsc::channel::<SocketAddr>();
    let server = {
        let (accepted, closed, stop) = (accepted.clone(), closed.clone(), stop.clone());
        std::thread::spawn(move || {
            let on_event = move |index: usize, _, end: Option<&End>| match end {
                None => {
                    accepted[index].fetch_add(1, Ordering::SeqCst);
                }
                Some(End::Closed) => {
                    closed.fetch_add(1, Ordering::SeqCst);
                }
                Some(other) => panic!("a connection ended badly: {other:?}"),
            };
            server::serve_loops(
                "127.0.0.1:0".parse().unwrap(),
                2,
                Config::default(),
                SAFETY,
                move || Ok(async move { stop.wait().await }),
                on_event,
                move |addr| addr_tx.send(addr).unwrap(),
            )
        })
    };
    let addr = addr_rx.recv_timeout(SAFETY).expect("both loops listen");
    // Every client a new connection from a new port, all of them open at
    // once, so the kernel's hash has 200 different keys to spread.
    let mut clients = Vec::with_capacity(CONNECTIONS);
    for i in 0..CONNECTIONS {
        let mut client = Client::connect(addr, SAFETY)?;
        client.send(format!("client {i}\n").as_bytes())?;
        assert_eq!(client.line()?, format!("[echo] client {i}"));
        clients.push(client);
    }
    drop(clients);
    util::within(SAFETY, {
        let closed = closed.clone();
        move || {
            while closed.load(Ordering::SeqCst) < CONNECTIONS {
                std::thread::sleep(Duration::from_millis(1));
            }
        }
    });
    stop.set();
    let reports = server.join().expect("the server panicked")?;
    assert_eq!(reports.len(), 2, "one shutdown report per loop");
    assert!(reports.iter().all(|r| r.cancelled_tasks == 0));
    let per_loop = accepted.each_ref().map(|n| n.load(Ordering::SeqCst));
    assert_eq!(per_loop.iter().sum::<usize>(), CONNECTIONS, "{per_loop:?}");
    // Both loops took a share: with 200 connections the chance that the
    // kernel's hash gives every one to the same listener is 2^-199.
    assert!(per_loop.iter().all(|&n| n > 0), "{per_loop:?}");
    println!("connections per loop: {per_loop:?}");
    Ok(())
}
