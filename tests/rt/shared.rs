//! The runtime's objects a user can share, each with two users: one task
//! waits on the object while another calls every other method on it
//! (`try_*` ones included), and the waiter completes with the right
//! result. A `JoinSet` behind a `RefCell` (two tasks) and behind a mutex
//! (a task and a blocking job); a `JoinHandle` with its `AbortHandle`s;
//! a `Handle` and a `Runtime` used from other threads while a task waits.

use std::cell::{Cell, RefCell};
use std::future::poll_fn;
use std::rc::Rc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ioloop::task::{JoinError, JoinHandle, JoinSet, TaskState, WaitReason};
use ioloop::time::timeout;
use testkit::util::{self, parking::Signal};

/// Far longer than any of these tests takes; never what is measured.
const SAFETY: Duration = Duration::from_secs(10);

/// What a task waiting in `poll_join_next` gets.
type Next = Option<Result<usize, JoinError>>;

/// Yields until `done` holds, bounded by the safety net.
async fn until(done: impl Fn() -> bool) {
    let wait = async {
        while !done() {
            ioloop::yield_now().await;
        }
    };
    timeout(SAFETY, wait).await.expect("never came to hold");
}

/// A set shared by two tasks of one thread, as a `RefCell` lets them:
/// each borrows it for one call, never across an await.
type SharedSet = Rc<RefCell<JoinSet<usize>>>;

/// A set of tasks, task `i` returning `i` once gate `i` opens, and a task
/// waiting in `poll_join_next` for the set's next result: the first user.
struct Scene {
    set: SharedSet,
    gates: Vec<Arc<Signal>>,
    waiter: JoinHandle<Next>,
}

impl Scene {
    /// `gated` tasks; returns once the waiter has parked.
    async fn new(gated: usize) -> Scene {
        let set = SharedSet::default();
        let gates: Vec<_> = (0..gated).map(|_| util::signal()).collect();
        for (i, gate) in gates.iter().enumerate() {
            let gate = gate.clone();
            set.borrow_mut().spawn(async move {
                gate.wait().await;
                i
            });
        }
        let polled = Rc::new(Cell::new(false));
        let waiter = {
            let (set, polled) = (set.clone(), polled.clone());
            ioloop::spawn_local(poll_fn(move |cx| {
                polled.set(true);
                set.borrow_mut().poll_join_next(cx)
            }))
        };
        until(|| polled.get()).await;
        assert!(!waiter.is_finished());
        Scene { set, gates, waiter }
    }

    /// What the waiter got, once it got it.
    async fn waited(self) -> Next {
        timeout(SAFETY, self.waiter)
            .await
            .expect("the task waiting on the set was never woken")
            .unwrap()
    }
}

/// Runs `test` on a fresh runtime, under the safety net.
fn run<F: Future<Output = ()>>(test: impl FnOnce() -> F + Send + 'static) {
    util::within(SAFETY * 2, move || ioloop::block_on(test()));
}

/// The other user spawns into the set, three ways: the waiter gets the
/// first task to finish, the new one.
#[test]
fn a_set_waited_on_while_another_task_spawns_spawns_local_and_extends() {
    run(|| async {
        let scene = Scene::new(1).await;
        scene.set.borrow_mut().spawn(async { 10 });
        assert_eq!(scene.waited().await.unwrap().unwrap(), 10);

        let scene = Scene::new(1).await;
        scene.set.borrow_mut().spawn_local(async { 20 });
        assert_eq!(scene.waited().await.unwrap().unwrap(), 20);

        let scene = Scene::new(1).await;
        scene.set.borrow_mut().extend([async { 30 }]);
        assert_eq!(scene.waited().await.unwrap().unwrap(), 30);
    });
}

/// The other user looks without waiting (`try_join_next`, `len`,
/// `is_empty`): the waiter gets the task's result once its gate opens.
#[test]
fn a_set_waited_on_while_another_task_tries_and_counts() {
    run(|| async {
        let scene = Scene::new(1).await;
        assert!(scene.set.borrow_mut().try_join_next().is_none());
        assert_eq!(scene.set.borrow().len(), 1);
        assert!(!scene.set.borrow().is_empty());
        scene.gates[0].set();
        assert_eq!(scene.waited().await.unwrap().unwrap(), 0);
    });
}

/// The other user takes a result first, with `try_join_next`: the waiter
/// was woken for it, finds it gone, and waits on for the next.
#[test]
fn a_set_waited_on_while_another_task_takes_a_result_first() {
    run(|| async {
        let scene = Scene::new(2).await;
        scene.gates[0].set();
        let set = scene.set.clone();
        until(|| set.borrow().len() == 2 && taken(&set) == Some(0)).await;
        scene.gates[1].set();
        assert_eq!(scene.waited().await.unwrap().unwrap(), 1);
    });
}

/// `try_join_next` on `set`'s output, if any.
fn taken(set: &SharedSet) -> Option<usize> {
    set.borrow_mut().try_join_next().map(Result::unwrap)
}

/// `abort_all`: the waiter gets the cancelled task's error.
#[test]
fn a_set_waited_on_while_another_task_aborts_all() {
    run(|| async {
        let scene = Scene::new(1).await;
        scene.set.borrow().abort_all();
        assert!(scene.waited().await.unwrap().unwrap_err().is_cancelled());
    });
}

/// `detach_all`: the set is empty, and the waiter learns it (`None`);
/// the detached task still runs to its end.
#[test]
fn a_set_waited_on_while_another_task_detaches_all() {
    run(|| async {
        let scene = Scene::new(1).await;
        scene.set.borrow_mut().detach_all();
        assert!(scene.set.borrow().is_empty());
        let gate = scene.gates[0].clone();
        assert!(scene.waited().await.is_none());
        gate.set();
        until(|| ioloop::Handle::current().metrics().live_tasks == 0).await;
    });
}

/// Both users wait (`join_next` in the other): each gets one of the two
/// results, whichever finishes first going to either.
#[test]
fn a_set_waited_on_by_two_tasks_gives_each_a_result() {
    run(|| async {
        let scene = Scene::new(2).await;
        let other = {
            let set = scene.set.clone();
            ioloop::spawn_local(poll_fn(move |cx| set.borrow_mut().poll_join_next(cx)))
        };
        ioloop::yield_now().await;
        scene.gates[0].set();
        scene.gates[1].set();
        let other = timeout(SAFETY, other)
            .await
            .expect("the second waiter was never woken")
            .unwrap();
        let mut got = [scene.waited().await, other].map(|next| next.unwrap().unwrap());
        got.sort_unstable();
        assert_eq!(got, [0, 1]);
    });
}

/// `shutdown` (which waits too): the set ends empty, and the waiter gets
/// a cancelled task's error or, if the other took them all, `None`.
#[test]
fn a_set_waited_on_while_another_task_shuts_it_down() {
    run(|| async {
        let scene = Scene::new(2).await;
        let other = {
            let set = scene.set.clone();
            ioloop::spawn_local(async move {
                let mut set = std::mem::take(&mut *set.borrow_mut());
                set.shutdown().await;
                set.is_empty()
            })
        };
        assert!(timeout(SAFETY, other).await.unwrap().unwrap());
        assert!(scene.waited().await.is_none());
    });
}

/// The other takes the set out and joins it (`join_all`) or drops it,
/// leaving an empty one: the waiter gets `None`.
#[test]
fn a_set_waited_on_while_another_task_joins_all_or_drops_it() {
    run(|| async {
        let scene = Scene::new(2).await;
        let other = {
            let set = scene.set.clone();
            ioloop::spawn_local(async move {
                let taken = std::mem::take(&mut *set.borrow_mut());
                let mut outputs = taken.join_all().await;
                outputs.sort_unstable();
                outputs
            })
        };
        ioloop::yield_now().await;
        scene.gates.iter().for_each(|gate| gate.set());
        assert_eq!(timeout(SAFETY, other).await.unwrap().unwrap(), [0, 1]);
        assert!(scene.waited().await.is_none());

        let scene = Scene::new(2).await;
        drop(std::mem::take(&mut *scene.set.borrow_mut()));
        assert!(scene.waited().await.is_none());
    });
}

/// A set behind a mutex, shared by a task on the loop, waiting for its
/// next result, and a blocking job on another thread, which spawns into
/// it, tries it, counts it, and aborts the lot: the waiter gets the first
/// task's output, then a cancelled error, then `None`.
#[test]
fn a_set_behind_a_mutex_waited_on_while_a_blocking_job_uses_it() {
    run(|| async {
        let set = Arc::new(Mutex::new(JoinSet::<usize>::new()));
        let next = |set: &Arc<Mutex<JoinSet<usize>>>| {
            let set = set.clone();
            poll_fn(move |cx| set.lock().unwrap().poll_join_next(cx))
        };
        let gate = util::signal();
        let first = {
            let gate = gate.clone();
            set.lock().unwrap().spawn(async move {
                gate.wait().await;
                1
            })
        };
        let waiter = ioloop::spawn(next(&set));
        ioloop::yield_now().await;
        let job = {
            let set = set.clone();
            ioloop::spawn_blocking(move || {
                let mut set = set.lock().unwrap();
                assert!(set.try_join_next().is_none());
                assert_eq!((set.len(), set.is_empty()), (1, false));
                set.spawn(std::future::pending());
                assert_eq!(set.len(), 2);
            })
        };
        timeout(SAFETY, job).await.unwrap().unwrap();
        gate.set();
        let got = timeout(SAFETY, waiter).await.expect("never woken").unwrap();
        assert_eq!(got.unwrap().unwrap(), 1);
        assert!(first.is_finished());
        let waiter = ioloop::spawn(next(&set));
        ioloop::yield_now().await;
        let job = {
            let set = set.clone();
            ioloop::spawn_blocking(move || set.lock().unwrap().abort_all())
        };
        timeout(SAFETY, job).await.unwrap().unwrap();
        let got = timeout(SAFETY, waiter).await.expect("never woken").unwrap();
        assert!(got.unwrap().unwrap_err().is_cancelled());
        let waiter = ioloop::spawn(next(&set));
        assert!(timeout(SAFETY, waiter).await.unwrap().unwrap().is_none());
    });
}

/// A task awaits a `JoinHandle` while another, holding two of its
/// `AbortHandle`s, looks and aborts: the waiter gets the cancelled error,
/// and both abort handles see the task finished; aborting again does
/// nothing.
#[test]
fn a_join_handle_awaited_while_another_task_aborts_it() {
    run(|| async {
        let target = ioloop::spawn(std::future::pending::<usize>());
        let aborts = [target.abort_handle(), target.abort_handle()];
        let waiter = ioloop::spawn(target);
        ioloop::yield_now().await;
        assert!(aborts.iter().all(|abort| !abort.is_finished()));
        aborts[1].abort();
        let got = timeout(SAFETY, waiter).await.expect("never woken").unwrap();
        assert!(got.unwrap_err().is_cancelled());
        assert!(aborts.iter().all(|abort| abort.is_finished()));
        aborts[0].abort();
    });
}

/// The same, the abort made on another thread; and an abort that comes
/// after the task finished leaves the waiter its output.
#[test]
fn a_join_handle_awaited_while_another_thread_aborts_it() {
    run(|| async {
        let target = ioloop::spawn(std::future::pending::<usize>());
        let abort = target.abort_handle();
        let waiter = ioloop::spawn(target);
        ioloop::yield_now().await;
        std::thread::spawn(move || abort.abort()).join().unwrap();
        let got = timeout(SAFETY, waiter).await.expect("never woken").unwrap();
        assert!(got.unwrap_err().is_cancelled());

        let gate = util::signal();
        let target = {
            let gate = gate.clone();
            ioloop::spawn(async move {
                gate.wait().await;
                7
            })
        };
        let abort = target.abort_handle();
        let waiter = ioloop::spawn(target);
        ioloop::yield_now().await;
        gate.set();
        until(|| abort.is_finished()).await;
        std::thread::spawn(move || abort.abort()).join().unwrap();
        assert_eq!(timeout(SAFETY, waiter).await.unwrap().unwrap().unwrap(), 7);
    });
}

/// A `JoinHandle` itself shared (`&self` methods: `is_finished`,
/// `abort_handle`, `abort`) while a task polls it: the waiter gets the
/// cancelled error.
#[test]
fn a_join_handle_polled_by_one_task_while_another_calls_its_other_methods() {
    run(|| async {
        let target = Rc::new(RefCell::new(ioloop::spawn(std::future::pending::<usize>())));
        let waiter = {
            let target = target.clone();
            ioloop::spawn_local(poll_fn(move |cx| {
                std::pin::Pin::new(&mut *target.borrow_mut()).poll(cx)
            }))
        };
        ioloop::yield_now().await;
        assert!(!target.borrow().is_finished());
        let abort = target.borrow().abort_handle();
        assert!(!abort.is_finished());
        target.borrow().abort();
        let got = timeout(SAFETY, waiter).await.expect("never woken").unwrap();
        assert!(got.unwrap_err().is_cancelled());
        assert!(target.borrow().is_finished() && abort.is_finished());
    });
}

/// A task waits on a blocking job while other threads use the runtime's
/// `Handle`: `spawn`, `spawn_blocking`, `block_on`, `dump` (which shows
/// the waiter waiting on the job), `metrics` and `id`. Then the job is
/// released, and the waiter gets its output.
#[test]
fn a_handle_used_from_other_threads_while_a_task_waits() {
    run(|| async {
        let handle = ioloop::Handle::current();
        let release = util::signal();
        let job = {
            let release = release.clone();
            ioloop::spawn_blocking(move || {
                ioloop::Handle::current().block_on(release.wait());
                "job"
            })
        };
        // The waiter awaits a task that awaits the job: a dump shows a
        // join on a task, not on a blocking job.
        let middle = ioloop::spawn(job);
        let middle_id = {
            ioloop::yield_now().await;
            let dump = handle.dump();
            dump.tasks[dump.tasks.len() - 1].id
        };
        let waiter_line = line!() + 1;
        let waiter = ioloop::spawn(middle);
        ioloop::yield_now().await;
        let other = {
            let handle = handle.clone();
            ioloop::spawn_blocking(move || {
                let spawned = handle.spawn(async { 1 });
                let pooled = handle.spawn_blocking(|| 2);
                let sum = handle.block_on(async { spawned.await.unwrap() + pooled.await.unwrap() });
                let dump = handle.dump();
                let waiting = dump
                    .tasks
                    .iter()
                    .find(|task| task.location.line() == waiter_line)
                    .expect("the waiter in the dump");
                assert_eq!(waiting.state, TaskState::Idle, "{dump}");
                assert_eq!(
                    waiting.waits_on,
                    [WaitReason::Join { task: middle_id }],
                    "{dump}"
                );
                assert!(handle.metrics().live_tasks >= 1);
                (sum, handle.id())
            })
        };
        let (sum, id) = timeout(SAFETY, other).await.unwrap().unwrap();
        assert_eq!((sum, id), (3, handle.id()));
        assert!(!waiter.is_finished());
        release.set();
        let got = timeout(SAFETY, waiter).await.expect("never woken").unwrap();
        assert_eq!(got.unwrap().unwrap(), "job");
    });
}

/// Spins this (non-loop) thread until `done` holds, under the safety net.
fn wait_for(done: impl Fn() -> bool) {
    let deadline = std::time::Instant::now() + SAFETY;
    while !done() {
        assert!(std::time::Instant::now() < deadline, "never came to hold");
        std::thread::yield_now();
    }
}

/// A `Runtime` shared by two threads: one runs the loop, its `block_on`
/// waiting on a signal, while the other calls `spawn`, `enter`,
/// `handle`, `dump` and a `block_on` of its own (which waits its turn
/// and, meanwhile, releases the first).
#[test]
fn a_runtime_used_from_another_thread_while_its_loop_waits() {
    let rt = ioloop::Runtime::new().unwrap();
    let release = util::signal();
    let running = util::signal();
    std::thread::scope(|s| {
        let first = s.spawn(|| {
            rt.block_on(async {
                running.set();
                release.wait().await;
                "first"
            })
        });
        wait_for(|| running.is_set());
        let spawned = rt.spawn(async { 1 });
        let entered = {
            let _guard = rt.enter();
            ioloop::spawn(async { 2 })
        };
        // The loop runs both, and parks again with its main future waiting.
        wait_for(|| spawned.is_finished() && entered.is_finished());
        wait_for(|| {
            let dump = rt.dump();
            dump.tasks.is_empty() && !dump.main_running
        });
        assert!(rt.handle().metrics().jobs_run >= 2);
        let release = release.clone();
        let sum = rt.block_on(async move {
            let sum = spawned.await.unwrap() + entered.await.unwrap();
            release.set();
            sum
        });
        assert_eq!(sum, 3);
        assert_eq!(first.join().unwrap(), "first");
    });
}

/// Sends on `open` when woken, then blocks until `go` says: a waker that
/// holds the loop in the moment it is woken.
struct Window {
    open: Mutex<std::sync::mpsc::Sender<()>>,
    go: Mutex<std::sync::mpsc::Receiver<()>>,
}

impl std::task::Wake for Window {
    fn wake(self: Arc<Self>) {
        self.open.lock().unwrap().send(()).unwrap();
        self.go.lock().unwrap().recv_timeout(SAFETY).unwrap();
    }
}

/// Sends on its channel when woken.
struct Woken(Mutex<std::sync::mpsc::Sender<()>>);

impl std::task::Wake for Woken {
    fn wake(self: Arc<Self>) {
        let _ = self.0.lock().unwrap().send(());
    }
}

/// A set behind a mutex, polled from a thread that is not the loop's, in
/// the moment between its task's end being queued and its output being
/// stored (held open by the first poller's own waker, which the loop
/// wakes then): the second poll parks its waker on the task's handle.
/// Another user's `try_join_next` there must leave that waker in place
/// (it parked a no-op one over it), so the poller is woken once the
/// output is in, and gets it.
#[test]
fn a_set_polled_off_the_loop_as_its_task_ends_is_woken_despite_try_join_next() {
    util::within(SAFETY * 3, polled_off_the_loop_as_its_task_ends);
}

/// Sets its signal when dropped, so the loop's thread ends however the
/// test does.
struct SetOnDrop(Arc<Signal>);

impl Drop for SetOnDrop {
    fn drop(&mut self) {
        self.0.set();
    }
}

fn polled_off_the_loop_as_its_task_ends() {
    use std::sync::mpsc::channel;
    use std::task::{Context, Poll, Waker};
    let rt = ioloop::Runtime::new().unwrap();
    let set = Arc::new(Mutex::new(JoinSet::new()));
    let (open_tx, open) = channel();
    let (go, go_rx) = channel();
    let window = Waker::from(Arc::new(Window {
        open: Mutex::new(open_tx),
        go: Mutex::new(go_rx),
    }));
    let (woken_tx, woken) = channel();
    let poller = Waker::from(Arc::new(Woken(Mutex::new(woken_tx))));
    let gate = util::signal();
    {
        let _entered = rt.enter();
        let gate = gate.clone();
        set.lock().unwrap().spawn(async move {
            gate.wait().await;
            5
        });
    }
    let poll = |waker: &Waker| {
        set.lock()
            .unwrap()
            .poll_join_next(&mut Context::from_waker(waker))
    };
    assert!(poll(&window).is_pending());
    let done = util::signal();
    std::thread::scope(|s| {
        let _done = SetOnDrop(done.clone());
        s.spawn(|| {
            rt.block_on(async {
                gate.set();
                done.wait().await;
            })
        });
        // The task has ended; the loop is inside `window`'s wake.
        open.recv_timeout(SAFETY).expect("the task never ended");
        assert!(poll(&poller).is_pending());
        assert!(set.lock().unwrap().try_join_next().is_none());
        go.send(()).unwrap();
        woken
            .recv_timeout(SAFETY)
            .expect("the poller was never woken once the output was in");
        let Poll::Ready(Some(Ok(5))) = poll(&poller) else {
            panic!("the output was not there");
        };
    });
}
