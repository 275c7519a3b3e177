//! Rare paths on purpose (issue 41, a BUGGIFY of our own): the points where
//! a simulation makes the library take its unlikely branches, at seeded
//! random, and counts each time it does.
//!
//! Most are answers the world gives as a kernel may (`world.rs`): a short
//! read or write, `WouldBlock` just after a readiness event, an event no
//! state justifies, `accept`'s `EMFILE` and `ECONNABORTED`, a `connect`
//! refused. Two are the core's (`ioloop_runtime::seam::RarePoint`), asked
//! through the hook this thread's simulation sets. As FoundationDB's
//! BUGGIFY does, each point is enabled or not per run (half the runs), and
//! an enabled point fires at its own rate; every draw comes from the run's
//! own `Rng`, forked after the world's, so a run with rare paths off is the
//! run it was before they existed.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::io::Write;

use ioloop_runtime::seam::RarePoint;

use crate::rng::Rng;

/// A rare path. Its name, rate and kind are in [`TABLE`], at its index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Point {
    RecvShort,
    SendShort,
    RecvWouldBlock,
    SendWouldBlock,
    AcceptWouldBlock,
    SpuriousReadiness,
    SpuriousWake,
    AcceptEmfile,
    AcceptAborted,
    ConnectRefused,
    WaitersEvict,
    TimersReorder,
}

impl From<RarePoint> for Point {
    fn from(point: RarePoint) -> Point {
        match point {
            RarePoint::Evict => Point::WaitersEvict,
            RarePoint::TimerOrder => Point::TimersReorder,
        }
    }
}

/// Each point's name, its rate when enabled (the chance, each time it is
/// asked, that it fires), and whether a correct program can tell it from a
/// kernel's normal behaviour (`true`: fault-like, on only with faults).
const TABLE: [(&str, f64, bool); 12] = [
    ("recv_short", 0.2, false),
    ("send_short", 0.2, false),
    ("recv_would_block", 0.05, false),
    ("send_would_block", 0.05, false),
    ("accept_would_block", 0.1, false),
    ("spurious_readiness", 0.02, false),
    ("spurious_wake", 0.02, false),
    ("accept_emfile", 0.2, false),
    ("accept_aborted", 0.2, false),
    ("connect_refused", 0.05, true),
    ("waiters_evict", 0.2, false),
    ("timers_reorder", 0.5, false),
];

/// The names of the rare paths a simulation may take, in the order the
/// coverage lines list them (see [`Sim::rare_paths`](crate::Sim::rare_paths)).
pub const RARE_POINTS: [&str; 12] = {
    let mut names = [""; 12];
    let mut i = 0;
    while i < 12 {
        names[i] = TABLE[i].0;
        i += 1;
    }
    names
};

/// The index of the point named `name`.
pub(crate) fn index(name: &str) -> Option<usize> {
    RARE_POINTS.iter().position(|&point| point == name)
}

/// A run's rare paths: which are enabled, at what rate, and how often each
/// fired.
pub(crate) struct Rare {
    rng: Rng,
    rates: [Option<f64>; 12],
    fired: [u64; 12],
}

impl Rare {
    /// Draws which points `rng` enables: the invisible ones if `invisible`,
    /// the fault-like ones if `faults`; then `forced` sets a point's rate
    /// whatever was drawn.
    pub(crate) fn new(
        mut rng: Rng,
        invisible: bool,
        faults: bool,
        forced: &[(usize, f64)],
    ) -> Self {
        let mut rates = [None; 12];
        for (rate, &(_, chance, fault)) in rates.iter_mut().zip(&TABLE) {
            let allowed = if fault { faults } else { invisible };
            *rate = (rng.chance(0.5) && allowed).then_some(chance);
        }
        for &(i, rate) in forced {
            rates[i] = Some(rate);
        }
        Rare {
            rng,
            rates,
            fired: [0; 12],
        }
    }

    /// Whether `point` fires now (counted if it does).
    pub(crate) fn fire(&mut self, point: Point) -> bool {
        let i = point as usize;
        let fires = self.rates[i].is_some_and(|rate| self.rng.chance(rate));
        self.fired[i] += u64::from(fires);
        fires
    }

    /// If `point` fires, a length cut short below `most`: 1 to `most - 1`.
    pub(crate) fn short(&mut self, point: Point, most: usize) -> Option<usize> {
        (most > 1 && self.fire(point)).then(|| 1 + self.below(most - 1))
    }

    /// A number below `n`, drawn from the rare paths' own chance.
    pub(crate) fn below(&mut self, n: usize) -> usize {
        self.rng.below(n as u64) as usize
    }

    /// The points that fired, with how often.
    pub(crate) fn fired(&self) -> BTreeMap<&'static str, u64> {
        let fired = RARE_POINTS.iter().zip(self.fired);
        fired
            .filter(|&(_, n)| n > 0)
            .map(|(&name, n)| (name, n))
            .collect()
    }

    /// The run in a coverage line: each point's count, `-` if disabled.
    pub(crate) fn line(&self, seed: u64) -> String {
        let mut line = format!("seed={seed}");
        for ((name, rate), fired) in RARE_POINTS.iter().zip(self.rates).zip(self.fired) {
            match rate {
                Some(_) => line.push_str(&format!(" {name}={fired}")),
                None => line.push_str(&format!(" {name}=-")),
            }
        }
        line.push('\n');
        line
    }
}

/// Appends `line` to the file at `path`, if there is one (the coverage
/// file, `COVERAGE_VAR`): one `write` with `O_APPEND`, so the lines of runs
/// on parallel threads (the test harness's) do not mix.
pub(crate) fn append(path: Option<&OsStr>, line: &str) {
    let Some(path) = path else { return };
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path);
    if let Err(err) = file.and_then(|mut file| file.write_all(line.as_bytes())) {
        log::warn!("the coverage file {}: {err}", path.display());
    }
}

#[cfg(test)]
mod tests {
    use ioloop_runtime::seam::RarePoint;

    use crate::rng::Rng;

    use super::{Point, RARE_POINTS, Rare, append, index};

    #[test]
    fn points_are_named_and_found_by_name() {
        assert_eq!(index("recv_short"), Some(0));
        assert_eq!(index("timers_reorder"), Some(11));
        assert_eq!(index("nosuch"), None);
        assert_eq!(
            RARE_POINTS[Point::ConnectRefused as usize],
            "connect_refused"
        );
        assert_eq!(Point::from(RarePoint::Evict), Point::WaitersEvict);
        assert_eq!(Point::from(RarePoint::TimerOrder), Point::TimersReorder);
    }

    #[test]
    fn a_run_counts_what_fired_and_says_it_in_a_line() {
        let mut rare = Rare::new(Rng::new(0), false, false, &[(1, 1.0), (2, 0.0)]);
        for _ in 0..3 {
            assert!(rare.fire(Point::SendShort));
            assert!(!rare.fire(Point::RecvWouldBlock), "rate 0");
            assert!(!rare.fire(Point::RecvShort), "not enabled");
        }
        assert_eq!(
            rare.fired().into_iter().collect::<Vec<_>>(),
            [("send_short", 3)]
        );
        let line = rare.line(7);
        let mut want = "seed=7".to_owned();
        for (i, name) in RARE_POINTS.iter().enumerate() {
            let count = ["-", "3", "0"].get(i).copied().unwrap_or("-");
            want.push_str(&format!(" {name}={count}"));
        }
        assert_eq!(line, want + "\n");
    }

    #[test]
    fn a_short_length_is_1_to_most_minus_1() {
        let mut rare = Rare::new(Rng::new(1), false, false, &[(0, 1.0)]);
        assert_eq!(rare.short(Point::RecvShort, 0), None);
        assert_eq!(rare.short(Point::RecvShort, 1), None);
        assert_eq!(rare.short(Point::RecvShort, 2), Some(1));
        let mut seen = [0; 5];
        for _ in 0..200 {
            seen[rare.short(Point::RecvShort, 5).expect("rate 1")] += 1;
        }
        assert_eq!(seen[0], 0);
        assert!(seen[1..].iter().all(|&n| n > 0), "{seen:?}");
        assert!(rare.below(3) < 3);
    }

    #[test]
    fn the_seed_enables_about_half_and_the_fault_like_only_with_faults() {
        let mut on = [0; 12];
        for seed in 0..100 {
            let invisible = Rare::new(Rng::new(seed), true, false, &[]);
            let faults = Rare::new(Rng::new(seed), false, true, &[]);
            for (i, rate) in invisible.rates.iter().enumerate() {
                on[i] += u32::from(rate.is_some());
                // One draw per point decides: the kinds allowed filter it.
                let both = Rare::new(Rng::new(seed), true, true, &[]).rates[i].is_some();
                let fault = i == Point::ConnectRefused as usize;
                assert_eq!(faults.rates[i].is_some(), fault && both);
                assert_eq!(rate.is_some(), !fault && both);
            }
        }
        for (i, n) in on.iter().enumerate() {
            let fault = i == Point::ConnectRefused as usize;
            assert!(
                if fault { *n == 0 } else { (30..70).contains(n) },
                "{i}: {n}"
            );
        }
    }

    #[test]
    fn lines_are_appended_whole() {
        let path = std::env::temp_dir().join(format!("ioloop-rare-{}.txt", std::process::id()));
        let _ = std::fs::remove_file(&path);
        append(None, "nowhere\n");
        append(Some(path.as_os_str()), "a\n");
        append(Some(path.as_os_str()), "b\n");
        assert_eq!(std::fs::read_to_string(&path).expect("the file"), "a\nb\n");
        std::fs::remove_file(&path).expect("removed");
    }
}
