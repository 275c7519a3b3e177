//! Running seeds: [`run_seeds`] over a range, [`run_seed`] for one, the
//! variable that replays a failing seed ([`SEED_VAR`]); and determinism,
//! checked rather than assumed: one seed run twice must take
//! the same steps. A step is a line of the network's trace (`<virtual ns>
//! <what>`) with the hash of the order the loop ran its jobs in up to it,
//! so tasks run in another order between two events diverge at the
//! second, and a `HashMap`'s order, a real clock read or a thread's
//! timing that leaks into a world shows as the first step that differs.

use std::ops::Range;

use super::harness::{Failure, Report, SEED_VAR, Sim};
use super::network::Step;

/// Runs `make(seed)` for each seed in `seeds` (or only the one in the
/// [`SEED_VAR`] environment variable, if it is set, to replay it), and
/// returns how many ran, or the first failure. With [`DETERMINISM_VAR`]
/// set, each seed runs twice, and two runs that diverge fail
/// ([`check_determinism`]).
///
/// # Errors
///
/// The first run's [`Failure`]; an unreadable [`SEED_VAR`] is one too.
pub fn run_seeds(seeds: Range<u64>, mut make: impl FnMut(u64) -> Sim) -> Result<u64, Failure> {
    if let Ok(var) = std::env::var(SEED_VAR) {
        let seed = var.trim().parse().map_err(|err| Failure {
            seed: 0,
            what: format!("{SEED_VAR}={var:?}: {err}"),
            world: String::new(),
            recent: Vec::new(),
            trace_hash: 0,
        })?;
        run_seed(seed, &mut make)?;
        return Ok(1);
    }
    let count = seeds.end.saturating_sub(seeds.start);
    for seed in seeds {
        run_seed(seed, &mut make)?;
    }
    Ok(count)
}

/// The variable that makes [`run_seeds`] run every seed
/// twice and fail at the first divergence ([`check_determinism`]); any
/// value but empty or `0` turns it on. CI runs the suite with it.
pub const DETERMINISM_VAR: &str = "IOLOOP_SIM_DETERMINISM";

/// Whether [`DETERMINISM_VAR`] asks for the check.
fn checked() -> bool {
    asks(std::env::var_os(DETERMINISM_VAR))
}

/// Whether a value of [`DETERMINISM_VAR`] turns the check on.
fn asks(value: Option<std::ffi::OsString>) -> bool {
    value.is_some_and(|v| !v.is_empty() && v != "0")
}

/// Runs one seed: `make(seed).run()`, or with [`DETERMINISM_VAR`] set,
/// [`check_determinism`]. For a test that wants the run's [`Report`] (or
/// its [`Failure`]) and the check CI runs the suite with.
///
/// # Errors
///
/// The run's [`Failure`], or the check's.
pub fn run_seed(seed: u64, make: impl FnMut(u64) -> Sim) -> Result<Report, Failure> {
    if checked() {
        check_determinism(seed, make)
    } else {
        let mut make = make;
        make(seed).run()
    }
}

/// Runs `make(seed)` twice and compares the runs step by step; returns
/// the first run's outcome if they agree.
///
/// # Errors
///
/// A [`Failure`] naming the first step where the runs diverge (its number,
/// both runs' lines there, and the first run's steps before it), or, if
/// every step agrees, the outcomes that differ; else the first run's own
/// failure, if it failed.
pub fn check_determinism(seed: u64, mut make: impl FnMut(u64) -> Sim) -> Result<Report, Failure> {
    let mut run = || {
        let mut sim = make(seed);
        sim.record = true;
        let outcome = sim.run();
        let steps = std::mem::take(&mut sim.steps);
        (sim, outcome, steps)
    };
    let (sim, first, steps) = run();
    let (_, second, again) = run();
    let what = match diverge(&steps, &again) {
        Some(at) => {
            let show = |steps: &[Step]| match steps.get(at) {
                Some(step) => format!("`{}` (schedule {:016x})", step.line, step.schedule),
                None => "nothing: it had ended".to_owned(),
            };
            format!(
                "nondeterminism: the two runs of this seed diverge at step {} \
                 (of {} and {}): the first run took {}, the second {} \
                 (check it again with {DETERMINISM_VAR}=1)",
                at + 1,
                steps.len(),
                again.len(),
                show(&steps),
                show(&again)
            )
        }
        None => match outcomes_differ(&first, &second) {
            Some(what) => format!(
                "nondeterminism: all {} steps agree, but the outcomes differ: {what}",
                steps.len()
            ),
            None => return first,
        },
    };
    let at = diverge(&steps, &again).unwrap_or(steps.len());
    let recent = steps[at.saturating_sub(40)..at.min(steps.len())]
        .iter()
        .map(|step| step.line.clone())
        .collect();
    Err(sim.failure(what, recent, trace_hash(&first)))
}

/// The index of the first step where two runs differ, if any (one run
/// ending before the other is a difference at its end).
fn diverge(a: &[Step], b: &[Step]) -> Option<usize> {
    a.iter()
        .zip(b)
        .position(|(x, y)| x != y)
        .or_else(|| (a.len() != b.len()).then(|| a.len().min(b.len())))
}

/// How two outcomes whose steps agree differ, if they do: one passed and
/// one failed, or their trace hashes (which end with the order of the
/// jobs run after the last step) differ.
fn outcomes_differ(a: &Result<Report, Failure>, b: &Result<Report, Failure>) -> Option<String> {
    let said = |outcome: &Result<Report, Failure>| match outcome {
        Ok(report) => format!("passed with trace {:016x}", report.trace_hash),
        Err(failure) => format!(
            "failed with trace {:016x}: {}",
            failure.trace_hash,
            failure.what.lines().next().unwrap_or_default()
        ),
    };
    let same = match (a, b) {
        (Ok(a), Ok(b)) => a.trace_hash == b.trace_hash,
        (Err(a), Err(b)) => a.trace_hash == b.trace_hash,
        _ => false,
    };
    (!same).then(|| format!("the first run {}, the second {}", said(a), said(b)))
}

/// A run's trace hash, passed or failed.
fn trace_hash(outcome: &Result<Report, Failure>) -> u64 {
    match outcome {
        Ok(report) => report.trace_hash,
        Err(failure) => failure.trace_hash,
    }
}

#[cfg(test)]
mod tests {
    use super::{Step, asks, diverge};

    fn steps(lines: &[&str]) -> Vec<Step> {
        lines
            .iter()
            .map(|line| Step {
                line: (*line).to_owned(),
                schedule: 0,
            })
            .collect()
    }

    #[test]
    fn any_value_but_none_empty_or_0_asks_for_the_check() {
        let value = |v: &str| Some(v.into());
        assert!(!asks(None));
        assert!(!asks(value("")));
        assert!(!asks(value("0")));
        assert!(asks(value("1")));
        assert!(asks(value("yes")));
        assert!(asks(value("00")));
    }

    #[test]
    fn the_first_differing_step_is_named() {
        let a = steps(&["0 a", "1 b", "2 c"]);
        assert_eq!(diverge(&a, &a), None);
        assert_eq!(diverge(&a, &steps(&["0 a", "1 x", "2 c"])), Some(1));
        assert_eq!(diverge(&a, &steps(&["9 a", "1 b", "2 c"])), Some(0));
        // One run ends first: they differ where it ended.
        assert_eq!(diverge(&a, &steps(&["0 a", "1 b"])), Some(2));
        assert_eq!(diverge(&steps(&["0 a"]), &a), Some(1));
        assert_eq!(diverge(&[], &[]), None);
        // The same line with the jobs run in another order before it.
        let mut b = a.clone();
        b[2].schedule = 1;
        assert_eq!(diverge(&a, &b), Some(2));
    }
}
