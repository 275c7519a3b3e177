//! The proptest configuration of the property tests: a case count sized
//! for CI in a debug build, which `PROPTEST_CASES` overrides, and where
//! failing cases are kept.

use proptest::test_runner::{Config, FileFailurePersistence};

/// `default_cases` cases, or as many as `PROPTEST_CASES` says (proptest
/// reads that variable only when no count is set in the code, so it is
/// read here too): `PROPTEST_CASES=20000 cargo test -p testkit --test prop`
/// runs a long search.
///
/// The seeds of failing cases go to `regressions` (relative to the
/// package root, `testkit/`, where cargo runs these tests), and are tried first
/// on every later run. Set explicitly: proptest's default looks for a
/// `lib.rs` above the test file, which `tests/` does not have.
pub fn config(default_cases: u32, regressions: &'static str) -> Config {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|cases| cases.parse().ok())
        .unwrap_or(default_cases);
    Config {
        cases,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(regressions))),
        ..Config::default()
    }
}
