//! Dropping a runtime: every unfinished future is dropped, every source it
//! held is closed, and nothing waits forever.

use std::future::poll_fn;
use std::io::Read;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use ioloop::io::Registration;
use testkit::util;
use util::{DropCounter, within};

#[test]
fn dropping_the_runtime_drops_every_unfinished_future() {
    let drops = Arc::new(AtomicUsize::new(0));
    let rt = ioloop::Runtime::new().unwrap();
    let mut handles = Vec::new();
    for _ in 0..3 {
        let guard = DropCounter(drops.clone());
        handles.push(rt.spawn(async move {
            let _guard = guard;
            std::future::pending::<()>().await;
        }));
    }
    // One that finishes.
    let guard = DropCounter(drops.clone());
    handles.push(rt.spawn(async move {
        let _guard = guard;
    }));
    rt.block_on(async {
        for _ in 0..2 {
            ioloop::yield_now().await;
        }
    });
    // One that never even starts: its future is dropped unpolled.
    let guard = DropCounter(drops.clone());
    let unstarted = rt.spawn(async move {
        let _guard = guard;
        std::future::pending::<()>().await;
    });
    assert_eq!(drops.load(Ordering::SeqCst), 1);
    drop(rt);
    assert_eq!(drops.load(Ordering::SeqCst), 5);
    for handle in handles.into_iter().take(3).chain([unstarted]) {
        assert!(handle.is_finished());
        let err = within(Duration::from_secs(10), move || ioloop::block_on(handle)).unwrap_err();
        assert!(err.is_cancelled());
    }
}

#[test]
fn dropping_the_runtime_closes_the_sockets_its_tasks_held() -> std::io::Result<()> {
    let rt = ioloop::Runtime::new()?;
    let (a, b) = std::os::unix::net::UnixStream::pair()?;
    a.set_nonblocking(true)?;
    let handle = rt.handle().clone();
    let reader = rt.spawn(async move {
        let a = Registration::new(mio::net::UnixStream::from_std(a))?;
        let mut buf = [0u8; 8];
        poll_fn(|cx| a.poll_read_io(cx, |mut s| s.read(&mut buf))).await
    });
    rt.block_on(async {
        while handle.metrics().io_sources == 0 {
            ioloop::yield_now().await;
        }
    });
    drop(rt);
    assert_eq!(handle.metrics().io_sources, 0);
    // Our end of the pair was closed with the task: the peer reads EOF.
    let mut b = b;
    b.set_read_timeout(Some(Duration::from_secs(10)))?;
    let mut buf = [0u8; 1];
    assert_eq!(b.read(&mut buf)?, 0);
    assert!(reader.is_finished());
    Ok(())
}

#[test]
fn a_source_held_outside_the_runtime_fails_instead_of_hanging() -> std::io::Result<()> {
    let rt = ioloop::Runtime::new()?;
    let (a, _b) = mio::net::UnixStream::pair()?;
    let reg = Registration::with_handle(a, rt.handle())?;
    drop(rt);
    let err = within(Duration::from_secs(10), move || {
        ioloop::block_on(async move { poll_fn(|cx| reg.poll_read_ready(cx)).await })
    })
    .unwrap_err();
    assert!(err.to_string().contains("shut down"), "{err}");
    Ok(())
}

#[test]
fn a_panicking_destructor_during_shutdown_does_not_escape() {
    struct Bomb;
    impl Drop for Bomb {
        fn drop(&mut self) {
            panic!("destructor fails during shutdown");
        }
    }
    let drops = Arc::new(AtomicUsize::new(0));
    let rt = ioloop::Runtime::new().unwrap();
    let bomb = Bomb;
    let _a = rt.spawn(async move {
        let _bomb = bomb;
        std::future::pending::<()>().await;
    });
    let guard = DropCounter(drops.clone());
    let _b = rt.spawn(async move {
        let _guard = guard;
        std::future::pending::<()>().await;
    });
    rt.block_on(ioloop::yield_now());
    assert!(catch_unwind(AssertUnwindSafe(|| drop(rt))).is_ok());
    // The other task was still dropped.
    assert_eq!(drops.load(Ordering::SeqCst), 1);
}

#[test]
fn spawning_during_or_after_shutdown_is_cancelled_not_lost() {
    let rt = ioloop::Runtime::new().unwrap();
    let handle = rt.handle().clone();
    let late: Arc<std::sync::Mutex<Option<ioloop::JoinHandle<()>>>> = Default::default();
    struct SpawnOnDrop(Arc<std::sync::Mutex<Option<ioloop::JoinHandle<()>>>>);
    impl Drop for SpawnOnDrop {
        fn drop(&mut self) {
            *self.0.lock().unwrap() = Some(ioloop::spawn(async {}));
        }
    }
    let spawner = SpawnOnDrop(late.clone());
    let _t = rt.spawn(async move {
        let _s = spawner;
        std::future::pending::<()>().await;
    });
    rt.block_on(ioloop::yield_now());
    drop(rt);
    let from_destructor = late.lock().unwrap().take().expect("the destructor ran");
    assert!(from_destructor.is_finished());
    let after = handle.spawn(async { 1 });
    assert!(after.is_finished());
    let (a, b) = within(Duration::from_secs(10), move || {
        ioloop::block_on(async { (from_destructor.await, after.await) })
    });
    assert!(a.unwrap_err().is_cancelled());
    assert!(b.unwrap_err().is_cancelled());
}

#[test]
fn shutdown_timeout_drops_a_task_that_never_finishes_and_reports_it() {
    let drops = Arc::new(AtomicUsize::new(0));
    let rt = ioloop::Runtime::new().unwrap();
    let guard = DropCounter(drops.clone());
    let stuck = rt.spawn(async move {
        let _guard = guard;
        std::future::pending::<()>().await;
    });
    let quick = rt.spawn(ioloop::time::sleep(Duration::from_millis(5)));
    let report = within(Duration::from_secs(20), move || {
        rt.shutdown_timeout(Duration::from_millis(100))
    });
    assert!(!report.finished);
    assert_eq!(report.cancelled_tasks, 1);
    assert_eq!(drops.load(Ordering::SeqCst), 1);
    assert!(stuck.is_finished() && quick.is_finished());
    let (stuck, quick) = within(Duration::from_secs(10), move || {
        ioloop::block_on(async { (stuck.await, quick.await) })
    });
    assert!(stuck.unwrap_err().is_cancelled());
    assert!(quick.is_ok());
}

#[test]
fn shutdown_timeout_returns_as_soon_as_every_task_has_finished() {
    let rt = ioloop::Runtime::new().unwrap();
    for i in 0..10 {
        drop(rt.spawn(ioloop::time::sleep(Duration::from_millis(i))));
    }
    // A generous timeout that must not be waited out: `finished` is set
    // only if the tasks, not the deadline, ended the wait.
    let report = rt.shutdown_timeout(Duration::from_secs(3600));
    assert!(report.finished);
    assert_eq!(report.cancelled_tasks, 0);
}

/// Item 2 of the correctness issue: a runtime kept in a `thread_local!`
/// aborted the process when its thread exited ("cannot access a Thread
/// Local Storage value during or after destruction"), because dropping it
/// entered the thread's context after that context was destroyed.
#[test]
fn a_runtime_in_a_thread_local_is_dropped_cleanly_when_its_thread_exits() {
    thread_local! {
        static RT: ioloop::Runtime = ioloop::Runtime::new().unwrap();
    }
    let drops = Arc::new(AtomicUsize::new(0));
    let counter = drops.clone();
    std::thread::spawn(move || {
        RT.with(|rt| {
            let guard = DropCounter(counter);
            // Still waiting on a timer and holding a socket when the thread
            // exits: its future is dropped with the runtime.
            drop(rt.spawn(async move {
                let _guard = guard;
                let _socket = ioloop::net::UdpSocket::bind("127.0.0.1:0").await;
                ioloop::time::sleep(Duration::from_secs(3600)).await;
            }));
            rt.block_on(ioloop::yield_now());
        });
    })
    .join()
    .expect("the thread exits without a panic");
    assert_eq!(drops.load(Ordering::SeqCst), 1);
}

/// Item 5 of the correctness issue: a wake of an already registered task,
/// waiting in the injection queue, counted as a second task.
#[test]
fn cancelled_tasks_counts_a_task_once_while_a_wake_for_it_is_queued() {
    let rt = ioloop::Runtime::new().unwrap();
    let parked = Arc::new(std::sync::Mutex::new(None::<std::task::Waker>));
    let slot = parked.clone();
    let _stuck = rt.spawn(poll_fn(move |cx| {
        *slot.lock().unwrap() = Some(cx.waker().clone());
        std::task::Poll::<()>::Pending
    }));
    rt.block_on(async {
        // Until the task has run once and parked.
        while parked.lock().unwrap().is_none() {
            ioloop::yield_now().await;
        }
    });
    // Woken from this thread, which runs no loop: the wake waits in the
    // injection queue, and a zero timeout never takes it in.
    parked.lock().unwrap().take().expect("parked").wake();
    let report = rt.shutdown_timeout(Duration::ZERO);
    assert!(!report.finished);
    assert_eq!(report.cancelled_tasks, 1);
}

/// The same over-count could make `shutdown_timeout` wait out its whole
/// timeout: a task's last poll races with a wake from another thread, whose
/// queue entry (stale once the task completes) kept "tasks left" above 0.
/// Many rounds of that race must all end as soon as the task does.
#[test]
fn shutdown_timeout_is_not_held_up_by_a_stale_wake_from_another_thread() {
    within(Duration::from_secs(60), || {
        for _ in 0..300 {
            let rt = ioloop::Runtime::new().unwrap();
            let (tx, rx) = std::sync::mpsc::channel::<std::task::Waker>();
            let waker_thread = std::thread::spawn(move || {
                for waker in rx {
                    waker.wake();
                }
            });
            let mut polls = 0;
            drop(rt.spawn(poll_fn(move |cx| {
                polls += 1;
                // Hand the waker over and finish, racing the wake.
                tx.send(cx.waker().clone()).unwrap();
                if polls < 3 {
                    std::task::Poll::Pending
                } else {
                    std::task::Poll::Ready(())
                }
            })));
            let report = rt.shutdown_timeout(Duration::from_secs(3600));
            assert!(report.finished);
            assert_eq!(report.cancelled_tasks, 0);
            waker_thread.join().unwrap();
        }
    });
}

/// Bug 4 of issue 28: on a paused runtime, `shutdown_timeout` read its
/// deadline on the virtual clock, which a busy task holds still: it never
/// returned. Its timeout is wall time.
#[test]
fn shutdown_timeout_returns_on_a_paused_runtime_with_a_busy_task() -> std::io::Result<()> {
    let rt = ioloop::Runtime::builder().start_paused(true).build()?;
    let _busy = rt.spawn(async {
        loop {
            ioloop::yield_now().await;
        }
    });
    let report = within(Duration::from_secs(20), move || {
        rt.shutdown_timeout(Duration::from_millis(100))
    });
    assert!(!report.finished);
    assert_eq!(report.cancelled_tasks, 1);
    assert_eq!(report.blocking_still_running, 0);
    Ok(())
}

// Shutdown in every state (issue 28): `shutdown_timeout` and a plain drop
// of a runtime paused (with and without timers), busy, with blocking jobs
// queued and running, with `spawn_local` tasks alive, with waiters parked
// on a socket, a sleep and a `JoinHandle`; with a zero timeout and with
// `Duration::MAX`. Each returns, reports exactly, drops every stuck task's
// future and releases what the tasks held. (The process-wide accounting of
// descriptors, threads and heap is in tests/churn/shutdown.rs, whose tests
// run one at a time; here other tests come and go meanwhile.)

/// The grace given to tasks that can never finish: its length changes
/// nothing but how long the test takes.
const GRACE: Duration = Duration::from_millis(20);

/// A runtime set up in one state, its stuck tasks parked where they wait.
struct Scene {
    rt: ioloop::Runtime,
    /// Bumped when a stuck task's future is dropped.
    drops: Arc<AtomicUsize>,
    /// Tasks that can never finish: cancelled by the shutdown.
    stuck: usize,
    /// Of those, the ones holding a drop counter.
    guarded: usize,
    /// Blocking jobs unfinished when the grace ends.
    blocking: usize,
    /// Run once the runtime is gone: lets what was held back go, and
    /// checks what must then happen.
    after: Box<dyn FnOnce()>,
}

impl Scene {
    fn new(rt: ioloop::Runtime) -> Self {
        Scene {
            rt,
            drops: Arc::default(),
            stuck: 0,
            guarded: 0,
            blocking: 0,
            after: Box::new(|| {}),
        }
    }

    /// Spawns a task that can never finish, holding a drop counter, and
    /// bumps `parked` where it waits (in the same poll as it parks).
    fn stuck<F: std::future::Future<Output = ()> + Send + 'static>(
        &mut self,
        parked: &Arc<AtomicUsize>,
        wait: F,
    ) {
        let guard = DropCounter(self.drops.clone());
        let parked = parked.clone();
        drop(self.rt.spawn(async move {
            let _guard = guard;
            parked.fetch_add(1, Ordering::SeqCst);
            wait.await;
        }));
        self.stuck += 1;
        self.guarded += 1;
    }

    /// Runs the loop until `n` tasks have bumped `parked`.
    fn settle(&self, parked: &AtomicUsize, n: usize) {
        self.rt.block_on(async {
            while parked.load(Ordering::SeqCst) < n {
                ioloop::yield_now().await;
            }
        });
    }
}

fn paused() -> std::io::Result<ioloop::Runtime> {
    ioloop::Runtime::builder().start_paused(true).build()
}

/// Paused, no timer armed: nothing would wake the loop from the poller.
fn paused_without_timers() -> std::io::Result<Scene> {
    let mut scene = Scene::new(paused()?);
    let parked = Arc::new(AtomicUsize::new(0));
    scene.stuck(&parked, std::future::pending());
    scene.settle(&parked, 1);
    Ok(scene)
}

/// Paused, timers armed forever: auto-advance races the clock on.
fn paused_with_timers() -> std::io::Result<Scene> {
    let mut scene = Scene::new(paused()?);
    let parked = Arc::new(AtomicUsize::new(0));
    scene.stuck(&parked, async {
        loop {
            ioloop::time::sleep(Duration::from_secs(60)).await;
        }
    });
    // A sleeper that finishes (by auto-advance) before the shutdown.
    let sleeper = scene
        .rt
        .spawn(ioloop::time::sleep(Duration::from_secs(3600)));
    scene.settle(&parked, 1);
    scene.rt.block_on(sleeper).unwrap();
    Ok(scene)
}

/// A task yielding forever: the loop never sleeps.
fn busy() -> std::io::Result<Scene> {
    let mut scene = Scene::new(ioloop::Runtime::new()?);
    let parked = Arc::new(AtomicUsize::new(0));
    scene.stuck(&parked, async {
        loop {
            ioloop::yield_now().await;
        }
    });
    scene.settle(&parked, 1);
    Ok(scene)
}

/// One pool thread, running a job that waits for the test, with another
/// queued behind it and a task awaiting the first.
fn blocking_queued_and_running() -> std::io::Result<Scene> {
    let rt = ioloop::Runtime::builder().max_blocking_threads(1).build()?;
    let mut scene = Scene::new(rt);
    let (started_tx, started) = std::sync::mpsc::channel::<()>();
    let (release, gate) = std::sync::mpsc::channel::<()>();
    let (ran_tx, ran) = std::sync::mpsc::channel::<()>();
    let running = scene.rt.handle().spawn_blocking(move || {
        started_tx.send(()).unwrap();
        let _ = gate.recv();
    });
    let queued = scene.rt.handle().spawn_blocking(move || {
        ran_tx.send(()).unwrap();
    });
    started
        .recv_timeout(Duration::from_secs(20))
        .expect("the first job started");
    let parked = Arc::new(AtomicUsize::new(0));
    scene.stuck(&parked, async move {
        let _ = running.await;
    });
    scene.settle(&parked, 1);
    scene.blocking = 2;
    scene.after = Box::new(move || {
        release.send(()).unwrap();
        ran.recv_timeout(Duration::from_secs(20))
            .expect("the queued job never ran");
        let queued = within(Duration::from_secs(20), move || ioloop::block_on(queued));
        assert!(queued.is_ok());
    });
    Ok(scene)
}

/// A `spawn_local` task alive, holding what is not `Send`.
fn spawn_local_alive() -> std::io::Result<Scene> {
    let scene = Scene::new(ioloop::Runtime::new()?);
    let guard = std::rc::Rc::new(DropCounter(scene.drops.clone()));
    let parked = Arc::new(AtomicUsize::new(0));
    let bump = parked.clone();
    scene.rt.block_on(async move {
        drop(ioloop::spawn_local(async move {
            let _guard = guard;
            bump.fetch_add(1, Ordering::SeqCst);
            std::future::pending::<()>().await;
        }));
    });
    scene.settle(&parked, 1);
    Ok(Scene {
        stuck: 1,
        guarded: 1,
        ..scene
    })
}

/// Waiters parked: on an accept, on a sleep, on the `JoinHandle` of a task
/// pending forever (itself stuck too).
fn waiters_parked() -> std::io::Result<Scene> {
    let mut scene = Scene::new(ioloop::Runtime::new()?);
    let parked = Arc::new(AtomicUsize::new(0));
    let listener = {
        let _entered = scene.rt.enter();
        ioloop::net::TcpListener::from_std(std::net::TcpListener::bind("127.0.0.1:0")?)?
    };
    let addr = listener.local_addr()?;
    scene.stuck(&parked, async move {
        let _ = listener.accept().await;
    });
    scene.stuck(&parked, ioloop::time::sleep(Duration::from_secs(3600)));
    let pending = scene.rt.spawn(std::future::pending::<()>());
    scene.stuck += 1;
    scene.stuck(&parked, async move {
        let _ = pending.await;
    });
    scene.settle(&parked, 3);
    let handle = scene.rt.handle().clone();
    assert_eq!(handle.metrics().io_sources, 1);
    scene.after = Box::new(move || {
        // The listener was closed with its task, the timer and the source
        // left the runtime's tables.
        let refused = std::net::TcpStream::connect(addr).unwrap_err();
        assert_eq!(refused.kind(), std::io::ErrorKind::ConnectionRefused);
        let metrics = handle.metrics();
        assert_eq!(
            (metrics.io_sources, metrics.live_timers, metrics.live_tasks),
            (0, 0, 0)
        );
    });
    Ok(scene)
}

/// Sets up `scene` and shuts it down with `shutdown_timeout(timeout)`,
/// all on one thread (a `spawn_local` task pins the loop to it), under a
/// safety net; checks the report is exact and every stuck future dropped.
fn shut_down(scene: fn() -> std::io::Result<Scene>, timeout: Duration) {
    within(Duration::from_secs(60), move || {
        let scene = scene().unwrap();
        let (drops, stuck, blocking) = (scene.drops.clone(), scene.stuck, scene.blocking);
        let guarded = scene.guarded;
        let report = scene.rt.shutdown_timeout(timeout);
        assert_eq!(
            (
                report.finished,
                report.cancelled_tasks,
                report.blocking_still_running
            ),
            (stuck == 0, stuck, blocking),
            "{report:?}"
        );
        assert_eq!(drops.load(Ordering::SeqCst), guarded);
        (scene.after)();
    });
}

/// As [`shut_down`], by a plain drop.
fn drop_in(scene: fn() -> std::io::Result<Scene>) {
    within(Duration::from_secs(60), move || {
        let scene = scene().unwrap();
        let drops = scene.drops.clone();
        assert_eq!(drops.load(Ordering::SeqCst), 0);
        drop(scene.rt);
        assert_eq!(drops.load(Ordering::SeqCst), scene.guarded);
        (scene.after)();
    });
}

#[test]
fn shutdown_timeout_of_a_paused_runtime_without_timers() {
    shut_down(paused_without_timers, GRACE);
}

#[test]
fn dropping_a_paused_runtime_without_timers() {
    drop_in(paused_without_timers);
}

#[test]
fn shutdown_timeout_of_a_paused_runtime_with_timers_armed_forever() {
    shut_down(paused_with_timers, GRACE);
}

#[test]
fn dropping_a_paused_runtime_with_timers_armed_forever() {
    drop_in(paused_with_timers);
}

#[test]
fn shutdown_timeout_of_a_busy_runtime() {
    shut_down(busy, GRACE);
}

#[test]
fn dropping_a_busy_runtime() {
    drop_in(busy);
}

#[test]
fn shutdown_timeout_with_blocking_jobs_queued_and_running() {
    shut_down(blocking_queued_and_running, GRACE);
}

#[test]
fn dropping_a_runtime_with_blocking_jobs_queued_and_running() {
    drop_in(blocking_queued_and_running);
}

#[test]
fn shutdown_timeout_with_a_spawn_local_task_alive() {
    shut_down(spawn_local_alive, GRACE);
}

#[test]
fn dropping_a_runtime_with_a_spawn_local_task_alive() {
    drop_in(spawn_local_alive);
}

#[test]
fn shutdown_timeout_with_waiters_parked_on_a_socket_a_sleep_and_a_join_handle() {
    shut_down(waiters_parked, GRACE);
}

#[test]
fn dropping_a_runtime_with_waiters_parked_on_a_socket_a_sleep_and_a_join_handle() {
    drop_in(waiters_parked);
}

/// `Duration::ZERO` runs nothing more: every task left is cancelled, in
/// every state.
#[test]
fn shutdown_timeout_of_zero_in_every_state() {
    for scene in [
        paused_without_timers,
        paused_with_timers,
        busy,
        blocking_queued_and_running,
        spawn_local_alive,
        waiters_parked,
    ] {
        shut_down(scene, Duration::ZERO);
    }
    // With nothing left, it has finished.
    let report = ioloop::Runtime::new()
        .unwrap()
        .shutdown_timeout(Duration::ZERO);
    assert!(report.finished, "{report:?}");
    assert_eq!(report.cancelled_tasks, 0);
}

/// `Duration::MAX` cannot be added to the clock: it means no deadline (no
/// panic), and the shutdown returns once the tasks have finished, on a
/// running clock and on a paused one.
#[test]
fn shutdown_timeout_of_duration_max_waits_for_the_tasks_without_panicking() {
    for rt in [ioloop::Runtime::new(), paused()] {
        let rt = rt.unwrap();
        let sleeper = rt.spawn(ioloop::time::sleep(Duration::from_millis(5)));
        drop(rt.spawn(async move { sleeper.await.unwrap() }));
        let report = within(Duration::from_secs(60), move || {
            rt.shutdown_timeout(Duration::MAX)
        });
        assert!(report.finished, "{report:?}");
        assert_eq!(
            (report.cancelled_tasks, report.blocking_still_running),
            (0, 0)
        );
    }
}

/// Found by the tests above: the metrics, which a `Handle` keeps after its
/// runtime is gone, went on showing the tasks and timers of the loop's last
/// tick (`live_tasks: 4, live_timers: 1` here) after the shutdown had
/// dropped them all.
#[test]
fn the_metrics_after_a_shutdown_show_no_task_and_no_timer() -> std::io::Result<()> {
    let rt = ioloop::Runtime::new()?;
    let handle = rt.handle().clone();
    for _ in 0..4 {
        drop(rt.spawn(ioloop::time::sleep(Duration::from_secs(3600))));
    }
    // Until the loop has published the armed timers, at the end of a tick.
    rt.block_on(async {
        while handle.metrics().live_timers < 4 {
            ioloop::yield_now().await;
        }
    });
    assert_eq!(handle.metrics().live_tasks, 4);
    let report = within(Duration::from_secs(20), move || {
        rt.shutdown_timeout(Duration::ZERO)
    });
    assert_eq!(report.cancelled_tasks, 4);
    let metrics = handle.metrics();
    assert_eq!((metrics.live_tasks, metrics.live_timers), (0, 0));
    Ok(())
}
