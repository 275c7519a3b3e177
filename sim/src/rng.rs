//! `Rng`: a seeded runtime's and a simulation's one source of chance;
//! `TraceHash`: the hash their traces are kept in.

use std::ops::Range;

/// A small, seeded pseudo-random generator (SplitMix64): the same seed
/// gives the same numbers on every machine and in every version of
/// ioloop, which is what replaying a simulation from its seed rests on.
/// Not for cryptography.
///
/// A seeded runtime draws its scheduling choices from one (see
/// [`Seed::seed`](crate::Seed::seed)); a simulation's network draws
/// latencies and faults from another, forked from the same seed, so a
/// change to one does not reshuffle the other.
///
/// # Examples
///
/// ```
/// use ioloop_sim::Rng;
///
/// let mut a = Rng::new(7);
/// let mut b = Rng::new(7);
/// assert_eq!(a.next_u64(), b.next_u64());
/// assert!(a.below(10) < 10);
/// ```
#[derive(Clone, Debug)]
pub struct Rng {
    state: u64,
}

impl Rng {
    /// A generator whose numbers are a function of `seed` alone.
    pub fn new(seed: u64) -> Self {
        Rng { state: seed }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n`; 0 if `n` is 0.
    pub fn below(&mut self, n: u64) -> u64 {
        // The high half of a 128-bit product: no division, and a bias of
        // at most n / 2^64, which no simulation can see.
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }

    /// A number in `range`; its start if the range is empty.
    pub fn range(&mut self, range: Range<u64>) -> u64 {
        range.start + self.below(range.end.saturating_sub(range.start))
    }

    /// True with probability `p` (0 never, 1 always).
    pub fn chance(&mut self, p: f64) -> bool {
        // 53 bits: every value an f64 in [0, 1) can hold at that spacing.
        p > 0.0 && ((self.next_u64() >> 11) as f64) < p * (1u64 << 53) as f64
    }

    /// A new generator, seeded from this one: an independent stream for
    /// one part of a simulation.
    pub fn fork(&mut self) -> Rng {
        Rng::new(self.next_u64())
    }

    /// Shuffles `items` in place (Fisher–Yates).
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.below(i as u64 + 1) as usize;
            items.swap(i, j);
        }
    }
}

/// A 64-bit FNV-1a hash, fed piece by piece: how a simulation hashes what
/// it did (the order a seeded loop ran its jobs in, the network's events),
/// the same on every machine and in every version.
///
/// ```
/// use ioloop_sim::TraceHash;
///
/// let mut a = TraceHash::new();
/// a.add(b"connect");
/// let mut b = TraceHash::new();
/// b.add(b"connect");
/// assert_eq!(a.get(), b.get());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceHash(u64);

impl TraceHash {
    /// The hash of nothing.
    pub const fn new() -> Self {
        TraceHash(0xcbf2_9ce4_8422_2325)
    }

    /// Folds `bytes` in.
    pub fn add(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.0 = (self.0 ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3);
        }
    }

    /// The hash so far.
    pub fn get(self) -> u64 {
        self.0
    }
}

impl Default for TraceHash {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::Rng;

    #[test]
    fn the_same_seed_gives_the_same_numbers_and_others_differ() {
        let take = |seed| {
            let mut rng = Rng::new(seed);
            (0..8).map(|_| rng.next_u64()).collect::<Vec<_>>()
        };
        assert_eq!(take(1), take(1));
        assert_ne!(take(1), take(2));
        // Pinned: a replay must draw the same numbers in every version.
        assert_eq!(Rng::new(0).next_u64(), 0xe220_a839_7b1d_cdaf);
    }

    #[test]
    fn below_range_and_chance_stay_in_bounds_and_spread() {
        let mut rng = Rng::new(42);
        let mut seen = [0u32; 10];
        for _ in 0..10_000 {
            seen[rng.below(10) as usize] += 1;
        }
        assert!(seen.iter().all(|&n| (800..1200).contains(&n)), "{seen:?}");
        assert_eq!(rng.below(0), 0);
        assert!((5..9).contains(&rng.range(5..9)));
        assert_eq!(rng.range(3..3), 3);
        assert!(!rng.chance(0.0));
        assert!(rng.chance(1.0));
        let hits = (0..10_000).filter(|_| rng.chance(0.25)).count();
        assert!((2_200..2_800).contains(&hits), "{hits}");
    }

    #[test]
    fn shuffle_is_a_permutation_and_forks_are_independent() {
        let mut rng = Rng::new(9);
        let mut items: Vec<u32> = (0..50).collect();
        rng.shuffle(&mut items);
        assert_ne!(items, (0..50).collect::<Vec<_>>());
        items.sort_unstable();
        assert_eq!(items, (0..50).collect::<Vec<_>>());
        let mut fork = rng.fork();
        assert_ne!(fork.next_u64(), rng.next_u64());
    }

    /// Every order of three items comes out of a shuffle about as often
    /// (the identity too: Fisher–Yates, not a rotation-only variant).
    #[test]
    fn shuffle_reaches_every_order_evenly() {
        let mut rng = Rng::new(3);
        let mut seen = std::collections::BTreeMap::new();
        for _ in 0..6_000 {
            let mut items = [0, 1, 2];
            rng.shuffle(&mut items);
            *seen.entry(items).or_insert(0) += 1;
        }
        assert_eq!(seen.len(), 6, "{seen:?}");
        assert!(seen.values().all(|&n| (850..1150).contains(&n)), "{seen:?}");
    }

    /// The seed whose first `next_u64` is `out`: SplitMix64's steps undone
    /// (each xor-shift and odd multiplication is a bijection).
    fn seed_giving(out: u64) -> u64 {
        fn unshift(y: u64, k: u32) -> u64 {
            (0..64 / k).fold(y, |x, _| y ^ (x >> k))
        }
        fn inverse(c: u64) -> u64 {
            (0..6).fold(c, |inv, _| {
                inv.wrapping_mul(2u64.wrapping_sub(c.wrapping_mul(inv)))
            })
        }
        let z = unshift(out, 31).wrapping_mul(inverse(0x94d0_49bb_1331_11eb));
        let z = unshift(z, 27).wrapping_mul(inverse(0xbf58_476d_1ce4_e5b9));
        unshift(z, 30).wrapping_sub(0x9e37_79b9_7f4a_7c15)
    }

    /// `chance(p)` is true for exactly the draws whose top 53 bits are
    /// below `p * 2^53`: at the boundary of one half, one below, at and one
    /// above.
    #[test]
    fn chance_is_exactly_p_at_its_boundary() {
        assert_eq!(Rng::new(seed_giving(12_345)).next_u64(), 12_345);
        let half = |top53: u64| Rng::new(seed_giving(top53 << 11)).chance(0.5);
        assert!(half(0));
        assert!(half((1 << 52) - 1));
        assert!(!half(1 << 52));
        assert!(!half((1 << 52) + 1));
        assert!(!half((1 << 53) - 1));
        assert!(Rng::new(seed_giving(u64::MAX)).chance(1.0));
    }

    /// A chance of 0 (or less, or NaN) draws no number, so turning a fault
    /// off leaves every other choice of a seeded run where it was.
    #[test]
    fn a_chance_of_zero_draws_nothing_and_any_other_draws_one() {
        for p in [0.0, -0.0, -1.0, f64::NAN] {
            let mut a = Rng::new(5);
            let mut b = a.clone();
            assert!(!a.chance(p));
            assert_eq!(a.next_u64(), b.next_u64(), "chance({p}) drew a number");
        }
        let mut a = Rng::new(5);
        let mut b = a.clone();
        a.chance(0.5);
        b.next_u64();
        assert_eq!(
            a.next_u64(),
            b.next_u64(),
            "chance(0.5) drew other than one"
        );
    }
}
