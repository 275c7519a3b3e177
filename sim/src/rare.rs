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

use ioloop_runtime::seam::{RarePoint, Rng};

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
