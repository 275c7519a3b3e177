//! Capturing `log` records in tests.
//!
//! The `log` crate allows one logger per process, and a test binary runs
//! its tests in parallel threads, while a record may come from any thread
//! (the stall detector logs from its watchdog thread). So one global
//! logger, installed by the first [`capture`], hands every record to every
//! live [`Capture`], and each test picks out its own records by what they
//! contain: a spawn location (`file!()` and `line!()`) is unique to a test.

pub use log::Level;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Mutex, Once};
use std::time::{Duration, Instant};

/// A captured record.
#[derive(Debug, Clone)]
pub struct Line {
    /// The record's level.
    pub level: log::Level,
    /// The record's message, formatted.
    pub message: String,
}

/// The records logged, by any thread, since this capture began.
pub struct Capture {
    lines: Receiver<Line>,
}

static SUBSCRIBERS: Mutex<Vec<Sender<Line>>> = Mutex::new(Vec::new());

struct Broadcast;

impl log::Log for Broadcast {
    fn enabled(&self, _: &log::Metadata<'_>) -> bool {
        true
    }

    fn log(&self, record: &log::Record<'_>) {
        let line = Line {
            level: record.level(),
            message: record.args().to_string(),
        };
        let mut subscribers = SUBSCRIBERS.lock().unwrap_or_else(|e| e.into_inner());
        // A capture dropped since is forgotten.
        subscribers.retain(|tx| tx.send(line.clone()).is_ok());
    }

    fn flush(&self) {}
}

/// Starts capturing every record logged from now on, installing the
/// global logger the first time.
///
/// # Panics
///
/// If another logger was installed in this process first.
pub fn capture() -> Capture {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        log::set_logger(&Broadcast).expect("no other logger in the test binary");
        log::set_max_level(log::LevelFilter::Trace);
    });
    let (tx, lines) = mpsc::channel();
    SUBSCRIBERS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(tx);
    Capture { lines }
}

impl Capture {
    /// Waits for a record whose message contains `needle`, for at most
    /// `timeout` (a safety net, not a measurement); skips the others.
    pub fn wait_for(&self, needle: &str, timeout: Duration) -> Option<Line> {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) if line.message.contains(needle) => return Some(line),
                Ok(_) => {}
                Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => return None,
            }
        }
    }

    /// The records captured so far, and not yet waited for, whose message
    /// contains `needle`.
    pub fn seen(&self, needle: &str) -> Vec<Line> {
        self.lines
            .try_iter()
            .filter(|line| line.message.contains(needle))
            .collect()
    }
}
