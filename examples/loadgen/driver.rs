//! The load generator's loop: connect everything, wait for the greetings,
//! then keep every connection's pipeline full until the run ends.
//!
//! Phases are fixed instants, decided once the greetings are in: warm-up
//! from `start`, measurement from `start + warmup` to `until`. A reply
//! counts if it completed inside the measured window, whenever its message
//! was sent; replies still in flight at the end are not counted.

use std::io;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use mio::event::Event;
use mio::net::TcpStream;
use mio::{Events, Interest, Poll, Token};

use crate::conn::{Conn, Fault};
use crate::opts::Options;
use crate::protocol::Messages;

const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
const GREETING_TIMEOUT: Duration = Duration::from_secs(10);
/// Room for many replies per `recv`, so pipelined replies arrive in one
/// call; a short read then also tells that the socket is drained.
const SCRATCH_BYTES: usize = 64 * 1024;
/// Latencies are recorded in nanoseconds, up to a minute, to 3 digits.
const MAX_LATENCY_NS: u64 = 60_000_000_000;

/// What a run measured.
pub struct Outcome {
    /// Replies completed in the measured window.
    pub messages: u64,
    /// Length of the measured window (shorter than `--duration` only if
    /// every connection failed before its end).
    pub seconds: f64,
    /// Round-trip time per message, in nanoseconds.
    pub latency: Histogram<u64>,
    /// Connections that failed during the run.
    pub errors: u64,
}

/// Runs the load described by `opts`. `Err` is a failure that makes the
/// run meaningless: a connect, a greeting or a reply check failed.
pub fn run(opts: &Options) -> Result<Outcome, String> {
    let mut driver = Driver::connect(opts)?;
    driver.await_greetings()?;

    let start = Instant::now();
    let measure_from = start + opts.warmup;
    let until = measure_from + opts.duration;
    let mut latency = Histogram::new_with_bounds(1, MAX_LATENCY_NS, 3).expect("valid bounds");
    let mut messages = 0u64;
    let mut errors = 0u64;
    let mut done = |sent_at: Instant, now: Instant| {
        if now >= measure_from && now < until {
            let ns = now.duration_since(sent_at).as_nanos();
            latency.saturating_record(u64::try_from(ns).unwrap_or(u64::MAX));
            messages += 1;
        }
    };

    let mut faults = Vec::new();
    for (id, conn) in driver.conns.iter_mut().enumerate() {
        let conn = conn.as_mut().expect("all connected");
        if let Err(fault) = conn.send(&driver.msgs, opts.depth) {
            faults.push((id, fault));
        }
    }
    let mut now = Instant::now();
    loop {
        for (id, fault) in faults.drain(..) {
            if let Fault::Mismatch(why) = fault {
                return Err(why);
            }
            eprintln!("loadgen: connection {id} failed: {}", describe(&fault));
            driver.close(id);
            errors += 1;
        }
        if now >= until || driver.live == 0 {
            break;
        }
        driver.turn(until, &mut done, &mut faults)?;
        now = Instant::now();
    }
    let seconds = now.min(until).saturating_duration_since(measure_from);
    Ok(Outcome {
        messages,
        seconds: seconds.as_secs_f64(),
        latency,
        errors,
    })
}

/// The poller, the connections, and the buffers they share.
struct Driver {
    poll: Poll,
    events: Events,
    /// Indexed by token; `None` once a connection failed.
    conns: Vec<Option<Conn>>,
    live: usize,
    msgs: Messages,
    scratch: Vec<u8>,
}

impl Driver {
    /// Opens every connection, one after another, before any load starts.
    fn connect(opts: &Options) -> Result<Driver, String> {
        let poll = Poll::new().map_err(|e| format!("cannot create the poller: {e}"))?;
        let msgs = Messages::new(opts.protocol, opts.size);
        let mut conns = Vec::with_capacity(opts.connections);
        for id in 0..opts.connections {
            let stream = open(opts, &poll, id).map_err(|e| {
                format!(
                    "connection {id} of {} to {} failed: {e}{}",
                    opts.connections,
                    opts.addr,
                    if e.raw_os_error() == Some(24) {
                        " (raise `ulimit -n`)"
                    } else {
                        ""
                    }
                )
            })?;
            conns.push(Some(Conn::new(stream, id, &msgs, opts.depth)));
        }
        Ok(Driver {
            poll,
            events: Events::with_capacity(1024),
            live: conns.len(),
            conns,
            msgs,
            scratch: vec![0; SCRATCH_BYTES],
        })
    }

    /// Waits until every connection has its greeting, so the load starts
    /// on connections the server has accepted and is serving.
    fn await_greetings(&mut self) -> Result<(), String> {
        let deadline = Instant::now() + GREETING_TIMEOUT;
        let mut faults = Vec::new();
        loop {
            let missing = self.conns.iter().flatten().filter(|c| !c.greeted).count();
            if missing == 0 {
                return Ok(());
            }
            if Instant::now() >= deadline {
                return Err(format!(
                    "{missing} of {} connections got no greeting within {GREETING_TIMEOUT:?}",
                    self.conns.len()
                ));
            }
            self.turn(deadline, &mut |_, _| {}, &mut faults)?;
            if let Some((id, fault)) = faults.first() {
                return Err(format!(
                    "connection {id}, waiting for the greeting: {}",
                    describe(fault)
                ));
            }
        }
    }

    /// One poll and its events. Faults go to `faults`, to be handled
    /// outside the borrow of the connections.
    fn turn(
        &mut self,
        deadline: Instant,
        done: &mut impl FnMut(Instant, Instant),
        faults: &mut Vec<(usize, Fault)>,
    ) -> Result<(), String> {
        let timeout = deadline.saturating_duration_since(Instant::now());
        match self.poll.poll(&mut self.events, Some(timeout)) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => return Ok(()),
            Err(e) => return Err(format!("poll failed: {e}")),
        }
        for event in self.events.iter() {
            let id = event.token().0;
            let Some(conn) = self.conns[id].as_mut() else {
                continue;
            };
            let result = on_event(conn, event, &self.msgs, &mut self.scratch, done);
            if let Err(fault) = result {
                faults.push((id, fault));
            }
        }
        Ok(())
    }

    fn close(&mut self, id: usize) {
        if let Some(mut conn) = self.conns[id].take() {
            // Closing the socket removes it from the epoll set anyway;
            // deregistering first only keeps mio's bookkeeping tidy.
            let _ = self.poll.registry().deregister(&mut conn.stream);
            self.live -= 1;
        }
    }
}

/// A blocking connect (clear errors, and every connection exists before
/// the load starts), then non-blocking from here on.
fn open(opts: &Options, poll: &Poll, id: usize) -> io::Result<TcpStream> {
    let std = std::net::TcpStream::connect_timeout(&opts.addr, CONNECT_TIMEOUT)?;
    // Without it, Nagle holds back a message while an earlier one of the
    // same connection is unacknowledged: pipelining would measure delayed
    // ACKs.
    std.set_nodelay(true)?;
    std.set_nonblocking(true)?;
    let mut stream = TcpStream::from_std(std);
    poll.registry().register(
        &mut stream,
        Token(id),
        Interest::READABLE | Interest::WRITABLE,
    )?;
    Ok(stream)
}

fn on_event(
    conn: &mut Conn,
    event: &Event,
    msgs: &Messages,
    scratch: &mut [u8],
    done: &mut impl FnMut(Instant, Instant),
) -> Result<(), Fault> {
    if event.is_readable() || event.is_read_closed() || event.is_error() {
        let completed = conn.on_readable(msgs, scratch, event.is_read_closed(), done)?;
        if completed > 0 {
            conn.send(msgs, completed)?;
        }
    }
    if event.is_writable() {
        conn.flush()?;
    }
    Ok(())
}

fn describe(fault: &Fault) -> String {
    match fault {
        Fault::Io(e) => e.to_string(),
        Fault::Closed => "closed by the server".to_string(),
        Fault::Mismatch(why) => why.clone(),
    }
}
