//! Running the tokio twin as a program: bind, serve until Ctrl-C or
//! SIGTERM, let the connections finish their lines, say `reactor stopped`
//! (the lesson's last line, kept so both twins end alike), exit 0.

use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::runtime::Runtime;
use tokio::signal::unix::{SignalKind, signal};

use crate::handler::{self, Config, End};

/// Serves on 127.0.0.1:`port` until Ctrl-C or SIGTERM, then gives open
/// connections up to `grace` to finish their current line.
pub fn run(runtime: Runtime, port: u16, config: Config, grace: Duration) -> io::Result<()> {
    let cut_off = runtime.block_on(async {
        // `signal()` installs the handler now, before anyone connects; a
        // `ctrl_c()` future would only install it when first polled, and a
        // signal before that would kill the process.
        let mut interrupt = signal(SignalKind::interrupt())?;
        let mut terminate = signal(SignalKind::terminate())?;
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, port)).await?;
        eprintln!("line_echo_tokio listening on {}", listener.local_addr()?);
        let shutdown = async {
            let which = tokio::select! {
                _ = interrupt.recv() => "SIGINT",
                _ = terminate.recv() => "SIGTERM",
            };
            eprintln!("{which}: stopping; open connections finish their line");
        };
        let log = move |peer, end: Option<&End>| log(peer, end, config);
        io::Result::Ok(handler::serve(listener, config, log, shutdown, grace).await)
    })?;
    if cut_off > 0 {
        eprintln!("closed {cut_off} connection(s) still busy after {grace:?}");
    }
    drop(runtime);
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
