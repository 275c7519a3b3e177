//! Accounting for churn tests: live heap bytes and allocations, open file
//! descriptors, threads and resident memory of the whole process.
//!
//! A churn test creates and drops one kind of thing many times and checks
//! that what the process holds follows what is live, not what was ever
//! made. The heap figures come from [`Counting`], which a test binary
//! installs as its global allocator:
//!
//! ```ignore
//! #[global_allocator]
//! static ALLOC: testkit::account::Counting = testkit::account::Counting;
//! ```
//!
//! The figures are the whole process's, so the tests of such a binary take
//! [`serial`] to run one at a time.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};
use std::sync::{Mutex, MutexGuard};

/// A global allocator that forwards to [`System`] and counts the bytes and
/// allocations live in the whole process.
#[derive(Debug)]
pub struct Counting;

static LIVE_BYTES: AtomicIsize = AtomicIsize::new(0);
static LIVE_ALLOCATIONS: AtomicIsize = AtomicIsize::new(0);

fn grew(bytes: usize, allocations: isize) {
    LIVE_BYTES.fetch_add(bytes as isize, Ordering::Relaxed);
    LIVE_ALLOCATIONS.fetch_add(allocations, Ordering::Relaxed);
}

fn shrank(bytes: usize, allocations: isize) {
    LIVE_BYTES.fetch_sub(bytes as isize, Ordering::Relaxed);
    LIVE_ALLOCATIONS.fetch_sub(allocations, Ordering::Relaxed);
}

// SAFETY: every method forwards to `System` with the caller's arguments
// unchanged, so `System`'s guarantees are ours; counting touches only two
// static atomics, which never allocate.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded unchanged; the caller upholds `alloc`'s contract.
        let ptr = unsafe { System.alloc(layout) };
        if !ptr.is_null() {
            grew(layout.size(), 1);
        }
        ptr
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded unchanged; the caller upholds the contract.
        let ptr = unsafe { System.alloc_zeroed(layout) };
        if !ptr.is_null() {
            grew(layout.size(), 1);
        }
        ptr
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded unchanged; the caller upholds the contract.
        let new = unsafe { System.realloc(ptr, layout, new_size) };
        if !new.is_null() {
            shrank(layout.size(), 0);
            grew(new_size, 0);
        }
        new
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        shrank(layout.size(), 1);
        // SAFETY: forwarded unchanged; the caller upholds the contract.
        unsafe { System.dealloc(ptr, layout) }
    }
}

/// Heap bytes live in the process now, as [`Counting`] counts them (0 if
/// the binary did not install it).
pub fn live_bytes() -> isize {
    LIVE_BYTES.load(Ordering::Relaxed)
}

/// Heap allocations live in the process now, as [`Counting`] counts them.
pub fn live_allocations() -> isize {
    LIVE_ALLOCATIONS.load(Ordering::Relaxed)
}

/// File descriptors open in the process now (`/proc/self/fd`, less the one
/// the listing itself holds).
pub fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd")
        .expect("/proc/self/fd")
        .count()
        .saturating_sub(1)
}

/// Threads of the process now (`Threads:` in `/proc/self/status`).
pub fn threads() -> usize {
    proc_status_field("Threads:")
}

/// Resident memory of the process now, in bytes (`VmRSS:` in
/// `/proc/self/status`).
pub fn rss_bytes() -> usize {
    proc_status_field("VmRSS:") * 1024
}

fn proc_status_field(name: &str) -> usize {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    status
        .lines()
        .find_map(|line| line.strip_prefix(name))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no {name} in /proc/self/status"))
}

/// Runs the accounting tests of a binary one at a time: the figures are
/// the whole process's. A test that panicked while holding it does not
/// stop the others.
pub fn serial() -> MutexGuard<'static, ()> {
    static SERIAL: Mutex<()> = Mutex::new(());
    SERIAL
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// What the process holds at one moment: heap, descriptors, threads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Held {
    /// [`live_bytes`].
    pub bytes: isize,
    /// [`live_allocations`].
    pub allocations: isize,
    /// [`open_fds`].
    pub fds: usize,
    /// [`threads`].
    pub threads: usize,
}

impl Held {
    /// What the process holds now.
    pub fn now() -> Held {
        Held {
            bytes: live_bytes(),
            allocations: live_allocations(),
            fds: open_fds(),
            threads: threads(),
        }
    }

    /// Panics, naming `what`, unless the process now holds no more
    /// descriptors or threads than at `self`, and at most `slack_bytes`
    /// more heap bytes.
    #[track_caller]
    pub fn assert_back(&self, what: &str, slack_bytes: isize) {
        let now = Held::now();
        assert!(
            now.bytes - self.bytes <= slack_bytes,
            "{what}: {} heap bytes more than before ({} allocations), slack {slack_bytes}",
            now.bytes - self.bytes,
            now.allocations - self.allocations,
        );
        assert!(
            now.fds <= self.fds,
            "{what}: fds {} -> {}",
            self.fds,
            now.fds
        );
        assert!(
            now.threads <= self.threads,
            "{what}: threads {} -> {}",
            self.threads,
            now.threads
        );
    }
}
