//! The `line_echo_tokio` example's handler (the tokio twin of `line_echo`)
//! against real clients on 127.0.0.1, with the checks
//! tests/servers/line_echo.rs makes of the ioloop version: the greeting,
//! echoes, the line limit, an endless line, the idle timeout, a
//! half-close, and a graceful stop. The twins must speak the same protocol
//! for their comparison to mean anything.

use std::io::{self, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

use handler::Config;
use line_client::Client;
use testkit::{line_client, tokio_handler as handler};

/// Safety net for blocking reads; never what a test measures.
const SAFETY: Duration = Duration::from_secs(20);

/// A line_echo_tokio server on its own thread and current_thread runtime.
struct Server {
    addr: SocketAddr,
    /// How each finished connection ended, as the handler reported it.
    ends: mpsc::Receiver<String>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    /// How many connections were cut off after the grace period.
    cut_off: mpsc::Receiver<usize>,
}

impl Server {
    fn start(config: Config) -> Server {
        let (addr_tx, addr_rx) = mpsc::channel();
        let (ends_tx, ends) = mpsc::channel();
        let (cut_off_tx, cut_off) = mpsc::channel();
        let (stop, stop_rx) = tokio::sync::oneshot::channel();
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async move {
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
                addr_tx.send(listener.local_addr().unwrap()).unwrap();
                // The test may be gone by the time a connection ends.
                let ends_tx = Arc::new(Mutex::new(ends_tx));
                let on_event = move |_, end: Option<&handler::End>| {
                    if let Some(end) = end {
                        let _ = ends_tx.lock().unwrap().send(format!("{end:?}"));
                    }
                };
                let shutdown = async {
                    // Err: the test dropped the server; stop all the same.
                    let _ = stop_rx.await;
                };
                let n = handler::serve(listener, config, on_event, shutdown, SAFETY).await;
                let _ = cut_off_tx.send(n);
            });
        });
        Server {
            addr: addr_rx.recv_timeout(SAFETY).expect("server started"),
            ends,
            stop: Some(stop),
            cut_off,
        }
    }

    fn connect(&self) -> io::Result<Client> {
        Client::connect(self.addr, SAFETY)
    }

    /// How the next connection to finish ended.
    fn next_end(&self) -> String {
        self.ends.recv_timeout(SAFETY).expect("a connection ended")
    }

    /// Sends the stop notice; returns how many connections were cut off.
    fn stop(&mut self) -> usize {
        let _ = self.stop.take().expect("stopped once").send(());
        self.cut_off
            .recv_timeout(SAFETY)
            .expect("the server stopped")
    }
}

#[test]
fn greets_and_echoes_lines_pipelined_or_not() -> io::Result<()> {
    let server = Server::start(Config::default());
    let mut c = server.connect()?;
    line_client::check_echoes(&mut c)?;
    drop(c);
    assert_eq!(server.next_end(), "Closed");
    Ok(())
}

#[test]
fn a_line_at_the_limit_is_echoed_and_one_byte_over_gets_err_and_close() -> io::Result<()> {
    let server = Server::start(Config {
        max_line: 1024,
        ..Config::default()
    });
    let mut c = server.connect()?;
    line_client::check_line_limit_of_1024(&mut c)?;
    assert_eq!(server.next_end(), "LineTooLong");
    Ok(())
}

#[test]
fn an_endless_line_is_cut_off_at_the_limit() -> io::Result<()> {
    let server = Server::start(Config {
        max_line: 4096,
        ..Config::default()
    });
    let mut c = server.connect()?;
    // Far more than the limit, never a newline: the server must answer ERR
    // and close, not buffer it all.
    let mut w = c.stream.try_clone()?;
    let flood = std::thread::spawn(move || {
        let chunk = vec![b'x'; 64 * 1024];
        for _ in 0..64 {
            if w.write_all(&chunk).is_err() {
                break; // the server closed on us: expected
            }
        }
    });
    assert_eq!(c.line()?, "ERR line longer than 4096 bytes");
    flood.join().unwrap();
    assert_eq!(server.next_end(), "LineTooLong");
    Ok(())
}

#[test]
fn a_silent_connection_is_closed_after_the_idle_timeout() -> io::Result<()> {
    let server = Server::start(Config {
        idle_timeout: Duration::from_millis(200),
        ..Config::default()
    });
    let mut c = server.connect()?;
    c.send(b"one\n")?;
    assert_eq!(c.line()?, "[echo] one");
    assert!(c.rest()?.is_empty());
    assert_eq!(server.next_end(), "Idle");
    Ok(())
}

#[test]
fn after_a_half_close_the_client_still_receives_every_reply() -> io::Result<()> {
    let server = Server::start(Config::default());
    let mut c = server.connect()?;
    c.send(b"a\nb\nc")?; // the last line unterminated: EOF ends it
    c.stream.shutdown(Shutdown::Write)?;
    assert_eq!(c.line()?, "[echo] a");
    assert_eq!(c.line()?, "[echo] b");
    assert_eq!(c.line()?, "[echo] c");
    assert!(c.rest()?.is_empty());
    assert_eq!(server.next_end(), "Closed");
    Ok(())
}

#[test]
fn on_stop_an_idle_client_is_closed_and_a_busy_one_finishes_its_line() -> io::Result<()> {
    let mut server = Server::start(Config::default());
    let mut idle = server.connect()?;
    let mut busy = server.connect()?;
    busy.send(b"first\n")?;
    assert_eq!(busy.line()?, "[echo] first");
    // In the server's socket before the stop notice is sent: the handler
    // reads it first (its select is biased to the read).
    busy.send(b"a line in prog")?;
    let stopping = std::thread::scope(|s| {
        let stopping = s.spawn(|| server.stop());
        assert!(idle.rest().unwrap().is_empty());
        busy.send(b"ress\n").unwrap();
        assert_eq!(busy.line().unwrap(), "[echo] a line in progress");
        assert!(busy.rest().unwrap().is_empty());
        stopping.join().unwrap()
    });
    assert_eq!(stopping, 0, "nobody cut off");
    let mut ends = [server.next_end(), server.next_end()];
    ends.sort();
    assert_eq!(ends, ["Stopped", "Stopped"]);
    // Accepting stopped: nobody listens on the port any more.
    assert!(TcpStream::connect(server.addr).is_err());
    Ok(())
}
