//! The reference server's loop: one `mio::Poll`, the listener and every
//! connection registered once, edge-triggered; with an idle timeout, the
//! lesson's heap of deadlines, whose nearest is the poll's timeout.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io;
use std::time::{Duration, Instant};

use mio::net::TcpListener;
use mio::{Events, Interest, Poll, Token};
use slab::Slab;

use super::conn::{Conn, Protocol};

const LISTENER: Token = Token(usize::MAX);

/// Each connection's idle deadline as last looked at, with the connection's
/// key and its serial number (a key is reused; the serial is not).
/// Deadlines are not moved when bytes arrive, which would cost a heap
/// operation a message: a deadline that falls due is checked against the
/// connection's `last_seen` and pushed again if it has moved on.
type Deadlines = BinaryHeap<Reverse<(Instant, usize, u64)>>;

/// Serves `listener` with `protocol` until polling fails.
pub fn serve(mut listener: TcpListener, protocol: Protocol) -> io::Result<()> {
    let mut poll = Poll::new()?;
    poll.registry()
        .register(&mut listener, LISTENER, Interest::READABLE)?;
    let idle = match protocol {
        Protocol::Line { idle, .. } => idle,
        _ => None,
    };
    let mut conns: Slab<(Conn, u64)> = Slab::new();
    let mut deadlines = Deadlines::new();
    let mut serial = 0;
    let mut events = Events::with_capacity(1024);
    loop {
        let timeout = deadlines
            .peek()
            .map(|Reverse((at, ..))| at.saturating_duration_since(Instant::now()));
        if let Err(err) = poll.poll(&mut events, timeout) {
            if err.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(err);
        }
        for event in events.iter() {
            if event.token() == LISTENER {
                accept_all(&listener, &poll, &mut conns, protocol, |key| {
                    serial += 1;
                    if let Some(idle) = idle {
                        deadlines.push(Reverse((Instant::now() + idle, key, serial)));
                    }
                    serial
                });
                continue;
            }
            let key = event.token().0;
            let Some((conn, _)) = conns.get_mut(key) else {
                continue;
            };
            let alive = conn.on_event(
                event.is_readable(),
                event.is_writable(),
                event.is_read_closed(),
            );
            if !alive {
                close(&poll, &mut conns, key);
            }
        }
        if let Some(idle) = idle {
            expire(&poll, &mut conns, &mut deadlines, idle);
        }
    }
}

/// Closes the connections whose idle deadline has passed with no byte
/// from them (as `line_echo`, with no notice: the client reads the end of
/// the stream); pushes the others' deadlines on.
fn expire(poll: &Poll, conns: &mut Slab<(Conn, u64)>, deadlines: &mut Deadlines, idle: Duration) {
    let now = Instant::now();
    while let Some(&Reverse((at, key, serial))) = deadlines.peek() {
        if at > now {
            return;
        }
        deadlines.pop();
        let Some((conn, _)) = conns.get(key).filter(|(_, s)| *s == serial) else {
            continue; // gone already
        };
        let due = conn.idle_deadline(idle);
        if due <= now {
            close(poll, conns, key);
        } else {
            deadlines.push(Reverse((due, key, serial)));
        }
    }
}

fn close(poll: &Poll, conns: &mut Slab<(Conn, u64)>, key: usize) {
    let (mut conn, _) = conns.remove(key);
    // The fd closes next; deregistering first keeps epoll's set exact even
    // if the socket were shared.
    let _ = poll.registry().deregister(conn.stream());
}

/// Accepts until the queue is empty (edge-triggered: one event may stand
/// for many connections); `admit` gives each its serial number.
fn accept_all(
    listener: &TcpListener,
    poll: &Poll,
    conns: &mut Slab<(Conn, u64)>,
    protocol: Protocol,
    mut admit: impl FnMut(usize) -> u64,
) {
    loop {
        match listener.accept() {
            Ok((stream, _)) => {
                let entry = conns.vacant_entry();
                let token = Token(entry.key());
                let mut conn = Conn::new(stream, protocol);
                if poll
                    .registry()
                    .register(
                        conn.stream(),
                        token,
                        Interest::READABLE | Interest::WRITABLE,
                    )
                    .is_ok()
                    && conn.greet()
                {
                    let serial = admit(entry.key());
                    entry.insert((conn, serial));
                }
            }
            Err(err) if err.kind() == io::ErrorKind::WouldBlock => return,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
            Err(err) => {
                // EMFILE and the like: a reference server reports and waits
                // for the next edge rather than spinning.
                eprintln!("accept failed: {err}");
                return;
            }
        }
    }
}
