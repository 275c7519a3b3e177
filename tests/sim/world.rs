//! What the simulated world does: names, UDP, refusals, failures it
//! reports, and what it refuses to simulate.

use std::io;
use std::time::Duration;

use ioloop::io::{AsyncReadExt, AsyncWriteExt};
use ioloop::net::{TcpListener, TcpSocket, TcpStream, UdpSocket, lookup_host};
use ioloop::sim::{Faults, Sim, run_seed};

#[test]
fn hosts_are_named_and_numbered_in_the_order_they_are_added() {
    run_seed(1, |seed| {
        let mut sim = Sim::new(seed);
        sim.host("a", || async {
            let listener = TcpListener::bind("0.0.0.0:80").await?;
            // As the kernel says of a socket bound to the unspecified
            // address; a connection it accepts is on the host's own.
            assert_eq!(listener.local_addr()?, "0.0.0.0:80".parse().unwrap());
            let (mut stream, peer) = listener.accept().await?;
            assert_eq!(stream.local_addr()?, "127.0.0.2:80".parse().unwrap());
            assert_eq!(peer.ip().to_string(), "127.0.0.3");
            stream.write_all(b"hi").await?;
            std::future::pending().await
        })
        .client("b", || async {
            let a: Vec<_> = lookup_host("a:80").await?.collect();
            assert_eq!(a, ["127.0.0.2:80".parse().unwrap()]);
            let mut stream = TcpStream::connect("a:80").await?;
            assert_eq!(stream.local_addr()?.ip().to_string(), "127.0.0.3");
            let mut buf = [0; 2];
            stream.read_exact(&mut buf).await?;
            assert_eq!(&buf, b"hi");
            // No such host: an error, not a lookup of the real world's.
            let err = lookup_host("nosuch:1").await.err().expect("no host");
            assert_eq!(err.kind(), io::ErrorKind::NotFound);
            Ok(())
        });
        sim
    })
    .unwrap_or_else(|failure| panic!("{failure}"));
}

#[test]
fn udp_datagrams_come_back_whole_and_a_connect_to_no_listener_is_refused() {
    run_seed(2, |seed| {
        let mut sim = Sim::new(seed);
        sim.host("time", || async {
            let socket = UdpSocket::bind("0.0.0.0:37").await?;
            let mut buf = [0; 64];
            loop {
                let (n, from) = socket.recv_from(&mut buf).await?;
                socket.send_to(&buf[..n], from).await?;
            }
        })
        .client("asker", || async {
            let socket = UdpSocket::bind("0.0.0.0:0").await?;
            socket.send_to(b"what time is it?", "time:37").await?;
            let mut buf = [0; 64];
            let (n, from) = socket.recv_from(&mut buf).await?;
            assert_eq!((&buf[..n], from.port()), (&b"what time is it?"[..], 37));
            let err = TcpStream::connect("time:80").await.expect_err("refused");
            assert_eq!(err.kind(), io::ErrorKind::ConnectionRefused);
            // Options are accepted and kept nowhere; reading one says so.
            socket.set_ttl(9)?;
            assert_eq!(socket.ttl().unwrap_err().kind(), io::ErrorKind::Unsupported);
            let err = TcpSocket::new_v4().expect_err("TcpSocket is not simulated");
            assert_eq!(err.kind(), io::ErrorKind::Unsupported);
            Ok(())
        });
        sim
    })
    .unwrap_or_else(|failure| panic!("{failure}"));
}

#[test]
fn a_client_waiting_on_nothing_is_a_deadlock_reported_with_its_seed() {
    let failure = run_seed(3, |seed| {
        let mut sim = Sim::new(seed);
        sim.host("server", || async {
            let listener = TcpListener::bind("0.0.0.0:1").await?;
            // Accepts and never answers.
            let _kept = listener.accept().await?;
            std::future::pending().await
        })
        .client("client", || async {
            let mut stream = TcpStream::connect("server:1").await?;
            let mut buf = [0; 1];
            stream.read_exact(&mut buf).await?;
            Ok(())
        });
        sim
    })
    .expect_err("a deadlock");
    assert_eq!(failure.seed, 3);
    assert!(failure.what.contains("deadlock"), "{failure}");
    assert!(failure.what.contains("client"), "{failure}");
    let shown = failure.to_string();
    assert!(shown.contains("IOLOOP_SIM_SEED=3"), "{shown}");
    assert!(
        failure.recent.iter().any(|line| line.contains("accept")),
        "{shown}"
    );
}

#[test]
fn a_client_still_busy_at_the_deadline_fails_and_one_that_panics_is_named() {
    let failure = run_seed(4, |seed| {
        let mut sim = Sim::new(seed);
        sim.deadline(Duration::from_secs(10))
            .client("ticker", || async {
                loop {
                    ioloop::time::sleep(Duration::from_secs(1)).await;
                }
            });
        sim
    })
    .expect_err("the deadline");
    assert!(failure.what.contains("deadline"), "{failure}");

    let failure = run_seed(5, |seed| {
        let mut sim = Sim::new(seed);
        sim.client("crasher", || async { panic!("planted") });
        sim
    })
    .expect_err("a panic");
    assert!(
        failure.what.contains("crasher") && failure.what.contains("planted"),
        "{failure}"
    );
}

#[test]
fn partitions_hold_bytes_until_they_heal_and_lose_none() {
    // Faults all on, one connection, many bytes both ways: whatever the
    // partitions and stops did, the bytes arrive whole.
    for seed in 0..20 {
        run_seed(seed, |seed| {
            let mut sim = Sim::new(seed);
            sim.faults(Faults {
                reset: 0.0,
                ..Faults::all()
            });
            sim.host("server", || async {
                let listener = TcpListener::bind("0.0.0.0:9").await?;
                let (stream, _) = listener.accept().await?;
                let (mut read, mut write) = stream.into_split();
                ioloop::io::copy(&mut read, &mut write).await?;
                Ok(())
            })
            .client("client", move || async move {
                let stream = TcpStream::connect("server:9").await?;
                let (mut read, mut write) = stream.into_split();
                let sent: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
                let expected = sent.clone();
                let writer = ioloop::spawn_local(async move {
                    write.write_all(&sent).await?;
                    write.close().await
                });
                let mut back = Vec::new();
                read.read_to_end(&mut back).await?;
                writer.await.unwrap()?;
                assert!(
                    back == expected,
                    "seed {seed}: {} bytes back of 300,000",
                    back.len()
                );
                Ok(())
            });
            sim
        })
        .unwrap_or_else(|failure| panic!("{failure}"));
    }
}

/// A run's reported time is the runtime's clock, not the network's last
/// reading of it: a client that sleeps 5 s, then 55 s with no network
/// event, reported 5 s (the network reads the clock only when polled, a
/// jump behind) until 2026-12-05.
#[test]
fn a_runs_time_is_the_virtual_clocks_even_with_no_network_event() {
    for seed in 0..4 {
        let report = run_seed(seed, |seed| {
            let mut sim = Sim::new(seed);
            sim.client("sleeper", || async {
                ioloop::time::sleep(Duration::from_secs(5)).await;
                ioloop::time::sleep(Duration::from_secs(55)).await;
                Ok(())
            });
            sim
        })
        .unwrap_or_else(|failure| panic!("{failure}"));
        assert_eq!(report.elapsed, Duration::from_secs(60), "seed {seed}");
    }
}

/// A client that keeps the loop busy while the virtual clock stands (a
/// task yielding for ever, a timer that fires at once and is set again)
/// ends the run with a report, seed and task dump, instead of spinning;
/// one that yields as often but lets time move between bursts does not.
#[test]
fn a_livelock_on_the_virtual_clock_is_a_report_not_a_spin() {
    for (name, spin) in [("yield", false), ("sleep 0", true)] {
        let failure = run_seed(5, |seed| {
            let mut sim = Sim::new(seed);
            sim.progress_bound(1_000)
                .client("spinner", move || async move {
                    ioloop::time::sleep(Duration::from_millis(3)).await;
                    loop {
                        if spin {
                            ioloop::time::sleep(Duration::ZERO).await;
                        } else {
                            ioloop::yield_now().await;
                        }
                    }
                });
            sim
        })
        .expect_err("a livelock");
        let shown = failure.to_string();
        assert_eq!(failure.seed, 5, "{name}");
        assert!(failure.what.contains("livelock"), "{name}: {shown}");
        assert!(failure.what.contains("3ms"), "{name}: {shown}");
        assert!(failure.what.contains("spinner"), "{name}: {shown}");
        assert!(failure.what.contains("the tasks:"), "{name}: {shown}");
        assert!(shown.contains("IOLOOP_SIM_SEED=5"), "{name}: {shown}");
    }
    // Bursts of 200 yields, each at an instant of its own: far past the
    // bound in all, never at one instant.
    let report = run_seed(5, |seed| {
        let mut sim = Sim::new(seed);
        sim.progress_bound(1_000).client("bursts", || async {
            for _ in 0..50 {
                for _ in 0..200 {
                    ioloop::yield_now().await;
                }
                ioloop::time::sleep(Duration::from_millis(1)).await;
            }
            Ok(())
        });
        sim
    });
    assert!(report.is_ok(), "{}", report.unwrap_err());
}

/// A world of clients alone, every fault on: the chaos partitions them and
/// has no server to stop. Whatever the chaos draws, it stops no host, and
/// the run (which would fail were the chaos task to panic) succeeds.
#[test]
fn a_world_of_clients_alone_under_every_fault_is_partitioned_and_never_stopped() {
    for seed in 0..crate::seeds().min(100) {
        let mut sim = Sim::new(seed);
        sim.faults(Faults::all());
        for name in ["a", "b", "c"] {
            sim.client(name, || async {
                ioloop::time::sleep(Duration::from_secs(3)).await;
                Ok(())
            });
        }
        let report = sim.run().unwrap_or_else(|failure| panic!("{failure}"));
        assert!(
            !report.recent.iter().any(|line| line.contains(" stop ")),
            "seed {seed}: {:?}",
            report.recent
        );
    }
}

/// Stops and partitions both on: the chaos draws each, so in a few seeds
/// the trace holds a stopped server and a partition.
#[test]
fn with_stops_and_partitions_on_the_chaos_takes_each() {
    let (mut stops, mut partitions) = (0, 0);
    for seed in 0..20 {
        let mut sim = Sim::new(seed);
        sim.faults(Faults {
            stops: true,
            partitions: true,
            ..Faults::default()
        });
        sim.host("server", || async {
            let _listener = TcpListener::bind("0.0.0.0:7").await?;
            std::future::pending().await
        })
        .client("client", || async {
            ioloop::time::sleep(Duration::from_secs(3)).await;
            Ok(())
        });
        let report = sim.run().unwrap_or_else(|failure| panic!("{failure}"));
        stops += usize::from(report.recent.iter().any(|l| l.ends_with(" stop server")));
        partitions += usize::from(report.recent.iter().any(|l| l.contains(" partition ")));
    }
    assert!(
        stops > 0 && partitions > 0,
        "{stops} stops, {partitions} partitions"
    );
}
