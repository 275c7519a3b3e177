//! The task dump: every live task of a small server with its state and
//! what it waits on; and a dump taken from another thread while the loop
//! is stuck in a poll, the stuck task shown running.

use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

use ioloop::net::{TcpListener, TcpStream};
use ioloop::task::{Dump, TaskDump, TaskState, WaitReason};

const SAFETY: Duration = Duration::from_secs(20);

/// The task spawned at `line` of this file.
fn spawned_at(dump: &Dump, line: u32) -> Vec<&TaskDump> {
    dump.tasks
        .iter()
        .filter(|task| task.location.file() == file!() && task.location.line() == line)
        .collect()
}

fn waits_on_one_read(task: &TaskDump) -> bool {
    task.state == TaskState::Idle && matches!(task.waits_on[..], [WaitReason::Read { .. }])
}

#[test]
fn a_dump_lists_every_task_of_a_small_server() {
    ioloop::block_on(async {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let conn_line = line!() + 7;
        let listener_line = line!() + 1;
        let _server = ioloop::spawn(async move {
            let mut conns = Vec::new();
            loop {
                let (stream, _) = listener.accept().await.unwrap();
                // Parks on a read: the clients send nothing.
                conns.push(ioloop::spawn(async move {
                    let mut byte = [0u8; 1];
                    let _ = stream.peek(&mut byte).await;
                }));
            }
        });
        let sleeper_line = line!() + 1;
        let sleeper = ioloop::spawn(ioloop::time::sleep(Duration::from_secs(3600)));
        let joiner_line = line!() + 1;
        let _joiner = ioloop::spawn(sleeper);
        let mut clients = Vec::new();
        for _ in 0..3 {
            clients.push(TcpStream::connect(addr).await.unwrap());
        }
        // Until every task has reached its wait: a bounded number of turns.
        let mut dump = ioloop::Handle::current().dump();
        for _ in 0..10_000 {
            let conns = spawned_at(&dump, conn_line);
            if conns.len() == 3
                && conns.iter().all(|task| waits_on_one_read(task))
                && spawned_at(&dump, joiner_line)[0].state == TaskState::Idle
            {
                break;
            }
            ioloop::yield_now().await;
            dump = ioloop::Handle::current().dump();
        }
        let text = dump.to_string();
        assert_eq!(dump.tasks.len(), 6, "{text}");
        // Taken by the block_on future, in its poll.
        assert!(dump.main_running, "{text}");
        let conns = spawned_at(&dump, conn_line);
        assert_eq!(conns.len(), 3, "{text}");
        for conn in &conns {
            assert!(waits_on_one_read(conn), "{text}");
            assert!(conn.polls >= 1, "{text}");
        }
        // Three connections, three sources.
        let mut sources: Vec<_> = conns.iter().map(|task| task.waits_on[0]).collect();
        sources.dedup();
        assert_eq!(sources.len(), 3, "{text}");
        let server = spawned_at(&dump, listener_line)[0];
        assert!(waits_on_one_read(server), "{text}");
        let sleeper = spawned_at(&dump, sleeper_line)[0];
        assert_eq!(sleeper.state, TaskState::Idle, "{text}");
        assert!(
            matches!(sleeper.waits_on[..], [WaitReason::Timer { deadline, .. }]
                if deadline > std::time::Instant::now() + Duration::from_secs(3000)),
            "{text}"
        );
        let joiner = spawned_at(&dump, joiner_line)[0];
        assert_eq!(joiner.state, TaskState::Idle, "{text}");
        assert_eq!(
            joiner.waits_on,
            [WaitReason::Join { task: sleeper.id }],
            "{text}"
        );
        // Ids are unique, and the text has a line per task.
        let mut ids: Vec<_> = dump.tasks.iter().map(|task| task.id).collect();
        ids.dedup();
        assert_eq!(ids.len(), 6);
        assert_eq!(text.lines().count(), 7, "{text}");
        assert!(text.contains("reading I/O source"), "{text}");
        assert!(
            text.contains(&format!("task #{} to finish", sleeper.id)),
            "{text}"
        );
    });
}

#[test]
fn a_dump_from_another_thread_shows_the_task_stuck_in_a_poll() {
    let rt = ioloop::Runtime::new().unwrap();
    let lock = Arc::new(Mutex::new(()));
    let guard = lock.lock().unwrap();
    let (started_tx, started) = mpsc::channel();
    let idle_line = line!() + 1;
    let idle = rt.spawn(std::future::pending::<()>());
    let blocked = lock.clone();
    let stuck_line = line!() + 1;
    let stuck = rt.spawn(async move {
        started_tx.send(()).unwrap();
        drop(blocked.lock().unwrap());
    });
    std::thread::scope(|s| {
        let runner = s.spawn(|| rt.block_on(stuck));
        started.recv_timeout(SAFETY).expect("the task never ran");
        // The loop is stuck in the task's poll: dump from here.
        let dump = rt.handle().dump();
        let text = dump.to_string();
        let stuck = spawned_at(&dump, stuck_line);
        assert_eq!(stuck.len(), 1, "{text}");
        assert_eq!(stuck[0].state, TaskState::Running, "{text}");
        assert_eq!(stuck[0].polls, 1, "{text}");
        assert!(text.contains("RUNNING"), "{text}");
        let idle = spawned_at(&dump, idle_line);
        assert_eq!(idle.len(), 1, "{text}");
        assert_ne!(idle[0].state, TaskState::Running, "{text}");
        drop(guard);
        runner.join().unwrap().unwrap();
    });
    idle.abort();
}

#[test]
fn every_spawn_function_records_its_caller() {
    let rt = ioloop::Runtime::new().unwrap();
    let mut lines = Vec::new();
    lines.push(line!() + 1);
    let _a = rt.spawn(std::future::pending::<()>());
    lines.push(line!() + 1);
    let _b = rt.handle().spawn(std::future::pending::<()>());
    let mut set = ioloop::task::JoinSet::new();
    let more = rt.block_on(async {
        let mut lines = Vec::new();
        lines.push(line!() + 1);
        let _c = ioloop::spawn(std::future::pending::<()>());
        lines.push(line!() + 1);
        let _d = ioloop::spawn_local(std::future::pending::<()>());
        lines.push(line!() + 1);
        set.spawn(std::future::pending::<()>());
        lines.push(line!() + 1);
        set.spawn_local(std::future::pending::<()>());
        // `spawn` from a blocking job, which is not on the loop's thread.
        lines.push(line!() + 2);
        ioloop::spawn_blocking(|| {
            drop(ioloop::spawn(std::future::pending::<()>()));
        })
        .await
        .unwrap();
        ioloop::yield_now().await;
        lines
    });
    lines.extend(more);
    let dump = rt.dump();
    for line in lines {
        assert_eq!(spawned_at(&dump, line).len(), 1, "line {line}: {dump}");
    }
}

/// A task keeps its spawn location as an index into a table of sites,
/// looked up through a small per-thread cache of 16 entries: 20 sites
/// spawned from in turn, twice (more sites than the cache holds, so
/// entries are evicted and found again), on the loop's thread and on a
/// blocking job's; each task still shows its own line.
#[test]
fn many_spawn_sites_each_keep_their_own_location() {
    macro_rules! spawn_at_line {
        ($lines:ident) => {{
            $lines.push(line!());
            drop(ioloop::spawn(std::future::pending::<()>()));
        }};
    }
    fn spawn_from_twenty_lines(lines: &mut Vec<u32>) {
        for _ in 0..2 {
            spawn_at_line!(lines);
            spawn_at_line!(lines);
            spawn_at_line!(lines);
            spawn_at_line!(lines);
            spawn_at_line!(lines);
            spawn_at_line!(lines);
            spawn_at_line!(lines);
            spawn_at_line!(lines);
            spawn_at_line!(lines);
            spawn_at_line!(lines);
            spawn_at_line!(lines);
            spawn_at_line!(lines);
            spawn_at_line!(lines);
            spawn_at_line!(lines);
            spawn_at_line!(lines);
            spawn_at_line!(lines);
            spawn_at_line!(lines);
            spawn_at_line!(lines);
            spawn_at_line!(lines);
            spawn_at_line!(lines);
        }
    }
    let rt = ioloop::Runtime::new().unwrap();
    let lines = rt.block_on(async {
        let mut lines = Vec::new();
        spawn_from_twenty_lines(&mut lines);
        let pooled = ioloop::spawn_blocking(|| {
            let mut lines = Vec::new();
            spawn_from_twenty_lines(&mut lines);
            lines
        });
        lines.extend(pooled.await.unwrap());
        ioloop::yield_now().await;
        lines
    });
    let dump = rt.dump();
    assert_eq!(dump.tasks.len(), lines.len(), "{dump}");
    for line in lines.iter().copied() {
        let expected = lines.iter().filter(|&&l| l == line).count();
        assert_eq!(
            spawned_at(&dump, line).len(),
            expected,
            "line {line}: {dump}"
        );
    }
}

/// Bug 9 of issue 40: on a paused runtime a dump measured a timer's
/// virtual deadline, and a task's age, against the real clock, so a task
/// sleeping 60 s showed "due in 60.000s" however far the clock had moved.
/// Both are on the runtime's clock now: 5 s and then 50 s more later, the
/// timer is due in 55 s, then 5 s, and the task is 5 s, then 55 s old;
/// and a dump from another thread, off the loop, reads that clock too.
#[test]
fn a_dump_on_a_paused_runtime_reads_the_runtimes_clock() {
    let rt = ioloop::Runtime::builder()
        .start_paused(true)
        .build()
        .unwrap();
    let sleeper_line = line!() + 3;
    let sleeper = rt.block_on(async {
        let start = ioloop::time::Instant::now();
        let sleeper = ioloop::spawn(ioloop::time::sleep(Duration::from_secs(60)));
        ioloop::yield_now().await; // the sleeper's first poll arms its timer
        for (moved, left, age) in [(5, "55.000s", 5), (50, "5.000s", 55)] {
            ioloop::time::advance(Duration::from_secs(moved)).await;
            let dump = ioloop::Handle::current().dump();
            let text = dump.to_string();
            let task = spawned_at(&dump, sleeper_line)[0];
            assert!(text.contains(&format!("a timer due in {left}")), "{text}");
            assert_eq!(task.age, Duration::from_secs(age), "{text}");
            let due = (start + Duration::from_secs(60)).into_std();
            let due_in = Duration::from_secs(60 - age);
            assert_eq!(
                task.waits_on,
                [WaitReason::Timer {
                    deadline: due,
                    due_in
                }],
                "{text}"
            );
        }
        sleeper.abort_handle()
    });
    let dump = std::thread::scope(|s| s.spawn(|| rt.handle().dump()).join().unwrap());
    let task = spawned_at(&dump, sleeper_line)[0];
    assert_eq!(task.age, Duration::from_secs(55), "{dump}");
    sleeper.abort();
}
