//! The floor: the lesson's `Reactor` written by hand on mio, with no
//! executor, no tasks and no wakers (issue 6).
//!
//! ```sh
//! cargo run --release -p testkit --example mio_reference -- --protocol line --port 9102
//! nc 127.0.0.1 9102
//! ```
//!
//! One thread, one `mio::Poll`, every socket registered once for reading
//! and writing, edge-triggered. A readable connection is read until the
//! kernel buffer is empty (a short `recv` says so, so the `EAGAIN` call is
//! skipped), every complete line is answered into the outbuf, and the
//! outbuf is sent at once; what the kernel does not take waits for the next
//! writable edge. That is one `recv` and one `send` per message, plus an
//! `epoll_wait` shared by every connection ready in the same tick: the
//! syscall floor any readiness-based runtime can reach, and the reference
//! the comparison measures ioloop against.
//!
//! `--protocol line` speaks `line_echo`'s protocol (greeting, `[echo]`
//! replies, `ERR` and close past `--max-line`); `--protocol http` answers
//! every HTTP/1.1 request with `Hello, World!` using the same parser as the
//! HTTP examples. No idle timeout: a reference for throughput and CPU, not
//! a server to expose.

#[path = "../common/args.rs"]
mod args;
mod conn;
#[path = "../common/http.rs"]
mod http;

use std::io;
use std::net::{Ipv4Addr, SocketAddr};

use mio::net::TcpListener;
use mio::{Events, Interest, Poll, Token};
use slab::Slab;

use conn::{Conn, Protocol};

const USAGE: &str = "usage: mio_reference [--protocol line|http] [--port 9102] [--max-line 65536]";
const LISTENER: Token = Token(usize::MAX);

fn main() -> io::Result<()> {
    let args = args::Args::parse(USAGE);
    let protocol = match args.get("protocol", String::from("line")).as_str() {
        "line" => Protocol::Line {
            max_line: args.get("max-line", 65_536),
        },
        "http" => Protocol::Http,
        other => {
            eprintln!("unknown protocol {other:?}\n{USAGE}");
            std::process::exit(2);
        }
    };
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, args.get("port", 9102)));
    let mut listener = TcpListener::bind(addr)?;
    let mut poll = Poll::new()?;
    poll.registry()
        .register(&mut listener, LISTENER, Interest::READABLE)?;
    eprintln!("mio_reference listening on {}", listener.local_addr()?);
    let mut conns: Slab<Conn> = Slab::new();
    let mut events = Events::with_capacity(1024);
    loop {
        if let Err(err) = poll.poll(&mut events, None) {
            if err.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(err);
        }
        for event in events.iter() {
            if event.token() == LISTENER {
                accept_all(&listener, &poll, &mut conns, protocol);
                continue;
            }
            let key = event.token().0;
            let Some(conn) = conns.get_mut(key) else {
                continue;
            };
            let alive = conn.on_event(event.is_readable(), event.is_writable());
            if !alive {
                let mut conn = conns.remove(key);
                // The fd closes next; deregistering first keeps epoll's set
                // exact even if the socket were shared.
                let _ = poll.registry().deregister(conn.stream());
            }
        }
    }
}

/// Accepts until the queue is empty (edge-triggered: one event may stand
/// for many connections).
fn accept_all(listener: &TcpListener, poll: &Poll, conns: &mut Slab<Conn>, protocol: Protocol) {
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
                    entry.insert(conn);
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
