//! Accounting for churn tests: live heap bytes and allocations (and the
//! allocations ever made), open file descriptors, threads and resident memory of the whole process.
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
static ALLOCATIONS_MADE: AtomicIsize = AtomicIsize::new(0);

fn grew(bytes: usize, allocations: isize) {
    LIVE_BYTES.fetch_add(bytes as isize, Ordering::Relaxed);
    LIVE_ALLOCATIONS.fetch_add(allocations, Ordering::Relaxed);
    ALLOCATIONS_MADE.fetch_add(allocations, Ordering::Relaxed);
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

/// Heap allocations made in the process so far, freed or not: the work
/// a piece of code does in allocations, where [`live_allocations`] is what
/// it keeps.
pub fn allocations_made() -> isize {
    ALLOCATIONS_MADE.load(Ordering::Relaxed)
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

/// The runtime's own threads now: those named `ioloop-*` (blocking pool,
/// stall detector, shutdown alarm). Unlike [`threads`], it does not count
/// the test harness's threads, which come and go as tests start and end.
pub fn runtime_threads() -> usize {
    runtime_thread_names().len()
}

/// The names of [`runtime_threads`].
pub fn runtime_thread_names() -> Vec<String> {
    std::fs::read_dir("/proc/self/task")
        .expect("/proc/self/task")
        .filter_map(|task| std::fs::read_to_string(task.ok()?.path().join("comm")).ok())
        .map(|name| name.trim_end().to_owned())
        .filter(|name| name.starts_with("ioloop"))
        .collect()
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

/// A runtime for a test that measures while it runs: one without the stall
/// detector's thread. A thread names itself once it runs, so one started a
/// moment before a [`Held::now`] may not yet be counted as the runtime's,
/// and be counted after: the count would move with the scheduler's luck.
pub fn runtime() -> std::io::Result<ioloop::Runtime> {
    ioloop::Runtime::builder().slow_poll_threshold(None).build()
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
    /// [`runtime_threads`]: the harness's own threads come and go with
    /// the tests waiting on [`serial`], so the whole count would be noise.
    pub threads: usize,
}

impl Held {
    /// What the process holds now.
    pub fn now() -> Held {
        Held {
            bytes: live_bytes(),
            allocations: live_allocations(),
            fds: open_fds(),
            threads: runtime_threads(),
        }
    }

    /// Panics, naming `what`, unless the process now holds no more
    /// descriptors or runtime threads than at `self`, and at most
    /// `slack_bytes` more heap bytes.
    #[track_caller]
    pub fn assert_back(&self, what: &str, slack_bytes: isize) {
        let now = Held::now();
        assert!(
            now.bytes - self.bytes <= slack_bytes,
            "{what}: {} heap bytes more than before ({} allocations), slack {slack_bytes}",
            now.bytes - self.bytes,
            now.allocations - self.allocations,
        );
        // A blocking thread exits on its own a moment after its last job,
        // or after its runtime drops: waited for, on a safety net. Until it
        // has, the job it just ran may still hold its runtime's epoll and
        // eventfd descriptors, so the descriptors are read after it.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while runtime_threads() > self.threads && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        // A thread is gone from the count a moment before the kernel has
        // closed what its last job held (seen twice under load: 2
        // descriptors, as a runtime's epoll and eventfd would be): those are
        // waited for on the same safety net; a leak never comes back.
        while open_fds() > self.fds && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let now = Held {
            threads: runtime_threads(),
            fds: open_fds(),
            ..now
        };
        assert!(
            now.fds <= self.fds,
            "{what}: fds {} -> {}",
            self.fds,
            now.fds
        );
        assert!(
            now.threads <= self.threads,
            "{what}: runtime threads {} -> {} {:?}",
            self.threads,
            now.threads,
            runtime_thread_names(),
        );
    }
}
