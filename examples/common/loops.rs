//! `--loops N`: how an ioloop server grows past one core. Each loop is a
//! runtime of its own on a thread of its own, with a listener of its own
//! on the same port, opened with `SO_REUSEPORT`; the kernel spreads new
//! connections among the listeners by a hash of each connection's
//! addresses. The loops share nothing on the way of a message: no lock, no
//! queue, no wake from one thread to another. Tornado's `fork_processes`
//! does the same with processes; here the loops are threads of one
//! process.
//!
//! A connection stays on the loop that accepted it, so a loop with more
//! than its share of busy connections is not helped by an idle one.
//!
//! Shared (with `#[path]`) by line_echo and http_hello.

use std::io;
use std::net::SocketAddr;
use std::sync::{Arc, mpsc};
use std::thread;

use ioloop::Runtime;
use ioloop::net::{TcpListener, TcpSocket};

/// The listen backlog, as `TcpListener::bind` has it.
const BACKLOG: u32 = 1024;

/// Opens one loop's listener on `addr`, registered with the runtime
/// entered on this thread. With `shared`, the other loops may open the
/// same port too (`SO_REUSEPORT`, which every one of them must set).
pub fn listen(addr: SocketAddr, shared: bool) -> io::Result<TcpListener> {
    let socket = if addr.is_ipv4() {
        TcpSocket::new_v4()?
    } else {
        TcpSocket::new_v6()?
    };
    socket.set_reuseaddr(true)?;
    if shared {
        socket.set_reuseport(true)?;
    }
    socket.bind(addr)?;
    socket.listen(BACKLOG)
}

/// The loops after the first, each running on a thread of its own.
pub type Others<T> = Vec<thread::JoinHandle<io::Result<T>>>;

/// Starts loops `1..n` on `addr` (a port already opened by loop 0, with
/// `SO_REUSEPORT`): each makes its runtime with `make` and its listener on
/// its own thread, then runs `body(index, runtime, listener)`. Returns once every
/// one of them listens, so no connection made after it misses a loop.
///
/// # Errors
///
/// The first loop that could not make its runtime or its listener; the
/// loops already running are left to the caller's stop.
pub fn start<T, F, M>(n: usize, addr: SocketAddr, make: M, body: F) -> io::Result<Others<T>>
where
    T: Send + 'static,
    F: Fn(usize, Runtime, TcpListener) -> io::Result<T> + Send + Sync + 'static,
    M: Fn() -> io::Result<Runtime> + Send + Clone + 'static,
{
    let body = Arc::new(body);
    let (ready_tx, ready) = mpsc::channel();
    let mut others = Vec::with_capacity(n.saturating_sub(1));
    for index in 1..n {
        let (body, ready_tx, make) = (body.clone(), ready_tx.clone(), make.clone());
        let thread = thread::Builder::new()
            .name(format!("loop-{index}"))
            .spawn(move || {
                let opened = make().and_then(|rt| {
                    let listener = {
                        let _entered = rt.enter();
                        listen(addr, true)?
                    };
                    Ok((rt, listener))
                });
                let (rt, listener) = match opened {
                    Ok(opened) => {
                        let _ = ready_tx.send(Ok(()));
                        opened
                    }
                    Err(err) => {
                        let _ = ready_tx.send(Err(io::Error::new(err.kind(), err.to_string())));
                        return Err(err);
                    }
                };
                body(index, rt, listener)
            })?;
        others.push(thread);
    }
    drop(ready_tx);
    for _ in 1..n {
        // A thread that died before answering closes the channel.
        ready
            .recv()
            .map_err(|_| io::Error::other("a loop's thread ended before it listened"))??;
    }
    Ok(others)
}

/// Waits for every loop [`start`] started, and returns what each returned,
/// in loop order (loop 1 first).
///
/// # Errors
///
/// The first loop that failed or panicked.
// line_echo joins its loops after a stop; http_hello's serve until the
// process ends.
#[allow(dead_code)]
pub fn join<T>(others: Others<T>) -> io::Result<Vec<T>> {
    others
        .into_iter()
        .map(|thread| {
            thread
                .join()
                .map_err(|_| io::Error::other("a loop's thread panicked"))?
        })
        .collect()
}
