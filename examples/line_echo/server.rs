//! Running the server as a program: bind, serve until Ctrl-C or SIGTERM,
//! let the connections finish their lines, say `reactor stopped` (the
//! lesson's last line), exit 0.
//!
//! Shared by `main.rs` and by tests/signal/line_echo.rs, which runs it in
//! a child process and sends it SIGINT.

use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::time::Duration;

use ioloop::net::TcpListener;
use ioloop::signal::{Signal, SignalKind};

use crate::handler::{self, Config, Either, End};

/// Serves on 127.0.0.1:`port` until Ctrl-C or SIGTERM, then gives open
/// connections up to `grace` to finish their current line.
pub fn run(port: u16, config: Config, grace: Duration) -> io::Result<()> {
    let rt = ioloop::Runtime::new()?;
    rt.block_on(async {
        // Listen for the signals before accepting anyone, so a signal that
        // comes early is not lost (or fatal).
        let mut interrupt = Signal::new(SignalKind::interrupt())?;
        let mut terminate = Signal::new(SignalKind::terminate())?;
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, port)).await?;
        eprintln!("line_echo listening on {}", listener.local_addr()?);
        let shutdown = async {
            let which = match handler::first(interrupt.recv(), terminate.recv()).await {
                Either::Left(_) => "SIGINT",
                Either::Right(_) => "SIGTERM",
            };
            eprintln!("{which}: stopping; open connections finish their line");
        };
        handler::serve(
            listener,
            config,
            move |peer, end| log(peer, end, config),
            shutdown,
        )
        .await
    })?;
    let report = rt.shutdown_timeout(grace);
    if report.cancelled_tasks > 0 {
        eprintln!(
            "closed {} connection(s) still busy after {grace:?}",
            report.cancelled_tasks
        );
    }
    eprintln!("reactor stopped");
    Ok(())
}

fn log(peer: SocketAddr, end: Option<&End>, config: Config) {
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
    // One write per line: stderr is unbuffered, and `eprintln!` would make
    // a write(2) per formatted piece, which the syscall counts would see.
    let _ = std::io::Write::write_all(&mut std::io::stderr(), format!("{line}\n").as_bytes());
}
