//! What a scenario saw, one line per observation, in a form that holds on
//! the kernel and in the simulation alike: errors by kind and raw OS
//! error (never by message), addresses by shape and by how they relate.

use std::fmt::Debug;
use std::io;
use std::net::SocketAddr;

/// A scenario's observations, in order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Transcript(Vec<String>);

impl Transcript {
    /// An empty transcript.
    pub fn new() -> Transcript {
        Transcript::default()
    }

    /// The transcript a run ended with: its own, or one naming the error
    /// that cut it short.
    pub fn ended(outcome: io::Result<Transcript>) -> Transcript {
        outcome.unwrap_or_else(|err| Transcript::failed(&format!("cut short by {}", error(&err))))
    }

    /// A transcript of one line saying what failed.
    pub fn failed(what: &str) -> Transcript {
        Transcript(vec![what.to_owned()])
    }

    /// Notes `what`.
    pub fn note(&mut self, what: impl Into<String>) {
        self.0.push(what.into());
    }

    /// Notes `what` and a call's result: its value, or its error.
    pub fn see<T: Debug>(&mut self, what: &str, result: &io::Result<T>) {
        let seen = match result {
            Ok(value) => format!("Ok({value:?})"),
            Err(err) => error(err),
        };
        self.note(format!("{what}: {seen}"));
    }

    /// Notes whether `what` held.
    pub fn check(&mut self, what: &str, held: bool) {
        self.note(format!("{what}: {held}"));
    }

    /// Both transcripts, line by line, the first difference marked.
    pub fn diff(&self, other: &Transcript) -> String {
        let mut out = String::from("  kernel | simulation\n");
        let mut marked = false;
        for i in 0..self.0.len().max(other.0.len()) {
            let (a, b) = (self.0.get(i), other.0.get(i));
            let mark = if a != b && !marked {
                marked = true;
                ">"
            } else {
                " "
            };
            let show = |line: Option<&String>| line.map_or("-", String::as_str).to_owned();
            out += &format!("{mark} {} | {}\n", show(a), show(b));
        }
        out
    }
}

/// An error as the transcript shows it: kind and raw OS error.
pub fn error(err: &io::Error) -> String {
    match err.raw_os_error() {
        Some(code) => format!("Err({:?}, os error {code})", err.kind()),
        None => format!("Err({:?}, no os error)", err.kind()),
    }
}

/// What can be said of an address on either side: its family, whether it
/// is a loopback or the unspecified address, whether it has a port.
pub fn shape(addr: &SocketAddr) -> String {
    let ip = addr.ip();
    let kind = if ip.is_unspecified() {
        "unspecified"
    } else if ip.is_loopback() {
        "loopback"
    } else {
        "other"
    };
    let family = if addr.is_ipv4() { "v4" } else { "v6" };
    let port = if addr.port() == 0 { "port 0" } else { "a port" };
    format!("{family} {kind}, {port}")
}

/// `n` bytes of a pattern that does not repeat within 251 bytes, from
/// byte `from` of it.
pub fn pattern(from: usize, n: usize) -> Vec<u8> {
    (from..from + n).map(|i| (i % 251) as u8).collect()
}
