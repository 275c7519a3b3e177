//! A small seeded random generator (SplitMix64) for the stress tests: the
//! same seed gives the same run, and a failing seed is printed so the run
//! can be repeated (`IOLOOP_STRESS_SEED`).
//!
//! Use with `use testkit::stress_rng;`.

/// SplitMix64: tiny, fast, and good enough to pick behaviours and bytes.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The seed from `IOLOOP_STRESS_SEED`, else one from the clock; printed
    /// either way, so a failure can be replayed.
    pub fn from_env(test: &str) -> Rng {
        let seed = std::env::var("IOLOOP_STRESS_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| {
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(1, |d| d.as_nanos() as u64)
            });
        eprintln!("{test}: IOLOOP_STRESS_SEED={seed}");
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    /// A number in `lo..=hi`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.below(hi - lo + 1)
    }

    /// `true` with probability `percent` / 100.
    pub fn percent(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }

    /// A generator for another task, seeded from this one.
    pub fn fork(&mut self) -> Rng {
        Rng(self.next_u64())
    }
}
