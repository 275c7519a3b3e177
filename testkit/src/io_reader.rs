//! In-memory readers for the stream tests: a scripted reader whose chunks,
//! pauses, errors and end of stream the test decides, and an endless one.

use std::collections::VecDeque;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};

use futures_util::io::AsyncRead;

/// One thing the scripted reader does when read.
pub enum Step {
    /// Hands out these bytes, as many per read as the caller has room for.
    Data(Vec<u8>),
    /// Returns `Pending` once and wakes the task at once: the bytes after it
    /// come in a later poll, as they would from a socket.
    Pause,
    /// Fails one read with this kind of error.
    Fail(io::ErrorKind),
    /// Returns end of stream once; later steps are still read after it.
    Eof,
}

#[derive(Default)]
struct State {
    steps: VecDeque<Step>,
    /// Once set and the steps are used up, every read returns end of stream.
    closed: bool,
    waker: Option<Waker>,
    reads: usize,
    largest_offer: usize,
}

/// Reads its script; when the script runs out it waits for the [`Feed`]
/// (or returns end of stream once the feed is closed).
pub struct ScriptedReader(Arc<Mutex<State>>);

/// The test's side of a [`ScriptedReader`]: adds steps and looks at what
/// the reader was asked.
#[derive(Clone)]
pub struct Feed(Arc<Mutex<State>>);

/// A reader with an empty script, and its feed.
pub fn scripted() -> (ScriptedReader, Feed) {
    let state = Arc::new(Mutex::new(State::default()));
    (ScriptedReader(state.clone()), Feed(state))
}

/// A reader that hands out `chunks` one after the other, with a pause
/// between each two, then ends.
pub fn chunks<I, C>(chunks: I) -> (ScriptedReader, Feed)
where
    I: IntoIterator<Item = C>,
    C: Into<Vec<u8>>,
{
    let (reader, feed) = scripted();
    for (i, chunk) in chunks.into_iter().enumerate() {
        if i > 0 {
            feed.step(Step::Pause);
        }
        feed.push(chunk);
    }
    feed.close();
    (reader, feed)
}

impl Feed {
    fn state(&self) -> MutexGuard<'_, State> {
        self.0.lock().unwrap()
    }

    /// Adds a step and wakes a reader waiting for one.
    pub fn step(&self, step: Step) {
        let waker = {
            let mut state = self.state();
            state.steps.push_back(step);
            state.waker.take()
        };
        if let Some(waker) = waker {
            waker.wake();
        }
    }

    /// Adds bytes.
    pub fn push(&self, bytes: impl Into<Vec<u8>>) {
        self.step(Step::Data(bytes.into()));
    }

    /// Ends the stream once the steps so far are read.
    pub fn close(&self) {
        let waker = {
            let mut state = self.state();
            state.closed = true;
            state.waker.take()
        };
        if let Some(waker) = waker {
            waker.wake();
        }
    }

    /// How many times the reader was polled.
    pub fn reads(&self) -> usize {
        self.state().reads
    }

    /// The largest buffer a read was offered: no more than the reader's
    /// buffer, so it shows the buffer's size at its largest.
    pub fn largest_offer(&self) -> usize {
        self.state().largest_offer
    }
}

impl AsyncRead for ScriptedReader {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        let mut guard = self.0.lock().unwrap();
        // Borrow the fields apart, not the guard as a whole.
        let state = &mut *guard;
        state.reads += 1;
        state.largest_offer = state.largest_offer.max(buf.len());
        loop {
            match state.steps.front_mut() {
                None if state.closed => return Poll::Ready(Ok(0)),
                None => {
                    state.waker = Some(cx.waker().clone());
                    return Poll::Pending;
                }
                Some(Step::Data(data)) if data.is_empty() => {
                    state.steps.pop_front();
                }
                Some(Step::Data(data)) => {
                    let n = data.len().min(buf.len());
                    buf[..n].copy_from_slice(&data[..n]);
                    data.drain(..n);
                    if data.is_empty() {
                        state.steps.pop_front();
                    }
                    return Poll::Ready(Ok(n));
                }
                Some(Step::Pause) => {
                    state.steps.pop_front();
                    cx.waker().wake_by_ref();
                    return Poll::Pending;
                }
                Some(Step::Fail(kind)) => {
                    let kind = *kind;
                    state.steps.pop_front();
                    return Poll::Ready(Err(io::Error::new(kind, "scripted failure")));
                }
                Some(Step::Eof) => {
                    state.steps.pop_front();
                    return Poll::Ready(Ok(0));
                }
            }
        }
    }
}

/// A peer that sends `len` bytes of `x` (never a newline), then `tail`,
/// then ends; it allocates nothing while reading, so an allocation counter
/// sees only the reader under test. It records the largest buffer offered.
pub struct EndlessLine {
    left: usize,
    tail: &'static [u8],
    pub largest_offer: usize,
}

impl EndlessLine {
    pub fn new(len: usize, tail: &'static [u8]) -> Self {
        EndlessLine {
            left: len,
            tail,
            largest_offer: 0,
        }
    }
}

impl AsyncRead for EndlessLine {
    fn poll_read(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        this.largest_offer = this.largest_offer.max(buf.len());
        if this.left > 0 {
            let n = this.left.min(buf.len());
            buf[..n].fill(b'x');
            this.left -= n;
            return Poll::Ready(Ok(n));
        }
        let n = this.tail.len().min(buf.len());
        buf[..n].copy_from_slice(&this.tail[..n]);
        this.tail = &this.tail[n..];
        Poll::Ready(Ok(n))
    }
}
