//! A set's tasks, by id, and when the set's tables give memory back.

use std::hash::{BuildHasherDefault, Hasher};

use crate::task::JoinHandle;

/// The set's tasks, by id: a hash table for O(1) spawns and joins, with a
/// fixed hash function, so that walking it (`abort_all`) goes in the same
/// order on every run. With std's randomly seeded hasher, a seeded run
/// stopping a set aborted its tasks in a different order each time and
/// did not replay (bug 3 of issue 40). The library bans std's maps
/// (clippy.toml) for that reason; this one is allowed, its hasher fixed.
#[allow(clippy::disallowed_types)]
pub(super) type Tasks<T> =
    std::collections::HashMap<u64, JoinHandle<T>, BuildHasherDefault<IdHasher>>;

/// Hashes a task's id (counted up from 0) by multiplying it by 2^64 / φ,
/// an odd number: so the low `b` bits of the hash, which pick one of 2^b
/// buckets, are a permutation of the id's, and 2^b consecutive ids never
/// collide; and the high bits, which the table takes its tags from, are
/// spread too. (A hash whose low bits all match makes every lookup a walk
/// of the table.)
#[derive(Default)]
pub(super) struct IdHasher(u64);

impl Hasher for IdHasher {
    fn write_u64(&mut self, id: u64) {
        self.0 = id;
    }

    fn write(&mut self, _: &[u8]) {
        unreachable!("a JoinSet hashes only its u64 ids, with write_u64");
    }

    fn finish(&self) -> u64 {
        self.0.wrapping_mul(0x9E37_79B9_7F4A_7C15)
    }
}

/// Below this room (in tasks) the set's tables never shrink.
const SHRINK_MIN: usize = 64;

/// The room to shrink a table holding `len` with room for `capacity` to:
/// twice what it holds, once it holds a quarter of its room. A set that
/// lives on (a server's connections) would otherwise keep a burst's size
/// for good. Amortized O(1): half of the room must be freed again before
/// the next shrink.
pub(super) fn shrunk(len: usize, capacity: usize) -> Option<usize> {
    (capacity > SHRINK_MIN && len <= capacity / 4).then_some(len * 2)
}

#[cfg(test)]
mod tests {
    use super::{IdHasher, SHRINK_MIN, shrunk};
    use std::collections::BTreeSet;
    use std::hash::{BuildHasher, BuildHasherDefault, Hasher};

    /// Only ids are hashed, with `write_u64`: bytes are refused loudly, not
    /// hashed to 0 (which would put every key in one bucket).
    #[test]
    #[should_panic(expected = "hashes only its u64 ids")]
    fn bytes_are_refused() {
        IdHasher::default().write(b"id");
    }

    /// 2^12 consecutive ids, from anywhere: as many buckets of a table of
    /// 2^12 (the low bits), and every one of the 128 tags (the top 7).
    #[test]
    fn consecutive_ids_take_distinct_buckets_and_every_tag() {
        let hasher = BuildHasherDefault::<IdHasher>::default();
        for start in [0u64, 1 << 20, u64::MAX - 4096] {
            let hashes: Vec<u64> = (start..start + 4096)
                .map(|id| hasher.hash_one(id))
                .collect();
            let buckets: BTreeSet<u64> = hashes.iter().map(|h| h & 4095).collect();
            let tags: BTreeSet<u64> = hashes.iter().map(|h| h >> 57).collect();
            assert_eq!((buckets.len(), tags.len()), (4096, 128), "from {start}");
        }
    }

    /// At the edges: no shrink at `SHRINK_MIN` room, one just past it;
    /// to twice what is held, once that is a quarter of the room or less.
    #[test]
    fn a_table_shrinks_past_its_minimum_once_a_quarter_full() {
        assert_eq!(SHRINK_MIN, 64);
        assert_eq!(shrunk(0, 63), None);
        assert_eq!(shrunk(0, 64), None);
        assert_eq!(shrunk(0, 65), Some(0));
        assert_eq!(shrunk(16, 65), Some(32));
        assert_eq!(shrunk(17, 65), None);
        assert_eq!(shrunk(31, 128), Some(62));
        assert_eq!(shrunk(32, 128), Some(64));
        assert_eq!(shrunk(33, 128), None);
    }
}
