//! The determinism check (issue 41 item 4): a seed run twice takes the
//! same steps, or the check fails at the first that differs and names it.
//! Each world here leaks a count of its runs (a static, as a `HashMap`'s
//! order or a real clock would) into what it does, on purpose.

use std::sync::atomic::{AtomicU64, Ordering};

use ioloop::io::{AsyncReadExt, AsyncWriteExt};
use ioloop::net::{TcpListener, TcpStream};
use ioloop::sim::{Faults, Sim, check_determinism};

use crate::worlds;

/// An echo server, and a client that sends `len(run)` bytes, where `run`
/// counts the calls of `len`.
fn echo(seed: u64, len: fn() -> usize) -> Sim {
    let mut sim = worlds::sim(seed, Faults::default());
    sim.host("server", || async {
        let listener = TcpListener::bind("0.0.0.0:7").await?;
        let (mut stream, _) = listener.accept().await?;
        let mut buf = [0; 64];
        loop {
            let n = stream.read(&mut buf).await?;
            if n == 0 {
                return Ok(());
            }
            stream.write_all(&buf[..n]).await?;
        }
    })
    .client("client", move || async move {
        let mut stream = TcpStream::connect("server:7").await?;
        let out = vec![b'x'; len()];
        stream.write_all(&out).await?;
        let mut back = vec![0; out.len()];
        stream.read_exact(&mut back).await?;
        assert_eq!(back, out);
        Ok(())
    });
    sim
}

#[test]
fn a_deterministic_world_passes_and_reports_as_a_plain_run() {
    for seed in [0, 1, 2, 42] {
        let checked = check_determinism(seed, |seed| echo(seed, || 5))
            .unwrap_or_else(|failure| panic!("{failure}"));
        let plain = echo(seed, || 5).run().unwrap_or_else(|f| panic!("{f}"));
        assert_eq!(checked, plain, "seed {seed}");
    }
}

#[test]
fn a_world_that_sends_otherwise_the_second_time_fails_at_that_send() {
    static RUNS: AtomicU64 = AtomicU64::new(0);
    let len = || 3 + RUNS.fetch_add(1, Ordering::Relaxed) as usize % 2;
    let failure = check_determinism(3, |seed| echo(seed, len)).expect_err("the runs differ");
    let text = failure.to_string();
    println!("{text}");
    assert!(failure.what.contains("diverge at step"), "{text}");
    // The step named is the client's send, 3 bytes the first time and 4
    // the second; everything before it agreed.
    let (first, second) = failure
        .what
        .split_once(", the second ")
        .unwrap_or_else(|| panic!("{text}"));
    assert!(first.contains("3") && second.contains("4"), "{text}");
    assert_eq!(failure.seed, 3);
    assert!(!failure.recent.is_empty(), "the steps before it: {text}");
    assert!(text.contains("replay it with IOLOOP_SIM_SEED=3"), "{text}");
}

#[test]
fn tasks_run_in_another_order_between_the_same_events_are_a_divergence() {
    static RUNS: AtomicU64 = AtomicU64::new(0);
    let world = |seed| {
        let flip = RUNS.fetch_add(1, Ordering::Relaxed) % 2 == 1;
        let mut sim = echo(seed, || 2);
        // No socket of its own: only the order the loop runs jobs in
        // tells the runs apart, at the next network step.
        sim.client("spawner", move || async move {
            let mut tasks = vec![ioloop::spawn_local(async {}), ioloop::spawn_local(async {})];
            if flip {
                tasks.push(ioloop::spawn_local(async {}));
            }
            for task in tasks {
                task.await.expect("an empty task");
            }
            Ok(())
        });
        sim
    };
    let failure = check_determinism(0, world).expect_err("the schedules differ");
    assert!(
        failure.what.contains("diverge at step") && failure.what.contains("schedule"),
        "{failure}"
    );
}

#[test]
fn outcomes_that_differ_with_every_step_alike_are_a_divergence() {
    static RUNS: AtomicU64 = AtomicU64::new(0);
    let world = |seed| {
        let fail = RUNS.fetch_add(1, Ordering::Relaxed) % 2 == 1;
        let mut sim = Sim::new(seed);
        sim.client("alone", move || async move {
            if fail {
                Err(std::io::Error::other("the second time"))
            } else {
                Ok(())
            }
        });
        sim
    };
    let failure = check_determinism(0, world).expect_err("one passes, one fails");
    assert!(
        failure
            .what
            .contains("all 0 steps agree, but the outcomes differ")
            && failure.what.contains("the first run passed")
            && failure.what.contains("the second failed"),
        "{failure}"
    );
}

#[test]
fn a_failure_the_same_both_times_is_the_worlds_own() {
    let world = |seed| {
        let mut sim = Sim::new(seed);
        sim.client("alone", || async { Err(std::io::Error::other("always")) });
        sim
    };
    let failure = check_determinism(0, world).expect_err("it always fails");
    assert!(failure.what.contains("always"), "{failure}");
    assert!(!failure.what.contains("nondeterminism"), "{failure}");
}

/// Run by [`the_variable_turns_the_check_on_for_run_seeds`] in a process
/// of its own, with and without the variable: a world that sends
/// otherwise each time it is made, under `run_seeds`.
#[test]
#[ignore = "run by the_variable_turns_the_check_on_for_run_seeds"]
fn a_world_unlike_itself_under_run_seeds() {
    static RUNS: AtomicU64 = AtomicU64::new(0);
    let len = || 3 + RUNS.fetch_add(1, Ordering::Relaxed) as usize % 2;
    ioloop::sim::run_seeds(0..1, |seed| echo(seed, len)).unwrap_or_else(|f| panic!("{f}"));
}

#[test]
fn the_variable_turns_the_check_on_for_run_seeds() {
    // The variable is read by the process, so each setting gets one.
    let run = |value: Option<&str>| {
        let mut command = std::process::Command::new(std::env::current_exe().unwrap());
        command.args([
            "--ignored",
            "--exact",
            "determinism::a_world_unlike_itself_under_run_seeds",
        ]);
        command.env_remove(ioloop::sim::DETERMINISM_VAR);
        command.env_remove(ioloop::sim::SEED_VAR);
        if let Some(value) = value {
            command.env(ioloop::sim::DETERMINISM_VAR, value);
        }
        let out = command.output().expect("the test binary runs");
        let text = String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr);
        assert!(
            text.contains("1 passed") || text.contains("1 failed"),
            "{text}"
        );
        (out.status.success(), text)
    };
    // Off (unset, or 0): one run a seed, which passes.
    assert!(run(None).0, "unset");
    assert!(run(Some("0")).0, "0");
    // On: two runs, which differ at the send.
    let (passed, text) = run(Some("1"));
    assert!(!passed && text.contains("diverge at step"), "{text}");
}
