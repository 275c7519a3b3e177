//! Socket option values checked or normalized before they reach
//! `setsockopt(2)`, which takes a C `int`: a `u32` past `i32::MAX` arrives
//! negative, and Linux reads -1 as "the default" for `IP_TTL`,
//! `IP_MULTICAST_TTL` and `IPV6_TCLASS`, so `u32::MAX` would quietly set the
//! default instead of failing.

use std::io;
use std::time::Duration;

/// `ttl` if it is a valid `IP_TTL` (1..=255); else `InvalidInput`.
pub(crate) fn ttl(ttl: u32) -> io::Result<u32> {
    in_range(ttl, 1, "IP_TTL")
}

/// `value` if it fits the one-byte option `what` (0..=255); else
/// `InvalidInput`.
pub(crate) fn byte(value: u32, what: &str) -> io::Result<u32> {
    in_range(value, 0, what)
}

fn in_range(value: u32, min: u32, what: &str) -> io::Result<u32> {
    if (min..=255).contains(&value) {
        Ok(value)
    } else {
        Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{what} must be within {min}..=255, not {value}"),
        ))
    }
}

/// `SO_LINGER`'s time as the OS counts it, in whole seconds of a C `int`:
/// a fraction of a second rounded up (rounded down, half a second would be
/// zero, an abortive close), and past `i32::MAX` seconds (68 years) taken
/// as that (cast, 2^32 seconds would wrap to zero as well).
pub(crate) fn linger(linger: Option<Duration>) -> Option<Duration> {
    linger.map(|time| {
        let secs = time
            .as_secs()
            .saturating_add(u64::from(time.subsec_nanos() > 0));
        Duration::from_secs(secs.min(i32::MAX as u64))
    })
}
