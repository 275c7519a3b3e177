//! A descriptor closed and its number reused, with events for the old and
//! the new source arriving in one poll batch: the old source's waker is
//! never called after it was dropped, and the new source never misses its
//! own events.
//!
//! The kernel keeps reporting a closed descriptor's events when the file
//! behind it is still open elsewhere (a `dup`, a forked child) and the
//! descriptor was closed before it was deregistered (closed through
//! another handle). Its epoll entry then lives on under the old token,
//! while a new socket takes the same descriptor number and, here, the same
//! reactor slot. `ClosedElsewhere` is such a source: its deregistration
//! does nothing, as if the descriptor were already gone, and a duplicate
//! held by the test keeps the file open. tests/stress/close.rs covers the
//! ordinary close, which deregisters first and leaves nothing behind;
//! tests/edge/readiness.rs a stale event for a reused slot on its own.

use std::fmt;
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::UnixStream as StdUnixStream;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use ioloop::io::Registration;
use ioloop::{Handle, Metrics, yield_now};
use mio::event::Source;
use mio::net::UnixStream;
use mio::unix::SourceFd;
use mio::{Interest, Registry, Token};
use testkit::util;
use util::CountingWaker;

/// A descriptor that goes without being deregistered. It does not own
/// the descriptor: the test closes it, by putting another socket in its
/// place.
#[derive(Debug)]
struct ClosedElsewhere(RawFd);

impl Source for ClosedElsewhere {
    fn register(
        &mut self,
        registry: &Registry,
        token: Token,
        interest: Interest,
    ) -> io::Result<()> {
        SourceFd(&self.0).register(registry, token, interest)
    }

    fn reregister(
        &mut self,
        registry: &Registry,
        token: Token,
        interest: Interest,
    ) -> io::Result<()> {
        SourceFd(&self.0).reregister(registry, token, interest)
    }

    fn deregister(&mut self, _: &Registry) -> io::Result<()> {
        Ok(())
    }
}

/// Spends a registration's readiness, then parks `waker` on its read side.
fn park_reader<S: Source>(
    reg: &Registration<S>,
    waker: &Waker,
    read: impl Fn(&S, &mut [u8]) -> io::Result<usize>,
) -> io::Result<()> {
    let mut cx = Context::from_waker(waker);
    let mut buf = [0; 64];
    loop {
        match reg.poll_read_io(&mut cx, |s| read(s, &mut buf)) {
            Poll::Pending => return Ok(()),
            Poll::Ready(Ok(_)) => continue, // drained some; until it would block
            Poll::Ready(Err(err)) => return Err(err),
        }
    }
}

fn read_mio(s: &UnixStream, buf: &mut [u8]) -> io::Result<usize> {
    (&*s).read(buf)
}

/// The reactor slot of a registration, from its `Debug` output (the token
/// is not public; this only proves the slot really was reused).
fn token_of<S: Source + fmt::Debug>(reg: &Registration<S>) -> usize {
    let dbg = format!("{reg:?}");
    let start = dbg.find("Token(").expect("Debug shows the token") + 6;
    let len = dbg[start..].find(')').expect("closing parenthesis");
    dbg[start..start + len].parse().expect("a number")
}

fn slot(token: usize) -> usize {
    token & ((1 << (usize::BITS / 2)) - 1)
}

/// The counters after one more tick (they are published at its end).
async fn after_one_poll() -> Metrics {
    yield_now().await;
    Handle::current().metrics()
}

fn wakes(w: &CountingWaker) -> usize {
    w.wakes.load(Ordering::SeqCst)
}

#[test]
fn an_fd_closed_and_reused_within_one_poll_batch_gets_only_its_own_events() -> io::Result<()> {
    const ROUNDS: usize = 50;
    util::within(Duration::from_secs(60), || {
        ioloop::block_on(async {
            let (old_ours, mut old_peer) = StdUnixStream::pair()?;
            old_ours.set_nonblocking(true)?;
            // The file stays open through this duplicate after the
            // registered descriptor is closed.
            let keep = old_ours.try_clone()?;
            let old_fd: RawFd = old_ours.as_raw_fd();
            let old = Registration::new(ClosedElsewhere(old_fd))?;
            let old_token = token_of(&old);
            let old_wakes = Arc::new(CountingWaker::default());
            park_reader(&old, &Waker::from(old_wakes.clone()), |_, b| {
                (&old_ours).read(b)
            })?;

            // A bystander whose events share the batches.
            let (by, mut by_peer) = UnixStream::pair()?;
            let by = Registration::new(by)?;
            after_one_poll().await; // the registrations' first edges

            drop(old); // not deregistered
            // The new socket takes the old number. Not by closing and
            // hoping the kernel hands the lowest free number back: the
            // tests beside this one open descriptors on other threads and
            // could take it first. dup2 closes the old descriptor and puts
            // the new socket in its place in one step.
            let (fresh, mut new_peer) = StdUnixStream::pair()?;
            fresh.set_nonblocking(true)?;
            // SAFETY: both are open descriptors this test owns; dup2 only
            // changes which file `old_fd` refers to, and `old_ours` goes
            // on owning that number (now the new socket) and closes it.
            let r = unsafe { libc::dup2(fresh.as_raw_fd(), old_fd) };
            if r < 0 {
                return Err(io::Error::last_os_error());
            }
            drop(fresh);
            let new = UnixStream::from_std(old_ours);
            assert_eq!(new.as_raw_fd(), old_fd, "dup2 gave another number");
            let new = Registration::new(new)?;
            let new_token = token_of(&new);
            assert_eq!(
                slot(new_token),
                slot(old_token),
                "the new source did not get the old slot"
            );
            assert_ne!(new_token, old_token, "a reused slot kept its generation");
            after_one_poll().await;

            let mut stale_seen = 0;
            for round in 0..ROUNDS {
                let new_wakes = Arc::new(CountingWaker::default());
                let by_wakes = Arc::new(CountingWaker::default());
                park_reader(&new, &Waker::from(new_wakes.clone()), read_mio)?;
                park_reader(&by, &Waker::from(by_wakes.clone()), read_mio)?;
                let before = Handle::current().metrics();
                // All three become readable before the loop polls again:
                // their events come back from one epoll_wait.
                old_peer.write_all(b"stale")?;
                new_peer.write_all(b"fresh")?;
                by_peer.write_all(b"other")?;
                let after = after_one_poll().await;
                assert_eq!(
                    after.ticks - before.ticks,
                    1,
                    "round {round}: more than one poll"
                );
                assert_eq!(
                    after.io_events - before.io_events,
                    3,
                    "round {round}: {after:?}"
                );
                assert_eq!(
                    after.stale_io_events - before.stale_io_events,
                    1,
                    "round {round}"
                );
                stale_seen += after.stale_io_events - before.stale_io_events;
                assert_eq!(
                    wakes(&old_wakes),
                    0,
                    "round {round}: the dropped source's waker ran"
                );
                assert_eq!(
                    wakes(&new_wakes),
                    1,
                    "round {round}: the new source missed its event"
                );
                assert_eq!(wakes(&by_wakes), 1, "round {round}");
                let mut buf = [0; 16];
                let n = std::future::poll_fn(|cx| new.poll_read_io(cx, |s| read_mio(s, &mut buf)))
                    .await?;
                assert_eq!(&buf[..n], b"fresh", "round {round}");
            }
            // The old socket's bytes went to no one: they wait in its file.
            let mut left = vec![0; 5 * ROUNDS];
            (&keep).read_exact(&mut left)?;
            assert!(left.chunks(5).all(|c| c == b"stale"));
            println!(
                "{ROUNDS} batches, each with a stale event for fd {old_fd} and a fresh one for its new owner: {stale_seen} dropped, none delivered"
            );
            drop(keep); // closes the file: its epoll entry goes with it
            io::Result::Ok(())
        })
    })
}
