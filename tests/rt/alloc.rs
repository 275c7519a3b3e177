//! Allocation discipline: one allocation per spawned task, none per wake,
//! none per echoed line or datagram.
//!
//! A global allocator counts allocations per thread, so tests running in
//! parallel in this binary do not disturb each other's counts.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::future::poll_fn;
use std::sync::{Arc, Mutex};
use std::task::{Poll, Waker};

struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

fn count() {
    // `try_with`: the allocator also runs while thread locals are torn down.
    let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
}

fn allocations() -> u64 {
    ALLOCATIONS.with(Cell::get)
}

// SAFETY: every method forwards to `System` with the caller's arguments
// unchanged, so `System`'s guarantees are ours; counting touches only a
// const-initialised thread-local `Cell`, which never allocates.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: forwarded unchanged; the caller upholds `alloc`'s contract.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: forwarded unchanged; the caller upholds the contract.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        // SAFETY: forwarded unchanged; the caller upholds the contract.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded unchanged; the caller upholds the contract.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

const N: usize = 10_000;

async fn spawn_and_join(handles: &mut Vec<ioloop::JoinHandle<usize>>) -> usize {
    for i in 0..N {
        handles.push(ioloop::spawn(async move {
            ioloop::yield_now().await;
            i
        }));
    }
    let mut sum = 0;
    for handle in handles.drain(..) {
        sum += handle.await.unwrap();
    }
    sum
}

#[test]
fn one_allocation_per_spawned_task() {
    ioloop::block_on(async {
        let mut handles = Vec::with_capacity(N);
        // Warm up: the run queue and the task list grow to N once.
        spawn_and_join(&mut handles).await;
        let before = allocations();
        let sum = spawn_and_join(&mut handles).await;
        let spent = allocations() - before;
        assert_eq!(sum, N * (N - 1) / 2);
        // Spawning, running, yielding, completing and joining N tasks.
        assert_eq!(spent, N as u64, "allocations for {N} tasks");
    });
}

/// `spawn_local` tasks too: one allocation each, whatever their future
/// holds (here an `Rc`, which `spawn` would refuse).
#[test]
fn one_allocation_per_spawn_local_task() {
    async fn spawn_local_and_join(handles: &mut Vec<ioloop::JoinHandle<usize>>) -> usize {
        let shared = std::rc::Rc::new(1usize);
        for i in 0..N {
            let shared = shared.clone();
            handles.push(ioloop::spawn_local(async move {
                ioloop::yield_now().await;
                i * *shared
            }));
        }
        let mut sum = 0;
        for handle in handles.drain(..) {
            sum += handle.await.unwrap();
        }
        sum
    }
    ioloop::block_on(async {
        let mut handles = Vec::with_capacity(N);
        spawn_local_and_join(&mut handles).await;
        let before = allocations();
        let sum = spawn_local_and_join(&mut handles).await;
        let spent = allocations() - before;
        assert_eq!(sum, N * (N - 1) / 2);
        // N tasks, and the one `Rc` the round shares.
        assert_eq!(spent, N as u64 + 1, "allocations for {N} local tasks");
    });
}

/// Two tasks taking turns: each wake is a cross-task wake on the loop thread.
struct Baton {
    turn: usize,
    wakers: [Option<Waker>; 2],
}

async fn play(baton: Arc<Mutex<Baton>>, me: usize, rounds: usize) {
    for _ in 0..rounds {
        poll_fn(|cx| {
            let mut b = baton.lock().unwrap();
            if b.turn == me {
                b.turn = 1 - me;
                if let Some(other) = b.wakers[1 - me].take() {
                    other.wake();
                }
                Poll::Ready(())
            } else {
                b.wakers[me] = Some(cx.waker().clone());
                Poll::Pending
            }
        })
        .await;
    }
}

#[test]
fn waking_does_not_allocate() {
    ioloop::block_on(async {
        let baton = Arc::new(Mutex::new(Baton {
            turn: 0,
            wakers: [None, None],
        }));
        let a = ioloop::spawn(play(baton.clone(), 0, 20_000));
        let b = ioloop::spawn(play(baton.clone(), 1, 20_000));
        // Let them warm up, then count while they wake each other.
        for _ in 0..100 {
            ioloop::yield_now().await;
        }
        let before = allocations();
        for _ in 0..10_000 {
            ioloop::yield_now().await; // a self-wake per round, too
        }
        let spent = allocations() - before;
        assert!(!a.is_finished() && !b.is_finished());
        assert_eq!(spent, 0, "allocations during 10,000 ticks of wakes");
        a.await.unwrap();
        b.await.unwrap();
    });
}

/// How an echo loop bounds each read with an idle timeout.
#[derive(Clone, Copy)]
enum Idle {
    /// `timeout(idle, read_line())`: a timer armed and disarmed per read.
    TimeoutPerRead,
    /// One `Sleep` for the connection, moved on with `reset_after` before
    /// each read and raced against it, as examples/line_echo runs it.
    OneTimerMovedOn,
}

/// The line echo handler's loop (a read with an idle timeout, a reply
/// built in a reused buffer, write + drain): once the connection is warm,
/// an echoed message allocates nothing on the loop thread.
#[test]
fn an_echoed_message_allocates_nothing_once_warm() -> std::io::Result<()> {
    echoed_messages_allocate_nothing(Idle::TimeoutPerRead)
}

/// The same with the idle timer examples/line_echo keeps: one per
/// connection, moved on before each read.
#[test]
fn an_echoed_message_with_one_idle_timer_moved_on_allocates_nothing_once_warm()
-> std::io::Result<()> {
    echoed_messages_allocate_nothing(Idle::OneTimerMovedOn)
}

fn echoed_messages_allocate_nothing(idle: Idle) -> std::io::Result<()> {
    use std::future::{Future, poll_fn};
    use std::io::{BufRead, BufReader, Write};
    use std::pin::{Pin, pin};
    use std::task::Poll;
    use std::time::Duration;

    const IDLE: Duration = Duration::from_secs(30);
    // Warm means every buffer at its steady size; the slowest to get there
    // is the timer heap, whose cancelled entries are swept once it passes
    // 1,024, so warm-up takes a little more than that many messages.
    const WARM: usize = 3000;
    const COUNTED: usize = 2000;
    let (addr_tx, addr_rx) = std::sync::mpsc::channel();
    let client = std::thread::spawn(move || -> std::io::Result<()> {
        let stream = std::net::TcpStream::connect(addr_rx.recv().unwrap())?;
        stream.set_read_timeout(Some(Duration::from_secs(20)))?;
        stream.set_nodelay(true)?;
        let mut reader = BufReader::new(stream.try_clone()?);
        let mut writer = stream;
        let mut line = String::new();
        for i in 0..WARM + COUNTED {
            // One write per message: several small ones would meet Nagle's
            // algorithm and the peer's delayed ACK (40 ms a round trip).
            writer.write_all(format!("message {i}\n").as_bytes())?;
            line.clear();
            reader.read_line(&mut line)?;
            assert_eq!(line, format!("[echo] message {i}\n"));
        }
        Ok(())
    });
    let spent = ioloop::block_on(async move {
        let listener = ioloop::net::TcpListener::bind("127.0.0.1:0").await?;
        addr_tx.send(listener.local_addr()?).unwrap();
        let (stream, _) = listener.accept().await?;
        let mut reader = ioloop::io::StreamReader::new(&stream);
        let mut writer = ioloop::io::StreamWriter::new(&stream);
        let mut timer = ioloop::time::sleep(IDLE);
        let mut reply = Vec::new();
        let mut before = 0;
        for i in 0..WARM + COUNTED {
            if i == WARM {
                before = allocations();
            }
            let line = match idle {
                Idle::TimeoutPerRead => ioloop::time::timeout(IDLE, reader.read_line()).await?,
                Idle::OneTimerMovedOn => {
                    timer.reset_after(IDLE);
                    let mut read = pin!(reader.read_line());
                    poll_fn(|cx| match read.as_mut().poll(cx) {
                        Poll::Ready(line) => Poll::Ready(Ok(line)),
                        Poll::Pending => Pin::new(&mut timer).poll(cx).map(Err),
                    })
                    .await
                    .map_err(|()| std::io::Error::other("idle"))?
                }
            }?
            .expect("a line");
            reply.clear();
            reply.extend_from_slice(b"[echo] ");
            reply.extend_from_slice(line);
            reply.push(b'\n');
            writer.write(&reply);
            writer.drain().await?;
        }
        Ok::<_, std::io::Error>(allocations() - before)
    })?;
    client.join().unwrap()?;
    assert_eq!(spent, 0, "allocations for {COUNTED} echoed messages");
    Ok(())
}

/// A UDP echo, as the cookbook's servers run it: `recv_from`, then
/// `send_to` the `SocketAddr` it gave. Addresses are `ToSocketAddrs`,
/// which may name a host; a literal one must cost no allocation (and no
/// trip to the blocking pool), datagram after datagram.
#[test]
fn send_to_a_socket_addr_allocates_nothing() -> std::io::Result<()> {
    use ioloop::net::UdpSocket;

    const WARM: usize = 100;
    const COUNTED: usize = 1000;
    let spent = ioloop::block_on(async {
        let client = UdpSocket::bind("127.0.0.1:0").await?;
        let server = UdpSocket::bind("127.0.0.1:0").await?;
        let server_addr = server.local_addr()?;
        let mut buf = [0; 64];
        let mut before = 0;
        for i in 0..WARM + COUNTED {
            if i == WARM {
                before = allocations();
            }
            client.send_to(b"ping", server_addr).await?;
            let (n, from) = server.recv_from(&mut buf).await?;
            server.send_to(&buf[..n], from).await?;
            let (n, _) = client.recv_from(&mut buf).await?;
            assert_eq!(&buf[..n], b"ping");
        }
        Ok::<_, std::io::Error>(allocations() - before)
    })?;
    assert_eq!(spent, 0, "allocations for {COUNTED} datagrams echoed");
    Ok(())
}
