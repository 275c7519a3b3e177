//! `Signal`: a listener receives what is raised at the process, keeps what
//! comes before its first `recv`, coalesces bursts, and refuses what it
//! cannot listen for.
//!
//! Each test raises a signal no other test in this binary raises (main.rs
//! lists them): signals are process-wide, and these tests run in parallel.

use std::future::poll_fn;
use std::io::{self, ErrorKind};
use std::pin::pin;
use std::task::Poll;
use std::time::Duration;

use ioloop::signal::{Signal, SignalKind};
use ioloop::time::timeout;
use signal_raise::raise;
use testkit::{signal_raise, util};

/// Safety net against a lost wake-up; never what a test measures.
const LIMIT: Duration = Duration::from_secs(10);

/// Runs `f` on a fresh runtime, failing the test if it hangs.
fn run(f: impl AsyncFnOnce() -> io::Result<()> + Send + 'static) -> io::Result<()> {
    util::within(LIMIT, || ioloop::block_on(async { f().await }))
}

#[test]
fn a_listener_waiting_in_recv_receives_the_signal() -> io::Result<()> {
    run(async || {
        let mut usr1 = Signal::new(SignalKind::user_defined1())?;
        let mut recv = pin!(usr1.recv());
        // Waiting first, so the delivery has to wake the waiter.
        assert!(poll_once(recv.as_mut()).await.is_pending());
        raise(libc::SIGUSR1)?;
        recv.await
    })
}

#[test]
fn a_signal_between_new_and_the_first_recv_is_kept() -> io::Result<()> {
    run(async || {
        let mut usr2 = Signal::new(SignalKind::user_defined2())?;
        raise(libc::SIGUSR2)?;
        // Let the loop poll the OS and dispatch the pipe's event before
        // anyone waits on it.
        ioloop::yield_now().await;
        ioloop::yield_now().await;
        usr2.recv().await
    })
}

#[test]
fn a_burst_completes_recv_once_and_then_it_waits_again() -> io::Result<()> {
    run(async || {
        let mut hup = Signal::new(SignalKind::hangup())?;
        // More deliveries than one read of the pipe takes in.
        for _ in 0..1000 {
            raise(libc::SIGHUP)?;
        }
        hup.recv().await?;
        // The burst was drained: nothing is left to complete a second recv.
        let before = ioloop::Handle::current().metrics().ticks;
        let second = timeout(Duration::from_millis(100), hup.recv()).await;
        assert!(
            second.is_err(),
            "a second recv completed with no new signal"
        );
        // ... and waiting for nothing did not spin the loop.
        let ticks = ioloop::Handle::current().metrics().ticks - before;
        assert!(ticks < 10, "{ticks} ticks while waiting");
        // The listener is not deaf afterwards.
        raise(libc::SIGHUP)?;
        hup.recv().await
    })
}

#[test]
fn two_listeners_for_one_signal_both_receive_it() -> io::Result<()> {
    run(async || {
        let winch = SignalKind::from_raw(libc::SIGWINCH);
        let mut first = Signal::new(winch)?;
        let mut second = Signal::new(winch)?;
        raise(libc::SIGWINCH)?;
        first.recv().await?;
        second.recv().await
    })
}

#[test]
fn a_dropped_listener_leaves_the_others_listening() -> io::Result<()> {
    run(async || {
        let urg = SignalKind::from_raw(libc::SIGURG);
        let dropped = Signal::new(urg)?;
        let mut kept = Signal::new(urg)?;
        drop(dropped);
        raise(libc::SIGURG)?;
        kept.recv().await
    })
}

#[test]
fn forbidden_and_unknown_signals_are_invalid_input() -> io::Result<()> {
    run(async || {
        let refused = [
            libc::SIGKILL,
            libc::SIGSTOP,
            libc::SIGSEGV,
            libc::SIGILL,
            libc::SIGFPE,
            0,
            -1,
            10_000,
        ];
        for signum in refused {
            let err = Signal::new(SignalKind::from_raw(signum)).unwrap_err();
            assert_eq!(
                err.kind(),
                ErrorKind::InvalidInput,
                "signal {signum}: {err}"
            );
        }
        Ok(())
    })
}

#[test]
fn a_listener_needs_a_runtime() {
    let err = Signal::new(SignalKind::from_raw(libc::SIGPWR)).unwrap_err();
    assert!(
        err.to_string().contains("outside an ioloop runtime"),
        "{err}"
    );
}

#[test]
fn recv_fails_once_the_runtime_is_gone() -> io::Result<()> {
    let rt = ioloop::Runtime::new()?;
    let mut alarm = rt.block_on(async { Signal::new(SignalKind::from_raw(libc::SIGALRM)) })?;
    drop(rt);
    // Polled from another runtime, the listener reports that its own is
    // gone instead of waiting for an event that can never be dispatched.
    let result = util::within(LIMIT, move || ioloop::block_on(alarm.recv()));
    assert!(result.is_err());
    Ok(())
}

/// Polls `future` once, from inside the task.
async fn poll_once<F: Future>(mut future: std::pin::Pin<&mut F>) -> Poll<F::Output> {
    poll_fn(|cx| Poll::Ready(future.as_mut().poll(cx))).await
}

#[test]
fn listeners_can_be_moved_into_tasks_spawned_from_any_thread() {
    // Handle::spawn requires Send futures; a shutdown task owns its
    // listener.
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Signal>();
    send_sync::<SignalKind>();
}

/// One listener shared by two tasks: one waits in `poll_recv` while the
/// other calls `kind`, polls it once itself (its waker parked beside the
/// first's), and makes and drops a second listener for the same signal.
/// The delivery still reaches the waiting task.
#[test]
fn a_listener_waited_on_while_another_task_uses_it() -> io::Result<()> {
    use std::cell::{Cell, RefCell};
    use std::rc::Rc;
    run(async || {
        let kind = SignalKind::from_raw(libc::SIGRTMIN() + 2);
        let shared = Rc::new(RefCell::new(Signal::new(kind)?));
        let polled = Rc::new(Cell::new(false));
        let waiter = {
            let (shared, polled) = (shared.clone(), polled.clone());
            ioloop::spawn_local(poll_fn(move |cx| {
                polled.set(true);
                shared.borrow_mut().poll_recv(cx)
            }))
        };
        while !polled.get() {
            ioloop::yield_now().await;
        }
        assert_eq!(shared.borrow().kind(), kind);
        let mine = poll_once(pin!(poll_fn(|cx| shared.borrow_mut().poll_recv(cx)))).await;
        assert!(mine.is_pending());
        drop(Signal::new(kind)?);
        raise(kind.as_raw())?;
        timeout(LIMIT, waiter)
            .await
            .map_err(|_| io::Error::other("the waiting task was never woken"))?
            .map_err(io::Error::other)?
    })
}

/// One read of the pipe takes 128 deliveries (`listener.rs`'s `CHUNK`):
/// 127, 128 (a full read, then an empty pipe) and 129 in a row each
/// complete one `recv`, and no second one.
#[test]
fn deliveries_around_one_reads_worth_each_complete_one_recv() -> io::Result<()> {
    run(async || {
        let signum = libc::SIGRTMIN() + 3;
        let mut listener = Signal::new(SignalKind::from_raw(signum))?;
        for n in [127, 128, 129] {
            for _ in 0..n {
                raise(signum)?;
            }
            let first = timeout(Duration::from_secs(5), listener.recv()).await;
            assert!(first.is_ok_and(|r| r.is_ok()), "{n} deliveries: no recv");
            let second = timeout(Duration::from_millis(50), listener.recv()).await;
            assert!(second.is_err(), "{n} deliveries completed a second recv");
        }
        Ok(())
    })
}

#[test]
fn a_signal_kind_shows_its_name_or_its_number() {
    assert_eq!(format!("{:?}", SignalKind::hangup()), "SignalKind(SIGHUP)");
    assert_eq!(
        format!("{:?}", SignalKind::from_raw(1000)),
        "SignalKind(1000)"
    );
}
