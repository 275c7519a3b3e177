//! Running the server as a program: bind, serve until Ctrl-C or SIGTERM,
//! let the connections finish their lines, say `reactor stopped` (the
//! lesson's last line), exit 0. With `--loops N`, N loops serve the same
//! port (examples/common/loops.rs), and all of them stop on the signal.
//! On SIGQUIT (Ctrl-\\) it prints its tasks to stderr, as a JVM prints its
//! threads, and goes on serving.
//!
//! Shared by `main.rs`, by tests/signal/line_echo.rs, which runs it in a
//! child process and sends it SIGINT and SIGQUIT, and by
//! tests/servers/loops.rs.

use std::future::Future;
use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::time::Duration;

use ioloop::signal::{Signal, SignalKind};
use ioloop::{Handle, Runtime, ShutdownReport};

use crate::handler::{self, Config, Either, End, Stop};
use crate::loops;

/// Serves on 127.0.0.1:`port` with `loops` loops until Ctrl-C or SIGTERM,
/// then gives open connections up to `grace` to finish their current line.
pub fn run(port: u16, loops: usize, config: Config, grace: Duration) -> io::Result<()> {
    let signals = || {
        // Made before any listener, so a signal that comes early is not
        // lost (or fatal).
        let mut interrupt = Signal::new(SignalKind::interrupt())?;
        let mut terminate = Signal::new(SignalKind::terminate())?;
        let quit = Signal::new(SignalKind::quit())?;
        Ok(async move {
            let stop = handler::first(interrupt.recv(), terminate.recv());
            let which = match handler::first(stop, dump_on_quit(quit)).await {
                Either::Left(Either::Left(_)) => "SIGINT",
                Either::Left(Either::Right(_)) => "SIGTERM",
                Either::Right(never) => match never {},
            };
            eprintln!("{which}: stopping; open connections finish their line");
        })
    };
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let on_event = move |index, peer, end: Option<&End>| log(index, loops, peer, end, config);
    let listening = |addr| match loops {
        1 => eprintln!("line_echo listening on {addr}"),
        n => eprintln!("line_echo listening on {addr} with {n} loops"),
    };
    let reports = serve_loops(addr, loops, config, grace, signals, on_event, listening)?;
    for (index, report) in reports.iter().enumerate() {
        if report.cancelled_tasks > 0 {
            let which = if loops > 1 {
                format!("loop {index}: ")
            } else {
                String::new()
            };
            eprintln!(
                "{which}closed {} connection(s) still busy after {grace:?}",
                report.cancelled_tasks
            );
        }
    }
    eprintln!("reactor stopped");
    Ok(())
}

/// The server, for `run` and for tests: `loops` loops serve `addr` until
/// the future that `shutdown` makes (on loop 0, before any listener
/// opens) completes; then each loop gives its open connections up to
/// `grace`. `on_event(loop, peer, end)` hears of every connect (`end` is
/// `None`) and every disconnect; `listening(addr)` is told the address
/// once every loop listens. Returns each loop's shutdown report, loop 0
/// first.
///
/// # Errors
///
/// A loop that could not start, or a listener's own error.
pub fn serve_loops<S, F, E>(
    addr: SocketAddr,
    loops: usize,
    config: Config,
    grace: Duration,
    shutdown: S,
    on_event: E,
    listening: impl FnOnce(SocketAddr),
) -> io::Result<Vec<ShutdownReport>>
where
    S: FnOnce() -> io::Result<F>,
    F: Future<Output = ()>,
    E: Fn(usize, SocketAddr, Option<&End>) + Clone + Send + Sync + 'static,
{
    let loops = loops.max(1);
    let slow_poll = config.slow_poll_threshold;
    let rt = runtime(slow_poll)?;
    // Set by loop 0 when `shutdown` completes; the other loops wait on it.
    let stop = Stop::default();
    let (listener, shutdown, others) = {
        let _entered = rt.enter();
        let shutdown = shutdown()?;
        let listener = loops::listen(addr, loops > 1)?;
        let addr = listener.local_addr()?;
        let (stop, on_event) = (stop.clone(), on_event.clone());
        let make = move || runtime(slow_poll);
        let others = loops::start(loops, addr, make, move |index, rt, listener| {
            let on_event = on_event.clone();
            let mut stopped = stop.listener();
            let events = move |peer, end: Option<&End>| on_event(index, peer, end);
            rt.block_on(handler::serve(listener, config, events, stopped.wait()))?;
            Ok(rt.shutdown_timeout(grace))
        })?;
        listening(addr);
        (listener, shutdown, others)
    };
    let events = move |peer, end: Option<&End>| on_event(0, peer, end);
    let served = rt.block_on(handler::serve(listener, config, events, async {
        shutdown.await;
        stop.stop();
    }));
    // The other loops were told to stop even if this one failed.
    stop.stop();
    let mut reports = vec![rt.shutdown_timeout(grace)];
    let others = loops::join(others);
    served?;
    reports.extend(others?);
    Ok(reports)
}

/// One loop's runtime: the default one, with the stall detector set to
/// `slow_poll` (`None`: off).
fn runtime(slow_poll: Option<Duration>) -> io::Result<Runtime> {
    Runtime::builder().slow_poll_threshold(slow_poll).build()
}

/// Prints the tasks of loop 0 to stderr at every SIGQUIT (Ctrl-\\): each
/// with its spawn location, state, polls, age and what it waits on.
async fn dump_on_quit(mut quit: Signal) -> std::convert::Infallible {
    while quit.recv().await.is_ok() {
        let dump = Handle::current().dump();
        let _ = std::io::Write::write_all(&mut std::io::stderr(), format!("{dump}\n").as_bytes());
    }
    std::future::pending().await
}

fn log(index: usize, loops: usize, peer: SocketAddr, end: Option<&End>, config: Config) {
    let line = match end {
        None => format!("connected: {peer}"),
        Some(End::Closed) => format!("disconnected: {peer}"),
        Some(End::Idle) => format!("disconnected: {peer} (idle for {:?})", config.idle_timeout),
        Some(End::LineTooLong) => {
            format!("disconnected: {peer} (line over {} bytes)", config.max_line)
        }
        Some(End::Stopped) => format!("disconnected: {peer} (server stopping)"),
        Some(End::Failed(err)) => format!("disconnected: {peer} ({err})"),
    };
    let line = if loops > 1 {
        format!("loop {index}: {line}\n")
    } else {
        format!("{line}\n")
    };
    // One write per line: stderr is unbuffered, and `eprintln!` would make
    // a write(2) per formatted piece, which the syscall counts would see.
    let _ = std::io::Write::write_all(&mut std::io::stderr(), line.as_bytes());
}
