//! A baton two tasks hand back and forth: the smallest channel-like waker
//! handoff, written once with std only so that the same code runs on every
//! runtime and the cost left to compare is the runtime's wake + schedule +
//! poll path.
//!
//! Each hop is what a oneshot channel does: the waiting side stores its
//! waker under a mutex, the other side moves the turn on, takes the waker
//! out and wakes it (after dropping the lock, so a runtime whose wake
//! re-enters cannot deadlock on it). Shared by `examples/bench_micro` and
//! the Criterion benchmarks (`benches/micro`), which include this file.

use std::future::poll_fn;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

/// Whose turn it is, and where each player waits for it.
pub struct Baton {
    /// Hops made so far; player `turn % 2` holds the baton.
    turn: AtomicUsize,
    /// The game ends when `turn` reaches this.
    hops: usize,
    waiters: [Mutex<Option<Waker>>; 2],
}

impl Baton {
    /// A baton for a game of `hops` hops, player 0 to start.
    pub fn new(hops: usize) -> Arc<Baton> {
        Arc::new(Baton {
            turn: AtomicUsize::new(0),
            hops,
            waiters: [Mutex::new(None), Mutex::new(None)],
        })
    }

    /// Plays `player`'s side (0 or 1) to the end of the game.
    pub async fn play(self: Arc<Self>, player: usize) {
        loop {
            let turn = poll_fn(|cx| self.poll_turn(player, cx)).await;
            if turn >= self.hops {
                return;
            }
            self.pass(player);
        }
    }

    /// Ready with the turn number once it is `player`'s turn or the game
    /// is over.
    fn poll_turn(&self, player: usize, cx: &mut Context<'_>) -> Poll<usize> {
        let ready = |turn: usize| turn >= self.hops || turn % 2 == player;
        let turn = self.turn.load(Ordering::Acquire);
        if ready(turn) {
            return Poll::Ready(turn);
        }
        let mut waiter = self.waiters[player].lock().unwrap();
        *waiter = Some(cx.waker().clone());
        // Checked again under the lock: a `pass` that moved the turn before
        // the waker was stored found no waker, and must be seen here. One
        // after it takes the lock after us and finds the waker.
        let turn = self.turn.load(Ordering::Acquire);
        drop(waiter);
        if ready(turn) {
            Poll::Ready(turn)
        } else {
            Poll::Pending
        }
    }

    /// Hands the baton to the other player, waking it.
    fn pass(&self, player: usize) {
        self.turn.fetch_add(1, Ordering::AcqRel);
        let waker = self.waiters[1 - player].lock().unwrap().take();
        if let Some(waker) = waker {
            waker.wake();
        }
    }
}
