//! A loop asleep in the poller, with nothing to do but wait for a signal,
//! sleeps (a few ticks, no spinning) and is woken by the signal, wherever
//! the handler runs.
//!
//! Each test raises a signal no other test in this binary raises (main.rs
//! lists them): these tests run in parallel. SIGVTALRM and SIGPROF, not
//! SIGUSR1 and SIGUSR2, which `recv` raises.

use std::ffi::c_int;
use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use ioloop::signal::{Signal, SignalKind};
use testkit::{signal_raise, util};

/// Sends the signal from another thread, after a pause that makes it
/// likely the loop is asleep in `epoll_wait` by then. The assertions do not
/// depend on it: a loop that had not gone to sleep yet passes them too.
fn send_later(send: fn(c_int) -> io::Result<()>, signum: c_int) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(50));
        send(signum).expect("send the signal");
    })
}

/// Waits for `signum` on a fresh runtime with no timer armed (the safety
/// net is `within`, outside the loop), so only the signal can wake it, and
/// returns how many ticks and I/O events that took.
fn wait_for(signum: c_int, send: fn(c_int) -> io::Result<()>) -> io::Result<(u64, u64)> {
    util::within(Duration::from_secs(10), move || {
        let rt = ioloop::Runtime::new()?;
        let (ticks, events) = rt.block_on(async {
            let mut listener = Signal::new(SignalKind::from_raw(signum))?;
            let before = ioloop::Handle::current().metrics();
            let sender = send_later(send, signum);
            listener.recv().await?;
            let after = ioloop::Handle::current().metrics();
            sender.join().expect("the sending thread panicked");
            Ok::<_, io::Error>((
                after.ticks - before.ticks,
                after.io_events - before.io_events,
            ))
        })?;
        Ok((ticks, events))
    })
}

#[test]
fn a_signal_handled_on_another_thread_wakes_the_sleeping_loop() -> io::Result<()> {
    // raise() runs the handler on the sending thread; the loop learns of it
    // only through the pipe's readiness.
    let (ticks, events) = wait_for(libc::SIGVTALRM, signal_raise::raise)?;
    assert!(events >= 1, "woken without an I/O event");
    assert!(
        ticks < 10,
        "{ticks} ticks waiting for one signal: the loop spun"
    );
    Ok(())
}

#[test]
fn a_signal_sent_to_the_process_wakes_the_sleeping_loop() -> io::Result<()> {
    // kill() lets the kernel pick the thread; when it is the loop's, the
    // handler interrupts epoll_wait (EINTR) and the pipe event follows.
    let (ticks, events) = wait_for(libc::SIGPROF, signal_raise::kill_self)?;
    assert!(events >= 1, "woken without an I/O event");
    assert!(
        ticks < 10,
        "{ticks} ticks waiting for one signal: the loop spun"
    );
    Ok(())
}

/// A signal handled on the loop's own thread while it waits in
/// `epoll_wait` interrupts the wait (EINTR): the loop takes that as a wake
/// with no events and waits again, the one place it does, rather than
/// failing. The signal is sent to the loop's thread every 2 ms through a
/// 100 ms sleep, so that some land inside the wait; a loop that took one
/// for an error would panic out of `block_on`.
#[test]
fn a_signal_handled_on_the_loop_thread_while_it_waits_is_a_wake_not_an_error() -> io::Result<()> {
    let signum = libc::SIGRTMIN() + 4;
    util::within(Duration::from_secs(10), move || {
        let rt = ioloop::Runtime::new()?;
        rt.block_on(async {
            // Installs the handler, so the signal does not kill the process.
            let _listener = Signal::new(SignalKind::from_raw(signum))?;
            let loop_thread = signal_raise::this_thread();
            let done = Arc::new(AtomicBool::new(false));
            let sender = {
                let done = done.clone();
                std::thread::spawn(move || {
                    // At least once, however late this thread starts.
                    let mut sent = 0u32;
                    loop {
                        signal_raise::to_thread(loop_thread, signum).expect("send the signal");
                        sent += 1;
                        std::thread::sleep(Duration::from_millis(2));
                        if done.load(Ordering::Acquire) {
                            break sent;
                        }
                    }
                })
            };
            let start = ioloop::time::Instant::now();
            ioloop::time::sleep(Duration::from_millis(100)).await;
            assert!(start.elapsed() >= Duration::from_millis(100));
            // Stopped while the loop's thread is still alive: the sender
            // never signals a thread that has gone.
            done.store(true, Ordering::Release);
            let sent = sender.join().expect("the sending thread panicked");
            assert!(sent >= 1);
            Ok::<_, io::Error>(())
        })
    })
}
