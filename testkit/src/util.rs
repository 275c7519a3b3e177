//! Helpers shared by the integration tests.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::task::{Context, Poll, Wake, Waker};
use std::time::Duration;

use parking::Signal;

pub mod parking;

/// Runs `f` on a fresh thread and returns its result, failing the test if it
/// takes longer than `limit`: the safety net for tests whose failure mode
/// is a hang (a lost wake-up). The limit is generous; it is never what the
/// test measures.
pub fn within<T: Send + 'static>(limit: Duration, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)));
    });
    match rx.recv_timeout(limit) {
        Ok(Ok(value)) => value,
        Ok(Err(panic)) => std::panic::resume_unwind(panic),
        Err(_) => panic!("timed out after {limit:?}: something was never woken"),
    }
}

/// CPU time (user + system) used by this whole process so far, from
/// /proc/self/stat. Resolution: one clock tick (10 ms on Linux).
pub fn process_cpu_time() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").expect("read /proc/self/stat");
    // The command name (field 2) may contain spaces; fields are counted
    // after its closing parenthesis. utime and stime are fields 14 and 15.
    let after_name = &stat[stat.rfind(')').expect("comm field") + 2..];
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    // USER_HZ is 100 on every Linux the project supports.
    Duration::from_millis(ticks * 10)
}

/// Increments a counter when dropped: proves a future's destructor ran.
pub struct DropCounter(pub Arc<AtomicUsize>);

impl Drop for DropCounter {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// A waker that counts its wakes.
#[derive(Default)]
pub struct CountingWaker {
    pub wakes: AtomicUsize,
}

impl Wake for CountingWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }
    fn wake_by_ref(self: &Arc<Self>) {
        self.wakes.fetch_add(1, Ordering::SeqCst);
    }
}

/// A waker that counts its wakes, then panics: the loop must survive it.
#[derive(Default)]
pub struct PanickingWaker {
    pub calls: AtomicUsize,
}

impl Wake for PanickingWaker {
    fn wake(self: Arc<Self>) {
        self.calls.fetch_add(1, Ordering::SeqCst);
        panic!("this waker panics on purpose");
    }
}

/// A panicking waker, and its counter.
pub fn panicking_waker() -> (Waker, Arc<PanickingWaker>) {
    let inner = Arc::new(PanickingWaker::default());
    (Waker::from(inner.clone()), inner)
}

/// Polls `future` once with `waker`, from inside a task.
pub fn poll_once_with<F: Future + Unpin>(future: &mut F, waker: &Waker) -> Poll<F::Output> {
    let mut cx = Context::from_waker(waker);
    Pin::new(future).poll(&mut cx)
}

/// A signal one task waits on and any thread sets.
pub fn signal() -> Arc<Signal> {
    Arc::new(Signal::default())
}

/// The message of a panic payload, whether `panic!` made it a `&str` or a
/// `String`.
pub fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_default()
}

/// Raises this process's soft RLIMIT_NOFILE to at least `n` if the hard
/// limit allows; returns whether the soft limit is now at least `n`.
pub fn fd_limit_at_least(n: u64) -> bool {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `limit` is a valid, writable rlimit for the call's duration.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        return false;
    }
    if limit.rlim_cur >= n {
        return true;
    }
    if limit.rlim_max < n {
        return false;
    }
    limit.rlim_cur = n;
    // SAFETY: `limit` is a valid rlimit; raising the soft limit up to the
    // hard limit needs no privilege.
    unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &limit) == 0 }
}

/// Names of the threads that panicked since this was first called (a
/// panic hook records them; the previous hook still runs): how a test
/// sees a panic on a thread it cannot join, such as a runtime's watchdog.
pub fn panicked_threads() -> &'static std::sync::Mutex<Vec<String>> {
    static PANICS: std::sync::OnceLock<std::sync::Mutex<Vec<String>>> = std::sync::OnceLock::new();
    PANICS.get_or_init(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if let Some(panics) = PANICS.get() {
                let name = std::thread::current().name().unwrap_or("").to_string();
                panics.lock().unwrap_or_else(|e| e.into_inner()).push(name);
            }
            previous(info);
        }));
        std::sync::Mutex::new(Vec::new())
    })
}
