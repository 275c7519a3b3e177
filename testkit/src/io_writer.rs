//! An in-memory writer for the stream tests: it takes as many bytes per
//! call as a plan says (or refuses, or fails), and records everything it
//! received, and when it was flushed and closed.

use std::collections::VecDeque;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};

use futures_util::io::AsyncWrite;

/// What the writer does with one `poll_write`.
#[derive(Clone, Copy, Debug)]
pub enum Act {
    /// Takes up to this many bytes.
    Take(usize),
    /// Returns `Pending` and wakes the task at once: "try again later".
    Pending,
    /// Returns `Pending` and wakes nobody until the test calls
    /// [`Probe::unstall`]: a peer that stopped reading.
    Stall,
    /// Returns a `WouldBlock` error (what a raw non-blocking socket says).
    WouldBlock,
    /// Fails with this kind of error.
    Fail(io::ErrorKind),
}

/// What to do on each call: given the call's number (from 0) and how many
/// bytes were offered.
pub type Plan = Box<dyn FnMut(usize, usize) -> Act + Send>;

/// A plan that follows `script`, then takes everything.
pub fn script(script: impl IntoIterator<Item = Act>) -> Plan {
    let mut script: VecDeque<Act> = script.into_iter().collect();
    Box::new(move |_, _| script.pop_front().unwrap_or(Act::Take(usize::MAX)))
}

/// A plan that follows `script`, then repeats `then` forever.
pub fn script_then(script: impl IntoIterator<Item = Act>, then: Act) -> Plan {
    let mut script: VecDeque<Act> = script.into_iter().collect();
    Box::new(move |_, _| script.pop_front().unwrap_or(then))
}

struct State {
    plan: Plan,
    received: Vec<u8>,
    calls: usize,
    flushes: usize,
    /// How many bytes had been received when `poll_close` was called.
    closed_after: Option<usize>,
    stalled: Option<Waker>,
    stalling: bool,
}

/// The writer under test's inner writer.
pub struct PlannedWriter(Arc<Mutex<State>>);

/// The test's view of a [`PlannedWriter`].
#[derive(Clone)]
pub struct Probe(Arc<Mutex<State>>);

/// A writer following `plan`, and its probe.
pub fn planned(plan: Plan) -> (PlannedWriter, Probe) {
    let state = Arc::new(Mutex::new(State {
        plan,
        received: Vec::new(),
        calls: 0,
        flushes: 0,
        closed_after: None,
        stalled: None,
        stalling: false,
    }));
    (PlannedWriter(state.clone()), Probe(state))
}

impl Probe {
    fn state(&self) -> MutexGuard<'_, State> {
        self.0.lock().unwrap()
    }

    /// Everything the writer took, in order.
    pub fn received(&self) -> Vec<u8> {
        self.state().received.clone()
    }

    pub fn received_len(&self) -> usize {
        self.state().received.len()
    }

    /// How many times `poll_write` was called.
    pub fn calls(&self) -> usize {
        self.state().calls
    }

    pub fn flushes(&self) -> usize {
        self.state().flushes
    }

    pub fn closed_after(&self) -> Option<usize> {
        self.state().closed_after
    }

    /// Replaces the plan for the calls to come.
    pub fn set_plan(&self, plan: Plan) {
        self.state().plan = plan;
    }

    /// Ends a [`Act::Stall`]: wakes the stalled task; the next call follows
    /// the plan again.
    pub fn unstall(&self) {
        let waker = {
            let mut state = self.state();
            state.stalling = false;
            state.stalled.take()
        };
        if let Some(waker) = waker {
            waker.wake();
        }
    }
}

impl AsyncWrite for PlannedWriter {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        let mut state = self.0.lock().unwrap();
        let call = state.calls;
        state.calls += 1;
        if state.closed_after.is_some() {
            return Poll::Ready(Err(io::ErrorKind::BrokenPipe.into()));
        }
        if state.stalling {
            state.stalled = Some(cx.waker().clone());
            return Poll::Pending;
        }
        match (state.plan)(call, data.len()) {
            Act::Take(n) => {
                let n = n.min(data.len());
                state.received.extend_from_slice(&data[..n]);
                Poll::Ready(Ok(n))
            }
            Act::Pending => {
                cx.waker().wake_by_ref();
                Poll::Pending
            }
            Act::Stall => {
                state.stalling = true;
                state.stalled = Some(cx.waker().clone());
                Poll::Pending
            }
            Act::WouldBlock => Poll::Ready(Err(io::ErrorKind::WouldBlock.into())),
            Act::Fail(kind) => Poll::Ready(Err(io::Error::new(kind, "planned failure"))),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.0.lock().unwrap().flushes += 1;
        Poll::Ready(Ok(()))
    }

    fn poll_close(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        let mut state = self.0.lock().unwrap();
        let received = state.received.len();
        state.closed_after.get_or_insert(received);
        Poll::Ready(Ok(()))
    }
}

/// A small deterministic PRNG (xorshift64*): random patterns that repeat
/// run after run, without a dependency.
#[derive(Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        // Never zero: xorshift would stay at zero.
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number in `0..n`.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// `len` random bytes.
    pub fn bytes(&mut self, len: usize) -> Vec<u8> {
        (0..len).map(|_| self.next_u64() as u8).collect()
    }
}
