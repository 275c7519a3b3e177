//! `spawn_local`: tasks whose futures and outputs need not be `Send`, run
//! on the loop's thread, with the `JoinHandle` a `spawn`ed task has.

use std::cell::RefCell;
use std::collections::HashMap;
use std::io::{self, BufRead, BufReader, Write};
use std::net::TcpStream as StdStream;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use ioloop::io::{StreamReader, StreamWriter};
use ioloop::net::TcpListener;
use testkit::util::{self, within};

/// A server whose connection tasks share `Rc<RefCell<State>>`: each line
/// a client sends bumps its count, and the reply is the count so far, for
/// that line, across every connection.
#[test]
fn a_server_whose_connection_tasks_share_rc_refcell_state() -> io::Result<()> {
    const CLIENTS: usize = 8;
    const LINES: usize = 50;
    within(Duration::from_secs(30), || {
        ioloop::block_on(async {
            let listener = TcpListener::bind("127.0.0.1:0").await?;
            let addr = listener.local_addr()?;
            let state: Rc<RefCell<HashMap<String, usize>>> = Rc::default();
            let server = ioloop::spawn_local({
                let state = state.clone();
                async move {
                    loop {
                        let (stream, _) = listener.accept().await?;
                        let state = state.clone();
                        drop(ioloop::spawn_local(async move {
                            let (read, write) = stream.into_split();
                            let mut reader = StreamReader::new(read);
                            let mut writer = StreamWriter::new(write);
                            while let Some(line) = reader.read_line().await? {
                                let line = String::from_utf8_lossy(line).into_owned();
                                let count = {
                                    let mut state = state.borrow_mut();
                                    let count = state.entry(line).or_default();
                                    *count += 1;
                                    *count
                                };
                                writer.write(format!("{count}\n").as_bytes());
                                writer.drain().await?;
                            }
                            Ok::<_, io::Error>(())
                        }));
                    }
                    #[allow(unreachable_code)]
                    Ok::<_, io::Error>(())
                }
            });
            let clients = std::thread::spawn(move || -> io::Result<usize> {
                let threads: Vec<_> = (0..CLIENTS)
                    .map(|_| {
                        std::thread::spawn(move || -> io::Result<usize> {
                            let mut conn = StdStream::connect(addr)?;
                            let mut lines = BufReader::new(conn.try_clone()?);
                            let mut highest = 0;
                            for _ in 0..LINES {
                                conn.write_all(b"same\n")?;
                                let mut reply = String::new();
                                lines.read_line(&mut reply)?;
                                highest = highest.max(reply.trim().parse().unwrap());
                            }
                            Ok(highest)
                        })
                    })
                    .collect();
                let mut highest = 0;
                for t in threads {
                    highest = highest.max(t.join().unwrap()?);
                }
                Ok(highest)
            });
            while !clients.is_finished() {
                ioloop::yield_now().await;
            }
            let highest = clients.join().unwrap()?;
            // Every line of every client was counted once, in one place.
            assert_eq!(highest, CLIENTS * LINES);
            assert_eq!(state.borrow()["same"], CLIENTS * LINES);
            server.abort();
            Ok(())
        })
    })
}

/// The output need not be `Send` either; the handle is awaited on the
/// loop's thread like any other.
#[test]
fn a_spawn_local_task_can_return_a_value_that_is_not_send() {
    let out = ioloop::block_on(async {
        let task = ioloop::spawn_local(async {
            ioloop::yield_now().await;
            Rc::new(41)
        });
        let rc = task.await.unwrap();
        *rc + 1
    });
    assert_eq!(out, 42);
}

/// Abort, `is_finished` and detach-on-drop work as for `spawn`.
#[test]
fn a_spawn_local_handle_aborts_reports_and_detaches() {
    ioloop::block_on(async {
        let dropped = Rc::new(RefCell::new(false));
        struct Flag(Rc<RefCell<bool>>);
        impl Drop for Flag {
            fn drop(&mut self) {
                *self.0.borrow_mut() = true;
            }
        }
        let flag = Flag(dropped.clone());
        let stuck = ioloop::spawn_local(async move {
            let _flag = flag;
            std::future::pending::<()>().await;
        });
        ioloop::yield_now().await;
        assert!(!stuck.is_finished());
        stuck.abort();
        assert!(stuck.await.unwrap_err().is_cancelled());
        assert!(*dropped.borrow());

        let ran = Rc::new(RefCell::new(false));
        let detached = {
            let ran = ran.clone();
            ioloop::spawn_local(async move { *ran.borrow_mut() = true })
        };
        drop(detached);
        for _ in 0..3 {
            ioloop::yield_now().await;
        }
        assert!(*ran.borrow(), "a detached local task runs on");
    });
}

/// Off a loop's thread, `spawn_local` is a clear panic: a `!Send` future
/// cannot be moved to the loop.
#[test]
fn spawn_local_off_a_loop_thread_panics_with_a_message() {
    let outside = catch_unwind(|| ioloop::spawn_local(async {})).unwrap_err();
    assert!(util::panic_text(&*outside).contains("spawn_local"));
    let panic = ioloop::block_on(async {
        ioloop::spawn_blocking(|| catch_unwind(|| drop(ioloop::spawn_local(async {}))))
            .await
            .unwrap()
            .unwrap_err()
    });
    assert!(util::panic_text(&*panic).contains("off a loop's thread"));
}

/// While local tasks live, the runtime's loop runs only on their thread.
#[test]
fn a_runtime_with_live_local_tasks_refuses_to_run_on_another_thread() {
    let rt = Arc::new(ioloop::Runtime::new().unwrap());
    let mut stuck = None;
    rt.block_on(async {
        stuck = Some(ioloop::spawn_local(async {
            let _not_send = Rc::new(());
            std::future::pending::<()>().await
        }));
    });
    let stuck = stuck.unwrap();
    let other = rt.clone();
    let refused = std::thread::spawn(move || {
        catch_unwind(AssertUnwindSafe(|| other.block_on(async {}))).unwrap_err()
    })
    .join()
    .unwrap();
    assert!(util::panic_text(&*refused).contains("spawn_local"));
    // Back on the home thread it runs, and the task can be ended there.
    stuck.abort();
    assert!(rt.block_on(stuck).unwrap_err().is_cancelled());
    // With no local task left, any thread may run it again.
    let other = rt.clone();
    let ran = std::thread::spawn(move || other.block_on(async { 7 }))
        .join()
        .unwrap();
    assert_eq!(ran, 7);
}

/// A runtime dropped away from its local tasks' thread must not drop their
/// futures there: they are leaked (and logged), and their handles report
/// the tasks cancelled.
#[test]
fn a_runtime_dropped_away_from_its_local_tasks_leaks_their_futures() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let drops = Arc::new(AtomicUsize::new(0));
    let rt = ioloop::Runtime::new().unwrap();
    let guard = util::DropCounter(drops.clone());
    let mut stuck = None;
    rt.block_on(async {
        stuck = Some(ioloop::spawn_local(async move {
            let _guard = guard;
            let _not_send = Rc::new(());
            std::future::pending::<()>().await
        }));
    });
    let stuck = stuck.unwrap();
    std::thread::spawn(move || drop(rt)).join().unwrap();
    assert_eq!(
        drops.load(Ordering::SeqCst),
        0,
        "the future was dropped off its thread"
    );
    assert!(stuck.is_finished());
    let err = ioloop::block_on(stuck).unwrap_err();
    assert!(err.is_cancelled());
}
