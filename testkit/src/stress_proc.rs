//! Watching a process, or one thread of this one, from the outside: its
//! resident memory, its open descriptors, its CPU time. For the stress and
//! edge tests whose failure mode is a leak or a busy loop.
//!
//! Use with `use testkit::stress_proc;`.

use std::io;
use std::time::Duration;

/// Resident set size of process `pid`, in bytes (`VmRSS`).
pub fn rss_of(pid: u32) -> io::Result<u64> {
    status_field_kib(pid, "VmRSS:").map(|kib| kib * 1024)
}

/// The largest resident set size process `pid` has had, in bytes (`VmHWM`).
pub fn peak_rss_of(pid: u32) -> io::Result<u64> {
    status_field_kib(pid, "VmHWM:").map(|kib| kib * 1024)
}

fn status_field_kib(pid: u32, field: &str) -> io::Result<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    let line = status
        .lines()
        .find(|line| line.starts_with(field))
        .ok_or_else(|| io::Error::other(format!("no {field} in /proc/{pid}/status")))?;
    // "VmRSS:	    1234 kB"
    line[field.len()..]
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .map_err(io::Error::other)
}

/// Number of descriptors process `pid` has open. For another process
/// only: listing this one's would count the listing's own descriptor.
pub fn fd_count_of(pid: u32) -> io::Result<usize> {
    Ok(std::fs::read_dir(format!("/proc/{pid}/fd"))?.count())
}

/// One thread's CPU clock, readable from any thread of this process while
/// that thread lives: the CPU time of the loop thread alone, with
/// nanosecond resolution, whatever other tests in the binary are doing.
#[derive(Clone, Copy)]
pub struct ThreadClock(libc::clockid_t);

impl ThreadClock {
    /// The calling thread's clock.
    pub fn current() -> ThreadClock {
        let mut id: libc::clockid_t = 0;
        // SAFETY: pthread_self() names the calling thread, which is alive;
        // `id` is a valid, writable clockid_t for the call's duration.
        let rc = unsafe { libc::pthread_getcpuclockid(libc::pthread_self(), &mut id) };
        assert_eq!(rc, 0, "pthread_getcpuclockid failed");
        ThreadClock(id)
    }

    /// CPU time (user + system) the thread has used so far.
    pub fn cpu_time(&self) -> Duration {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `ts` is a valid, writable timespec; an invalid clock (the
        // thread has exited) is reported through the return value.
        let rc = unsafe { libc::clock_gettime(self.0, &mut ts) };
        assert_eq!(rc, 0, "clock_gettime on a thread CPU clock failed");
        Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
    }
}

/// Formats a byte count in MiB, for messages.
pub fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
}
