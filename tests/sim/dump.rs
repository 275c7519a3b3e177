//! The task dump inside a simulation (bug 9 of issue 40): a simulated
//! world runs on a virtual clock, and a dump taken there reads that clock
//! for a timer's time left and a task's age, not the real one.

use std::io;
use std::time::Duration;

use ioloop::sim::{Sim, run_seed};
use ioloop::task::{Dump, TaskDump};
use ioloop::time::sleep;

/// The task of `dump` spawned at `line` of this file.
fn spawned_at(dump: &Dump, line: u32) -> Option<&TaskDump> {
    dump.tasks
        .iter()
        .find(|task| task.location.file() == file!() && task.location.line() == line)
}

/// A client that spawns a task sleeping 60 s and dumps the runtime 5 s
/// later, then 50 s later again: the timer is due in 55 s, then 5 s; the
/// task is 5 s old, then 55 s. Fails with what the dump said otherwise.
async fn dumps_a_sleeper() -> io::Result<()> {
    let start = ioloop::time::Instant::now();
    let sleeper_line = line!() + 1;
    let sleeper = ioloop::spawn(sleep(Duration::from_secs(60)));
    for (moved, left, age) in [(5, "55.000s", 5), (50, "5.000s", 55)] {
        sleep(Duration::from_secs(moved)).await;
        let dump = ioloop::Handle::current().dump();
        let text = dump.to_string();
        let task = spawned_at(&dump, sleeper_line)
            .ok_or_else(|| io::Error::other(format!("no sleeper in the dump: {text}")))?;
        if !text.contains(&format!("a timer due in {left}")) || task.age != Duration::from_secs(age)
        {
            let wanted = format!("due in {left}, age {age}s");
            return Err(io::Error::other(format!("wanted {wanted}: {text}")));
        }
    }
    sleeper.abort();
    match start.elapsed() {
        elapsed if elapsed == Duration::from_secs(55) => Ok(()),
        elapsed => Err(io::Error::other(format!("{elapsed:?} went by, not 55 s"))),
    }
}

#[test]
fn a_dump_in_a_simulation_reads_the_virtual_clock() {
    for seed in [0, 1, 7] {
        run_seed(seed, |seed| {
            let mut sim = Sim::new(seed);
            sim.client("dumper", dumps_a_sleeper);
            sim
        })
        .unwrap_or_else(|failure| panic!("{failure}"));
    }
}
