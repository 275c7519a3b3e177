//! The bytes the load generator sends, and the bytes it expects back.
//!
//! Every message and reply is built once, before the run: sending is a
//! copy of a prepared slice and checking a reply is a `memcmp`, so the
//! client spends its core on syscalls, not on formatting.
//!
//! Messages come in a few variants, chosen by connection and sequence
//! number, so a reply that went missing, came twice, came out of order or
//! went to the wrong connection fails the check instead of matching a
//! neighbour's identical bytes.

use std::str::FromStr;

/// What the server speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// `line_echo`: `Hello!\n` first, then `[echo] ` + each line.
    Line,
    /// `tcp_echo`: every byte back as it came.
    Raw,
}

impl FromStr for Protocol {
    type Err = ();

    fn from_str(s: &str) -> Result<Self, ()> {
        match s {
            "line" => Ok(Protocol::Line),
            "raw" => Ok(Protocol::Raw),
            _ => Err(()),
        }
    }
}

/// Prime, and unrelated to common connection counts, so neighbouring
/// connections and consecutive messages never share a variant.
const VARIANTS: u64 = 7;

const ALPHABET: &[u8] = b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";

/// The prepared messages and replies of one run.
pub struct Messages {
    greeting: &'static [u8],
    requests: Vec<Vec<u8>>,
    replies: Vec<Vec<u8>>,
}

impl Messages {
    /// Messages of `size` bytes for `protocol`.
    pub fn new(protocol: Protocol, size: usize) -> Messages {
        let mut requests = Vec::new();
        let mut replies = Vec::new();
        for variant in 0..VARIANTS as usize {
            let mut payload: Vec<u8> = (0..size)
                .map(|i| ALPHABET[(i + variant * 11) % ALPHABET.len()])
                .collect();
            match protocol {
                Protocol::Line => {
                    payload[size - 1] = b'\n';
                    replies.push([&b"[echo] "[..], &payload].concat());
                }
                Protocol::Raw => replies.push(payload.clone()),
            }
            requests.push(payload);
        }
        let greeting = match protocol {
            Protocol::Line => &b"Hello!\n"[..],
            Protocol::Raw => &b""[..],
        };
        Messages {
            greeting,
            requests,
            replies,
        }
    }

    /// What the server sends before any reply (empty for `raw`).
    pub fn greeting(&self) -> &[u8] {
        self.greeting
    }

    /// Message number `seq` of connection `conn`.
    pub fn request(&self, conn: usize, seq: u64) -> &[u8] {
        &self.requests[variant(conn, seq)]
    }

    /// The reply to message number `seq` of connection `conn`.
    pub fn reply(&self, conn: usize, seq: u64) -> &[u8] {
        &self.replies[variant(conn, seq)]
    }
}

fn variant(conn: usize, seq: u64) -> usize {
    ((conn as u64).wrapping_add(seq) % VARIANTS) as usize
}
