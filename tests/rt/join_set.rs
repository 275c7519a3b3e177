//! `JoinSet`: results in the order tasks finish, `abort_all`, `shutdown`,
//! dropping the set, a panic reaching `join_next` while the others go on;
//! `detach_all`, `join_all`, `try_join_next`, `Extend` and `FromIterator`,
//! and the `AbortHandle` `spawn` returns.

use std::cell::RefCell;
use std::future::Future;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use ioloop::sim::Seed;
use ioloop::task::JoinSet;
use ioloop::time::timeout;
use testkit::util::{self, DropCounter};

const SAFETY: Duration = Duration::from_secs(10);

/// Finishing order is set by the test, one task at a time, against the
/// order the tasks were spawned in.
#[test]
fn join_next_returns_results_in_the_order_tasks_finish() {
    ioloop::block_on(async {
        let gates: Vec<_> = (0..5).map(|_| util::signal()).collect();
        let mut set = JoinSet::new();
        for (i, gate) in gates.iter().enumerate() {
            let gate = gate.clone();
            set.spawn(async move {
                gate.wait().await;
                i
            });
        }
        assert_eq!(set.len(), 5);
        let mut order = Vec::new();
        for i in [3, 0, 4, 1, 2] {
            gates[i].set();
            let got = timeout(SAFETY, set.join_next()).await.unwrap();
            order.push(got.expect("a task").unwrap());
        }
        assert_eq!(order, [3, 0, 4, 1, 2]);
        assert!(set.is_empty());
        assert!(set.join_next().await.is_none());
    });
}

/// A panicking task is one `JoinError` among the results; the rest finish.
#[test]
fn a_panic_in_one_task_reaches_join_next_and_the_others_run_on() {
    ioloop::block_on(async {
        let mut set = JoinSet::new();
        for i in 0..4 {
            set.spawn(async move {
                ioloop::yield_now().await;
                if i == 2 {
                    panic!("task 2 fails");
                }
                i
            });
        }
        let (mut ok, mut panics) = (Vec::new(), 0);
        while let Some(result) = timeout(SAFETY, set.join_next()).await.unwrap() {
            match result {
                Ok(i) => ok.push(i),
                Err(err) => {
                    assert!(err.is_panic(), "{err}");
                    assert_eq!(util::panic_text(&*err.into_panic()), "task 2 fails");
                    panics += 1;
                }
            }
        }
        ok.sort_unstable();
        assert_eq!((ok, panics), (vec![0, 1, 3], 1));
    });
}

/// `abort_all` cancels what is still running (what already finished keeps
/// its output); `shutdown` waits until every task has ended.
#[test]
fn abort_all_and_shutdown_cancel_the_running_tasks() {
    ioloop::block_on(async {
        let drops = Arc::new(AtomicUsize::new(0));
        let mut set = JoinSet::new();
        set.spawn(async { "quick" });
        ioloop::yield_now().await; // the quick one finishes
        for _ in 0..3 {
            let guard = DropCounter(drops.clone());
            set.spawn(async move {
                let _guard = guard;
                std::future::pending::<&str>().await
            });
        }
        set.abort_all();
        let (mut done, mut cancelled) = (0, 0);
        while let Some(result) = timeout(SAFETY, set.join_next()).await.unwrap() {
            match result {
                Ok("quick") => done += 1,
                Ok(other) => panic!("unexpected {other}"),
                Err(err) => {
                    assert!(err.is_cancelled());
                    cancelled += 1;
                }
            }
        }
        assert_eq!((done, cancelled), (1, 3));
        assert_eq!(drops.load(Ordering::SeqCst), 3);

        for _ in 0..3 {
            let guard = DropCounter(drops.clone());
            set.spawn(async move {
                let _guard = guard;
                std::future::pending::<&str>().await
            });
        }
        timeout(SAFETY, set.shutdown()).await.unwrap();
        assert!(set.is_empty());
        assert_eq!(drops.load(Ordering::SeqCst), 6);
    });
}

/// Dropping the set aborts its tasks.
#[test]
fn dropping_the_set_aborts_its_tasks() {
    ioloop::block_on(async {
        let drops = Arc::new(AtomicUsize::new(0));
        let mut set = JoinSet::new();
        for _ in 0..4 {
            let guard = DropCounter(drops.clone());
            set.spawn(async move {
                let _guard = guard;
                std::future::pending::<()>().await
            });
        }
        ioloop::yield_now().await;
        drop(set);
        for _ in 0..3 {
            ioloop::yield_now().await;
        }
        assert_eq!(drops.load(Ordering::SeqCst), 4);
        assert_eq!(ioloop::Handle::current().metrics().live_tasks, 0);
    });
}

/// Local tasks in a set: `Rc` state, results as they finish.
#[test]
fn a_set_of_local_tasks_shares_rc_state() {
    ioloop::block_on(async {
        let log = Rc::new(RefCell::new(Vec::new()));
        let mut set = JoinSet::new();
        for i in 0..3 {
            let log = log.clone();
            set.spawn_local(async move {
                ioloop::yield_now().await;
                log.borrow_mut().push(i);
                Rc::new(i)
            });
        }
        let mut sum = 0;
        while let Some(result) = set.join_next().await {
            sum += *result.unwrap();
        }
        assert_eq!(sum, 3);
        assert_eq!(log.borrow().len(), 3);
    });
}

/// A `spawn` (or `spawn_local`) that panics outside a runtime, caught,
/// leaves the set as it was: the same length, and `join_next` hands back
/// the earlier tasks' outputs, then `None`, instead of panicking on the
/// failed spawn's ghost.
#[test]
fn a_failed_spawn_leaves_the_set_unchanged() -> std::io::Result<()> {
    let rt = ioloop::Runtime::new()?;
    let mut set = JoinSet::new();
    rt.block_on(async {
        for i in 0..3 {
            set.spawn(async move { i });
        }
    });
    // Outside the runtime: both spawns panic, and are caught.
    let spawned = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        set.spawn(async { 100 });
    }));
    assert!(spawned.is_err(), "spawn outside a runtime must panic");
    let spawned = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        set.spawn_local(async { 200 });
    }));
    assert!(spawned.is_err(), "spawn_local off a loop must panic");
    assert_eq!(set.len(), 3);
    let mut outputs = rt.block_on(async {
        let mut outputs = Vec::new();
        while let Some(result) = timeout(SAFETY, set.join_next()).await.unwrap() {
            outputs.push(result.unwrap());
        }
        // And the set still works.
        set.spawn(async { 3 });
        outputs.push(set.join_next().await.unwrap().unwrap());
        assert!(set.join_next().await.is_none());
        outputs
    });
    outputs.sort_unstable();
    assert_eq!(outputs, [0, 1, 2, 3]);
    Ok(())
}

/// Yields until `done` holds, bounded by the safety net.
async fn until(done: impl Fn() -> bool) {
    let wait = async {
        while !done() {
            ioloop::yield_now().await;
        }
    };
    timeout(SAFETY, wait).await.expect("never came to hold");
}

/// A pending task guarded by a [`DropCounter`] on `drops`.
fn pending_guarded(drops: &Arc<AtomicUsize>) -> impl Future<Output = i32> + Send + 'static {
    let guard = DropCounter(drops.clone());
    async move {
        let _guard = guard;
        std::future::pending().await
    }
}

/// `detach_all` empties the set without aborting: the tasks run on to
/// their ends after the set is dropped, and the set, reused, joins only its
/// new tasks.
#[test]
fn detach_all_lets_the_tasks_run_on_after_the_set_is_dropped() {
    ioloop::block_on(async {
        let gates: Vec<_> = (0..3).map(|_| util::signal()).collect();
        let ran = Arc::new(AtomicUsize::new(0));
        let mut set = JoinSet::new();
        let handles: Vec<_> = gates
            .iter()
            .map(|gate| {
                let (gate, ran) = (gate.clone(), ran.clone());
                set.spawn(async move {
                    gate.wait().await;
                    ran.fetch_add(1, Ordering::SeqCst);
                })
            })
            .collect();
        set.detach_all();
        assert!(set.is_empty());
        assert!(set.join_next().await.is_none());
        set.spawn(async {});
        assert!(set.join_next().await.unwrap().is_ok());
        drop(set);
        gates.iter().for_each(|gate| gate.set());
        until(|| handles.iter().all(|h| h.is_finished())).await;
        assert_eq!(ran.load(Ordering::SeqCst), 3);
    });
}

/// `join_all` gives every output, in the order the tasks finished; a set
/// collected from futures, or extended with them, spawns one task each.
#[test]
fn join_all_returns_every_output_in_the_order_tasks_finish() {
    ioloop::block_on(async {
        let gates: Vec<_> = (0..4).map(|_| util::signal()).collect();
        let finished = Arc::new(AtomicUsize::new(0));
        let gated = |i: usize| {
            let (gate, finished) = (gates[i].clone(), finished.clone());
            async move {
                gate.wait().await;
                finished.fetch_add(1, Ordering::SeqCst);
                i
            }
        };
        let mut set: JoinSet<usize> = (0..2).map(gated).collect();
        set.extend((2..4).map(gated));
        assert_eq!(set.len(), 4);
        let all = ioloop::spawn(set.join_all());
        for (n, i) in [2, 0, 3, 1].into_iter().enumerate() {
            gates[i].set();
            // Task `i` finishes before the next gate opens.
            until(|| finished.load(Ordering::SeqCst) > n).await;
        }
        assert_eq!(timeout(SAFETY, all).await.unwrap().unwrap(), [2, 0, 3, 1]);
    });
}

/// A task's panic is resumed by `join_all`, payload and all, as tokio's
/// does, and the tasks still running are aborted as the set drops.
#[test]
fn join_all_resumes_a_tasks_panic_and_aborts_the_rest() {
    ioloop::block_on(async {
        let drops = Arc::new(AtomicUsize::new(0));
        let mut set = JoinSet::new();
        set.spawn(pending_guarded(&drops));
        set.spawn(async { panic!("task 1 fails") });
        set.spawn(pending_guarded(&drops));
        let err = timeout(SAFETY, ioloop::spawn(set.join_all()))
            .await
            .unwrap()
            .unwrap_err();
        assert_eq!(util::panic_text(&*err.into_panic()), "task 1 fails");
        until(|| drops.load(Ordering::SeqCst) == 2).await;
    });
}

/// An aborted task makes `join_all` panic with the cancelled error's
/// message, as tokio's does.
#[test]
fn join_all_panics_on_an_aborted_task() {
    ioloop::block_on(async {
        let drops = Arc::new(AtomicUsize::new(0));
        let mut set = JoinSet::new();
        set.spawn(async { 1 });
        set.spawn(pending_guarded(&drops)).abort();
        let err = timeout(SAFETY, ioloop::spawn(set.join_all()))
            .await
            .unwrap()
            .unwrap_err();
        assert_eq!(util::panic_text(&*err.into_panic()), "task was cancelled");
        assert_eq!(drops.load(Ordering::SeqCst), 1);
    });
}

/// `spawn`'s `AbortHandle` aborts that one task, and tells when it ended.
#[test]
fn a_spawns_abort_handle_aborts_that_task_only() {
    ioloop::block_on(async {
        let drops = Arc::new(AtomicUsize::new(0));
        let mut set = JoinSet::new();
        let handles: Vec<_> = (0..3).map(|_| set.spawn(pending_guarded(&drops))).collect();
        ioloop::yield_now().await;
        assert!(!handles[1].is_finished());
        handles[1].abort();
        let err = timeout(SAFETY, set.join_next())
            .await
            .unwrap()
            .unwrap()
            .unwrap_err();
        assert!(err.is_cancelled());
        assert!(handles[1].is_finished());
        assert_eq!(drops.load(Ordering::SeqCst), 1);
        assert_eq!(set.len(), 2);
        assert!(!handles[0].is_finished() && !handles[2].is_finished());
    });
}

/// `try_join_next` never waits: `None` for an empty set and for one whose
/// tasks run on; each finished task's result otherwise. It spends no
/// budget (as tokio's): 300 finished tasks are taken in one poll, where
/// `join_next` would yield every 128.
#[test]
fn try_join_next_takes_finished_results_without_waiting_or_budget() {
    ioloop::block_on(async {
        let mut set = JoinSet::new();
        assert!(set.try_join_next().is_none());
        let gate = util::signal();
        let waiting = gate.clone();
        set.spawn(async move {
            waiting.wait().await;
            usize::MAX
        });
        ioloop::yield_now().await;
        assert!(set.try_join_next().is_none());
        assert_eq!(set.len(), 1);
        let handles: Vec<_> = (0..300).map(|i| set.spawn(async move { i })).collect();
        until(|| handles.iter().all(|h| h.is_finished())).await;
        let mut outputs: Vec<_> = std::iter::from_fn(|| set.try_join_next())
            .map(Result::unwrap)
            .collect();
        outputs.sort_unstable();
        assert_eq!(outputs, (0..300).collect::<Vec<_>>());
        gate.set();
        let last = timeout(SAFETY, set.join_next()).await.unwrap();
        assert_eq!(last.unwrap().unwrap(), usize::MAX);
        assert!(set.try_join_next().is_none());
    });
}

/// How a test stops a set's tasks.
#[derive(Clone, Copy, Debug)]
enum Stop {
    Shutdown,
    AbortAll,
    Drop,
}

/// Spawns 32 parked tasks into a set on a runtime seeded with `seed`,
/// stops them with `stop`, and returns the order their futures were
/// dropped in and the runtime's schedule hash.
fn stopped_in_a_seeded_run(seed: u64, stop: Stop) -> (Vec<usize>, u64) {
    /// Notes its task's number in the list when the task's future drops.
    struct Noted(Arc<std::sync::Mutex<Vec<usize>>>, usize);
    impl Drop for Noted {
        fn drop(&mut self) {
            self.0.lock().unwrap().push(self.1);
        }
    }
    let rt = ioloop::Runtime::builder().seed(seed).build().unwrap();
    rt.block_on(async move {
        let dropped = Arc::new(std::sync::Mutex::new(Vec::new()));
        let polled = Arc::new(AtomicUsize::new(0));
        let mut set = JoinSet::new();
        for i in 0..32 {
            let (noted, polled) = (Noted(dropped.clone(), i), polled.clone());
            set.spawn(async move {
                let _noted = noted;
                polled.fetch_add(1, Ordering::SeqCst);
                std::future::pending::<()>().await
            });
        }
        until(|| polled.load(Ordering::SeqCst) == 32).await;
        match stop {
            Stop::Shutdown => timeout(SAFETY, set.shutdown()).await.unwrap(),
            Stop::AbortAll => {
                set.abort_all();
                while let Some(result) = timeout(SAFETY, set.join_next()).await.unwrap() {
                    assert!(result.unwrap_err().is_cancelled());
                }
            }
            Stop::Drop => {
                drop(set);
                until(|| dropped.lock().unwrap().len() == 32).await;
            }
        }
        let order = dropped.lock().unwrap().clone();
        assert_eq!(order.len(), 32, "{stop:?}");
        (
            order,
            ioloop::sim::schedule_hash().expect("a seeded runtime"),
        )
    })
}

/// Bug 3 of issue 40: a set kept its tasks in a `HashMap` with std's
/// random state, so `shutdown`, `abort_all` and dropping the set aborted
/// them in another order on every run, and a seed did not replay (the
/// schedule hash differed in 9 runs of 9). The same seed now stops the
/// tasks in the same order, with the same hash, every time.
#[test]
fn a_seeded_run_stops_a_sets_tasks_in_the_same_order_every_time() {
    for stop in [Stop::Shutdown, Stop::AbortAll, Stop::Drop] {
        for seed in [7, 0, 1, u64::MAX] {
            let first = stopped_in_a_seeded_run(seed, stop);
            for _ in 0..2 {
                assert_eq!(
                    stopped_in_a_seeded_run(seed, stop),
                    first,
                    "{stop:?}, seed {seed}"
                );
            }
        }
    }
}

/// Bug 4 of issue 40 (a hang): `try_join_next` polled the set with a
/// no-op waker, which replaced the waker of a task waiting in
/// `join_next`. A set shared by two tasks: one waits for the next result,
/// the other finds none with `try_join_next`; the set's task, reading a
/// real socket, then finishes. The waiting task must be woken.
#[test]
fn try_join_next_leaves_the_waiting_tasks_waker_in_place() -> std::io::Result<()> {
    use ioloop::io::{AsyncReadExt, AsyncWriteExt};
    use ioloop::net::{TcpListener, TcpStream};
    util::within(SAFETY * 2, || {
        ioloop::block_on(async {
            let listener = TcpListener::bind("127.0.0.1:0").await?;
            let mut client = TcpStream::connect(listener.local_addr()?).await?;
            let (mut server, _) = listener.accept().await?;
            let set = Rc::new(RefCell::new(JoinSet::new()));
            set.borrow_mut().spawn_local(async move {
                let mut byte = [0u8; 1];
                server.read_exact(&mut byte).await.map(|()| byte[0])
            });
            let polled = Rc::new(std::cell::Cell::new(false));
            let waiter = {
                let (set, polled) = (set.clone(), polled.clone());
                ioloop::spawn_local(std::future::poll_fn(move |cx| {
                    polled.set(true);
                    set.borrow_mut().poll_join_next(cx)
                }))
            };
            until(|| polled.get()).await;
            // The other user: nothing has finished yet.
            assert!(set.borrow_mut().try_join_next().is_none());
            client.write_all(b"!").await?;
            let joined = timeout(SAFETY, waiter)
                .await
                .expect("the task waiting in poll_join_next was never woken")
                .unwrap();
            assert_eq!(joined.unwrap().unwrap()?, b'!');
            assert!(set.borrow().is_empty());
            Ok(())
        })
    })
}

/// What a set's tasks left behind: futures dropped, outputs dropped.
#[derive(Default)]
struct Dropped {
    futures: AtomicUsize,
    outputs: AtomicUsize,
}

impl Dropped {
    fn counts(&self) -> (usize, usize) {
        let load = |n: &AtomicUsize| n.load(Ordering::SeqCst);
        (load(&self.futures), load(&self.outputs))
    }
}

/// Held by a task's future: counts its drop.
struct FutureGuard(Arc<Dropped>);

impl Drop for FutureGuard {
    fn drop(&mut self) {
        self.0.futures.fetch_add(1, Ordering::SeqCst);
    }
}

/// A task's output: counts its drop.
struct Output(Arc<Dropped>);

impl Drop for Output {
    fn drop(&mut self) {
        self.0.outputs.fetch_add(1, Ordering::SeqCst);
    }
}

/// Tasks in a set in every state: two pending; two finished and not
/// joined (their outputs kept); one aborted and ended, not joined; one
/// aborted and not yet run. Six futures in all, two outputs.
async fn set_in_every_state(dropped: &Arc<Dropped>) -> JoinSet<Output> {
    let mut set = JoinSet::new();
    let task = |finish: bool| {
        let (guard, output) = (FutureGuard(dropped.clone()), Output(dropped.clone()));
        async move {
            let _guard = guard;
            if !finish {
                std::future::pending::<()>().await;
            }
            output
        }
    };
    for finish in [false, false, true, true] {
        set.spawn(task(finish));
    }
    set.spawn(task(false)).abort();
    // The two finished and the aborted one have ended; the rest wait.
    until(|| dropped.counts() == (3, 1)).await;
    set.spawn(task(false)).abort();
    assert_eq!(set.len(), 6);
    set
}

/// Each way a set in every state can go, on the loop: every future and
/// every output dropped exactly once, and no task left.
#[test]
fn a_set_in_every_state_dropped_leaves_nothing() {
    ioloop::block_on(async {
        let dropped = Arc::new(Dropped::default());
        drop(set_in_every_state(&dropped).await);
        until(|| ioloop::Handle::current().metrics().live_tasks == 0).await;
        // The outputs of the four unfinished went with their futures.
        assert_eq!(dropped.counts(), (6, 6));
    });
}

/// The same set dropped on another thread while the loop runs: the aborts
/// reach the loop from there.
#[test]
fn a_set_in_every_state_dropped_on_another_thread_leaves_nothing() {
    util::within(SAFETY * 2, || {
        ioloop::block_on(async {
            let dropped = Arc::new(Dropped::default());
            let set = set_in_every_state(&dropped).await;
            std::thread::spawn(move || drop(set)).join().unwrap();
            until(|| ioloop::Handle::current().metrics().live_tasks == 0).await;
            assert_eq!(dropped.counts(), (6, 6));
        });
    });
}

/// A set dropped by one of its own tasks: the task aborts itself with the
/// others, yet runs its poll to the end; nothing is left.
#[test]
fn a_set_dropped_inside_one_of_its_own_tasks_leaves_nothing() {
    util::within(SAFETY * 2, || {
        ioloop::block_on(async {
            let dropped = Arc::new(Dropped::default());
            let slot = Rc::new(RefCell::new(None));
            let mut set = set_in_every_state(&dropped).await;
            let dropper = {
                let (slot, guard) = (slot.clone(), FutureGuard(dropped.clone()));
                let output = Output(dropped.clone());
                set.spawn_local(async move {
                    let _guard = guard;
                    let set: Option<JoinSet<Output>> = slot.borrow_mut().take();
                    drop(set);
                    ioloop::yield_now().await;
                    unreachable!("aborted by the set it dropped: {}", output.0.counts().0)
                })
            };
            *slot.borrow_mut() = Some(set);
            until(|| dropper.is_finished()).await;
            until(|| ioloop::Handle::current().metrics().live_tasks == 0).await;
            assert!(slot.borrow().is_none());
            assert_eq!(dropped.counts(), (7, 7));
        });
    });
}

/// A runtime shut down, by `shutdown_timeout` or by a drop, while a task
/// holds a set in every state: every future and output is dropped once.
#[test]
fn a_runtime_shut_down_with_a_set_alive_in_a_task_leaves_nothing() {
    for by_drop in [false, true] {
        let rt = ioloop::Runtime::new().unwrap();
        let dropped = Arc::new(Dropped::default());
        let built = util::signal();
        let holder = {
            let (dropped, built) = (dropped.clone(), built.clone());
            rt.spawn(async move {
                let _set = set_in_every_state(&dropped).await;
                built.set();
                std::future::pending::<()>().await
            })
        };
        rt.block_on(timeout(SAFETY, built.wait())).unwrap();
        if by_drop {
            drop(rt);
        } else {
            let report = rt.shutdown_timeout(Duration::ZERO);
            assert!(!report.finished, "{report:?}");
        }
        assert_eq!(dropped.counts(), (6, 6), "by drop: {by_drop}");
        assert!(holder.is_finished());
    }
}

/// A set that outlives its runtime: dropped on a plain thread, or joined
/// on another runtime, it hands back what the first left (the finished
/// outputs; the rest cancelled) and drops every output once.
#[test]
fn a_set_that_outlives_its_runtime_is_joined_or_dropped_elsewhere() {
    for join in [false, true] {
        let dropped = Arc::new(Dropped::default());
        let rt = ioloop::Runtime::new().unwrap();
        let mut set = rt.block_on(set_in_every_state(&dropped));
        drop(rt);
        assert_eq!(dropped.counts(), (6, 4), "join: {join}");
        if join {
            let (mut ok, mut cancelled) = (0, 0);
            ioloop::block_on(async {
                while let Some(result) = timeout(SAFETY, set.join_next()).await.unwrap() {
                    match result {
                        Ok(_output) => ok += 1,
                        Err(err) => {
                            assert!(err.is_cancelled());
                            cancelled += 1;
                        }
                    }
                }
            });
            assert_eq!((ok, cancelled), (2, 4));
        }
        drop(set);
        assert_eq!(dropped.counts(), (6, 6), "join: {join}");
    }
}
