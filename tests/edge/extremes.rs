//! Extremes: every public parameter that takes a `Duration` or a size, at
//! `0`, `1`, its `MAX` and just over the platform's limit. Each either
//! works (saturating where it must), or is refused at the call, with a
//! clear message: a documented panic at the setter for nonsense such as
//! zero threads, an `io::Error` for what the OS refuses. Never a panic
//! somewhere else later (a watchdog thread, the loop, a pool thread).
//!
//! A sleep of `Duration::MAX` is polled once and dropped, never awaited;
//! every test is bounded by `within`.

use std::io;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::pin;
use std::time::Duration;

use ioloop::io::{StreamReader, StreamWriter};
use ioloop::net::{TcpListener, TcpSocket, TcpStream, UdpSocket};
use ioloop::time::{
    Instant, MissedTickBehavior, advance, interval, interval_at, sleep, sleep_until, timeout,
};
use ioloop::{Builder, Runtime};
use testkit::time_poll::poll_once;
use testkit::util::{panic_text, within};

/// The safety net of every test here; never a measure.
const SAFETY: Duration = Duration::from_secs(60);

/// Panics if any thread of the runtime's (its watchdog, its blocking pool)
/// panicked.
fn assert_no_runtime_thread_panicked(what: &str) {
    let panics = testkit::util::panicked_threads().lock().unwrap();
    let ours: Vec<_> = panics.iter().filter(|n| n.starts_with("ioloop-")).collect();
    assert!(
        ours.is_empty(),
        "{what}: runtime threads panicked: {ours:?}"
    );
}

/// The panic message of `f`, which must panic.
fn panic_message(f: impl FnOnce()) -> String {
    let payload = catch_unwind(AssertUnwindSafe(f)).expect_err("expected a panic at the call");
    panic_text(&*payload)
}

/// Builds a runtime from `builder`, and runs a task, a sleep and a
/// blocking job on it: what every setting must survive.
fn exercise(what: &str, builder: &mut Builder) -> io::Result<()> {
    testkit::util::panicked_threads();
    let rt = builder.build()?;
    rt.block_on(async {
        let task = ioloop::spawn(async { 1 });
        sleep(Duration::from_millis(1)).await;
        let job = ioloop::spawn_blocking(|| 2);
        assert_eq!(task.await.unwrap() + job.await.unwrap(), 3);
    });
    drop(rt);
    assert_no_runtime_thread_panicked(what);
    Ok(())
}

#[test]
fn builder_event_interval_at_its_extremes() -> io::Result<()> {
    within(SAFETY, || {
        let msg = panic_message(|| {
            Builder::new().event_interval(0);
        });
        assert!(msg.contains("event_interval"), "{msg}");
        for n in [1, 2, usize::MAX] {
            exercise("event_interval", Builder::new().event_interval(n))?;
        }
        Ok(())
    })
}

/// Issue 28, item 9: `events_capacity(usize::MAX)` panicked in `build`
/// ("capacity overflow"), and a capacity past epoll's limit
/// (`INT_MAX / sizeof(struct epoll_event)`) made every `epoll_wait` fail
/// with `EINVAL`, which panics the loop. Both are taken as the largest
/// capacity the loop uses.
#[test]
fn builder_events_capacity_past_epolls_limit_is_capped_at_the_setter() -> io::Result<()> {
    within(SAFETY, || {
        let msg = panic_message(|| {
            Builder::new().events_capacity(0);
        });
        assert!(msg.contains("events_capacity"), "{msg}");
        for n in [1, 2, 65_536, 65_537, 178_956_971, usize::MAX] {
            exercise("events_capacity", Builder::new().events_capacity(n))?;
        }
        Ok(())
    })
}

/// The event batch at its edge (issue 40's rule "every length limit at
/// its edge"): with `events_capacity(c)`, one poll takes at most `c`
/// events; `c - 1`, `c` and `c + 1` sources made ready at once (a
/// datagram to each of as many UDP sockets, each with a task waiting in
/// `recv_from`) are all served, the one past the batch by the next poll.
#[test]
fn builder_events_capacity_batches_at_their_edge_are_all_served() -> io::Result<()> {
    within(SAFETY, || {
        for capacity in [1, 2, 16] {
            for ready in [capacity - 1, capacity, capacity + 1] {
                let rt = Builder::new().events_capacity(capacity).build()?;
                rt.block_on(async {
                    let mut receivers = Vec::new();
                    let mut addrs = Vec::new();
                    for i in 0..ready {
                        let socket = UdpSocket::bind("127.0.0.1:0").await?;
                        addrs.push(socket.local_addr()?);
                        receivers.push(ioloop::spawn(async move {
                            let mut buf = [0; 8];
                            let (n, _) = socket.recv_from(&mut buf).await?;
                            assert_eq!(&buf[..n], &(i as u64).to_le_bytes());
                            Ok::<_, io::Error>(())
                        }));
                    }
                    // Each receiver waits, with its readiness cleared.
                    ioloop::yield_now().await;
                    ioloop::yield_now().await;
                    let before = rt_events();
                    let sender = std::net::UdpSocket::bind("127.0.0.1:0")?;
                    for (i, addr) in addrs.iter().enumerate() {
                        sender.send_to(&(i as u64).to_le_bytes(), addr)?;
                    }
                    for receiver in receivers {
                        receiver.await.unwrap()?;
                    }
                    let events = rt_events() - before;
                    assert!(
                        events >= ready as u64,
                        "capacity {capacity}, {ready} ready: {events} events"
                    );
                    Ok::<_, io::Error>(())
                })?;
            }
        }
        Ok(())
    })
}

/// The I/O events the current runtime has received so far.
fn rt_events() -> u64 {
    ioloop::Handle::current().metrics().io_events
}

#[test]
fn builder_max_blocking_threads_at_its_extremes() -> io::Result<()> {
    within(SAFETY, || {
        let msg = panic_message(|| {
            Builder::new().max_blocking_threads(0);
        });
        assert!(msg.contains("max_blocking_threads"), "{msg}");
        for n in [1, 2, usize::MAX] {
            exercise(
                "max_blocking_threads",
                Builder::new().max_blocking_threads(n),
            )?;
        }
        Ok(())
    })
}

#[test]
fn builder_thread_keep_alive_at_its_extremes() -> io::Result<()> {
    within(SAFETY, || {
        for keep_alive in [
            Duration::ZERO,
            Duration::from_nanos(1),
            Duration::from_secs(u64::MAX),
            Duration::MAX,
        ] {
            exercise(
                "thread_keep_alive",
                Builder::new().thread_keep_alive(keep_alive),
            )?;
        }
        Ok(())
    })
}

/// A stack the OS cannot map fails the job, through its handle, with the
/// OS's error; it panics nowhere.
#[test]
fn builder_thread_stack_size_at_its_extremes() -> io::Result<()> {
    within(SAFETY, || {
        for bytes in [0, 1, 4096] {
            exercise("thread_stack_size", Builder::new().thread_stack_size(bytes))?;
        }
        for bytes in [1 << 47, isize::MAX as usize, usize::MAX - 4095, usize::MAX] {
            let rt = Builder::new().thread_stack_size(bytes).build()?;
            let err = rt
                .block_on(async { ioloop::spawn_blocking(|| 1).await })
                .expect_err("a job ran on a thread with an impossible stack");
            assert!(!err.is_cancelled(), "{err}");
            drop(rt);
            assert_no_runtime_thread_panicked("thread_stack_size");
        }
        Ok(())
    })
}

#[test]
fn builder_slow_poll_threshold_at_its_extremes() -> io::Result<()> {
    within(SAFETY, || {
        let msg = panic_message(|| {
            Builder::new().slow_poll_threshold(Some(Duration::ZERO));
        });
        assert!(msg.contains("slow_poll_threshold"), "{msg}");
        for threshold in [
            None,
            Some(Duration::from_nanos(1)),
            Some(Duration::from_secs(u64::MAX)),
            Some(Duration::MAX),
        ] {
            exercise(
                "slow_poll_threshold",
                Builder::new().slow_poll_threshold(threshold),
            )?;
        }
        Ok(())
    })
}

#[test]
fn shutdown_timeout_at_its_extremes() -> io::Result<()> {
    within(SAFETY, || {
        for grace in [Duration::ZERO, Duration::from_nanos(1), Duration::MAX] {
            let rt = Runtime::new()?;
            let _stuck = rt.spawn(std::future::pending::<()>());
            let report = rt.shutdown_timeout(if grace == Duration::MAX {
                // The stuck task would hold a MAX grace for ever: MAX is
                // checked with nothing to wait for.
                Duration::ZERO
            } else {
                grace
            });
            assert!(!report.finished);
            let rt = Runtime::new()?;
            assert!(rt.shutdown_timeout(grace).finished);
        }
        assert_no_runtime_thread_panicked("shutdown_timeout");
        Ok(())
    })
}

#[test]
fn sleep_timeout_and_reset_at_their_extremes() -> io::Result<()> {
    within(SAFETY, || {
        Runtime::new()?.block_on(async {
            for d in [Duration::ZERO, Duration::from_nanos(1)] {
                sleep(d).await;
                assert_eq!(timeout(d, async { 1 }).await, Ok(1));
            }
            for d in [
                Duration::from_secs(86_400 * 365 * 30),
                Duration::from_secs(u64::MAX),
                Duration::MAX,
            ] {
                let mut s = sleep(d);
                assert!(poll_once(&mut s).is_pending());
                s.reset_after(d);
                assert!(poll_once(&mut s).is_pending());
                s.reset_after(Duration::ZERO);
                assert!(poll_once(&mut s).is_ready());
                let mut t = pin!(timeout(d, std::future::pending::<()>()));
                assert!(poll_once(&mut t).is_pending());
                assert_eq!(timeout(d, async { 2 }).await, Ok(2));
            }
            // Instants at the ends of what the clock holds.
            let far = Instant::now()
                .checked_add(Duration::from_secs(i64::MAX as u64 / 4))
                .expect("std's Instant holds an i64 of seconds");
            let mut s = sleep_until(far);
            assert!(!s.is_elapsed());
            assert!(poll_once(&mut s).is_pending());
            s.reset(Instant::now());
            assert!(poll_once(&mut s).is_ready());
            assert!(Instant::now().checked_add(Duration::MAX).is_none());
            let past = Instant::now()
                .checked_sub(Duration::from_secs(86_400))
                .unwrap_or_else(Instant::now);
            sleep_until(past).await;
        });
        Ok(())
    })
}

#[test]
fn interval_at_its_extremes() -> io::Result<()> {
    within(SAFETY, || {
        let msg = panic_message(|| {
            let _ = interval(Duration::ZERO);
        });
        assert!(msg.contains("non-zero"), "{msg}");
        Runtime::new()?.block_on(async {
            for period in [Duration::from_nanos(1), Duration::MAX] {
                for policy in [
                    MissedTickBehavior::Burst,
                    MissedTickBehavior::Delay,
                    MissedTickBehavior::Skip,
                ] {
                    let mut iv = interval(period);
                    iv.set_missed_tick_behavior(policy);
                    iv.tick().await;
                    iv.reset();
                    let _ = poll_once(&mut Box::pin(iv.tick()));
                }
            }
            let far = Instant::now() + Duration::from_secs(86_400 * 365 * 100);
            let mut iv = interval_at(far, Duration::MAX);
            assert!(poll_once(&mut Box::pin(iv.tick())).is_pending());
            // The resets (issue 30): saturating, never a panic.
            iv.reset_after(Duration::MAX);
            assert!(poll_once(&mut Box::pin(iv.tick())).is_pending());
            iv.reset_at(far);
            assert!(poll_once(&mut Box::pin(iv.tick())).is_pending());
            iv.reset_after(Duration::ZERO);
            iv.tick().await;
            iv.reset_immediately();
            iv.tick().await;
            assert!(poll_once(&mut Box::pin(iv.tick())).is_pending());
        });
        Ok(())
    })
}

#[test]
fn advance_at_its_extremes() -> io::Result<()> {
    within(SAFETY, || {
        Builder::new().start_paused(true).build()?.block_on(async {
            let start = Instant::now();
            advance(Duration::ZERO).await;
            advance(Duration::from_nanos(1)).await;
            assert_eq!(start.elapsed(), Duration::from_nanos(1));
            let mut s = sleep(Duration::MAX);
            advance(Duration::MAX).await;
            advance(Duration::MAX).await;
            // Still counting, far past any real deadline, never overflowing.
            assert!(start.elapsed() >= Duration::from_secs(2 * 86_400 * 365 * 30));
            assert!(s.is_elapsed());
            assert!(poll_once(&mut s).is_ready());
            sleep(Duration::from_secs(1)).await;
            let mut iv = interval(Duration::from_nanos(1));
            iv.tick().await;
            advance(Duration::MAX).await;
            iv.tick().await;
            assert!(poll_once(&mut Box::pin(iv.tick())).is_pending());
        });
        Ok(())
    })
}

#[test]
fn stream_reader_limits_at_their_extremes() -> io::Result<()> {
    within(SAFETY, || {
        ioloop::block_on(async {
            let mut reader = StreamReader::new(&b"\nab\nrest"[..]);
            reader.set_max_line_length(0);
            assert_eq!(reader.read_line().await?, Some(&b""[..]));
            let err = reader.read_line().await.expect_err("a line over 0 bytes");
            assert_eq!(err.kind(), io::ErrorKind::InvalidData);
            for max in [1, usize::MAX] {
                let mut reader = StreamReader::new(&b"a\nbc\n"[..]);
                reader.set_max_line_length(max);
                assert_eq!(reader.read_line().await?, Some(&b"a"[..]));
                assert_eq!(reader.read_exact(0).await?, &b""[..]);
                assert_eq!(reader.read_exact(1).await?, &b"b"[..]);
                // More than will ever come: an error at the end, no
                // allocation of the amount asked for.
                let err = reader.read_exact(usize::MAX).await.unwrap_err();
                assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof);
                assert!(reader.capacity() < 1 << 20);
            }
            // fill_more (issue 30) at the line limits' ends: it reads past
            // them, and consume takes more than is buffered as all of it.
            for max in [0, usize::MAX] {
                let mut reader = StreamReader::new(&b"frame"[..]);
                reader.set_max_line_length(max);
                assert_eq!(reader.fill_more().await?, 5);
                assert_eq!(reader.fill_more().await?, 0);
                reader.consume(usize::MAX);
                assert_eq!(reader.buffer(), b"");
            }
            Ok(())
        })
    })
}

#[test]
fn stream_writer_limits_at_their_extremes() -> io::Result<()> {
    within(SAFETY, || {
        ioloop::block_on(async {
            for (high, low) in [
                (0, 0),
                (1, 0),
                (1, 1),
                (usize::MAX, 0),
                (usize::MAX, usize::MAX),
            ] {
                let mut writer = StreamWriter::new(Vec::<u8>::new());
                writer.set_write_buffer_limits(high, low);
                assert_eq!(writer.write_buffer_limits(), (high, low));
                writer.write(b"hello");
                writer.drain().await?;
                writer.flush().await?;
                assert!(writer.buffered() <= high.max(low));
            }
            let msg = panic_message(|| {
                StreamWriter::new(Vec::<u8>::new()).set_write_buffer_limits(0, usize::MAX);
            });
            assert!(msg.contains("low-water"), "{msg}");
            // Owned buffers of 0 and 1 bytes, at both ends of the limits.
            for high in [0, usize::MAX] {
                let mut writer = StreamWriter::new(Vec::<u8>::new());
                writer.set_write_buffer_limits(high, 0);
                writer.write_owned(Vec::new());
                writer.write_owned(vec![b'x']);
                writer.drain().await?;
                writer.flush().await?;
                assert_eq!(
                    (writer.buffered(), writer.get_ref().as_slice()),
                    (0, &b"x"[..])
                );
            }
            // read_buf into a Vec with no capacity and with far more than
            // one read offers: what it reads is appended, nothing else.
            for capacity in [0, 64 << 20] {
                let mut buf = Vec::with_capacity(capacity);
                assert_eq!(ioloop::io::read_buf(&b"abc"[..], &mut buf).await?, 3);
                assert_eq!(ioloop::io::read_buf(&b""[..], &mut buf).await?, 0);
                assert_eq!(buf, b"abc");
            }
            Ok(())
        })
    })
}

/// A connected pair on loopback.
async fn pair() -> io::Result<(TcpStream, TcpStream)> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let client = TcpStream::connect(listener.local_addr()?).await?;
    let (server, _) = listener.accept().await?;
    Ok((client, server))
}

/// Issue 28, item 9: `SO_LINGER` counts whole seconds in a C `int`, and
/// socket2 passes `as_secs() as c_int`: a linger of half a second became 0,
/// which turns every close into a reset, and one of 2^32 s wrapped to 0 as
/// well. A fraction of a second is rounded up, and past `i32::MAX` seconds
/// it saturates; only zero means an abortive close.
#[test]
fn set_linger_rounds_a_fraction_up_and_saturates_instead_of_wrapping_to_zero() -> io::Result<()> {
    within(SAFETY, || {
        ioloop::block_on(async {
            let (client, _server) = pair().await?;
            let socket = TcpSocket::new_v4()?;
            let cases = [
                (Some(Duration::ZERO), Some(Duration::ZERO)),
                (Some(Duration::from_nanos(1)), Some(Duration::from_secs(1))),
                (
                    Some(Duration::from_millis(500)),
                    Some(Duration::from_secs(1)),
                ),
                (
                    Some(Duration::from_millis(1500)),
                    Some(Duration::from_secs(2)),
                ),
                (Some(Duration::from_secs(7)), Some(Duration::from_secs(7))),
                (
                    Some(Duration::from_secs(1 << 32)),
                    Some(Duration::from_secs(i32::MAX as u64)),
                ),
                (
                    Some(Duration::MAX),
                    Some(Duration::from_secs(i32::MAX as u64)),
                ),
                (None, None),
            ];
            for (set, got) in cases {
                client.set_linger(set)?;
                assert_eq!(client.linger()?, got, "TcpStream::set_linger({set:?})");
                socket.set_linger(set)?;
                assert_eq!(socket.linger()?, got, "TcpSocket::set_linger({set:?})");
            }
            Ok(())
        })
    })
}

/// Issue 28, item 9: `IP_TTL` takes an `int`, and Linux reads -1 as "the
/// default": `set_ttl(u32::MAX)` (which socket2 passes as -1) succeeded and
/// quietly set the default, where the docs promise `InvalidInput` outside
/// `1..=255`.
#[test]
fn set_ttl_refuses_u32_max_instead_of_setting_the_default() -> io::Result<()> {
    within(SAFETY, || {
        ioloop::block_on(async {
            let (client, _server) = pair().await?;
            let listener = TcpListener::bind("127.0.0.1:0").await?;
            let udp = UdpSocket::bind("127.0.0.1:0").await?;
            for ttl in [0, 256, 1 << 31, u32::MAX] {
                let err = client.set_ttl(ttl).expect_err("TcpStream ttl out of range");
                assert_eq!(err.kind(), io::ErrorKind::InvalidInput, "{ttl}");
                let err = listener
                    .set_ttl(ttl)
                    .expect_err("TcpListener ttl out of range");
                assert_eq!(err.kind(), io::ErrorKind::InvalidInput, "{ttl}");
                let err = udp.set_ttl(ttl).expect_err("UdpSocket ttl out of range");
                assert_eq!(err.kind(), io::ErrorKind::InvalidInput, "{ttl}");
            }
            // The one-byte options: 0..=255.
            for value in [256, 1 << 31, u32::MAX] {
                for err in [
                    client.set_tos(value),
                    udp.set_tos(value),
                    udp.set_multicast_ttl_v4(value),
                    client.set_tclass_v6(value),
                    udp.set_tclass_v6(value),
                ] {
                    let err = err.expect_err("a one-byte option out of range");
                    assert_eq!(err.kind(), io::ErrorKind::InvalidInput, "{value}");
                }
            }
            udp.set_multicast_ttl_v4(0)?;
            assert_eq!(udp.multicast_ttl_v4()?, 0);
            udp.set_multicast_ttl_v4(255)?;
            assert_eq!(udp.multicast_ttl_v4()?, 255);
            for ttl in [1, 255] {
                client.set_ttl(ttl)?;
                assert_eq!(client.ttl()?, ttl);
                listener.set_ttl(ttl)?;
                assert_eq!(listener.ttl()?, ttl);
                udp.set_ttl(ttl)?;
                assert_eq!(udp.ttl()?, ttl);
            }
            Ok(())
        })
    })
}

/// Sizes the OS takes as `int`s: any `u32` is either taken (the kernel caps
/// buffer sizes at its maximum) or refused with an error; never a panic.
#[test]
fn socket_sizes_at_their_extremes() -> io::Result<()> {
    within(SAFETY, || {
        ioloop::block_on(async {
            let (client, _server) = pair().await?;
            let udp = UdpSocket::bind("127.0.0.1:0").await?;
            for size in [0, 1, 1 << 31, u32::MAX] {
                let _ = client.set_send_buffer_size(size);
                let _ = client.set_recv_buffer_size(size);
                let _ = udp.set_send_buffer_size(size);
                let _ = udp.set_recv_buffer_size(size);
                assert!(client.send_buffer_size()? > 0);
                assert!(udp.recv_buffer_size()? > 0);
            }
            for backlog in [0, 1, 1 << 31, u32::MAX] {
                let socket = TcpSocket::new_v4()?;
                socket.bind("127.0.0.1:0".parse().unwrap())?;
                let listener = socket.listen(backlog)?;
                let addr = listener.local_addr()?;
                let client = TcpStream::connect(addr).await?;
                let (_server, _) = listener.accept().await?;
                drop(client);
            }
            Ok(())
        })
    })
}

/// The callback server's limits at their extremes: an idle timeout of zero
/// closes at once, one of `MAX` never, and no size overflows.
#[test]
fn callback_config_at_its_extremes() -> io::Result<()> {
    use ioloop::callbacks::{Config, Connection, Disconnect, Handler, serve_connection};
    struct Echo(std::sync::mpsc::Sender<String>);
    impl Handler for Echo {
        fn on_data(&mut self, conn: &mut Connection) {
            let data = conn.inbuf().to_vec();
            conn.consume(data.len());
            conn.queue_send(&data);
        }
        fn on_disconnect(&mut self, _conn: &Connection, reason: Disconnect) {
            let _ = self.0.send(format!("{reason:?}"));
        }
    }
    within(SAFETY, || {
        ioloop::block_on(async {
            for config in [
                Config {
                    max_inbuf: usize::MAX,
                    idle_timeout: Some(Duration::MAX),
                    write_high_water: usize::MAX,
                },
                Config {
                    max_inbuf: 0,
                    idle_timeout: None,
                    write_high_water: 0,
                },
                Config {
                    max_inbuf: 1,
                    idle_timeout: Some(Duration::ZERO),
                    write_high_water: 1,
                },
            ] {
                let (client, server) = pair().await?;
                let (tx, rx) = std::sync::mpsc::channel();
                let conn = ioloop::spawn(serve_connection(server, config, Echo(tx)));
                let mut writer = StreamWriter::new(&client);
                writer.write(b"x\n");
                let _ = writer.drain().await;
                let mut reader = StreamReader::new(&client);
                let _ = timeout(Duration::from_millis(50), reader.read_line()).await;
                drop(reader);
                drop(writer);
                drop(client);
                timeout(SAFETY, conn).await?.unwrap();
                let reason = rx.try_recv().expect("on_disconnect was called");
                if config.idle_timeout == Some(Duration::ZERO) {
                    assert_eq!(reason, "Idle");
                }
            }
            Ok(())
        })
    })
}

/// `callbacks::serve`, the layer's entry with its default limits: a task
/// per accepted connection, each with a handler of its own from the
/// factory, three at once (the fast set's only run of it: the servers
/// binary's `callbacks_layer` tests it at length).
#[test]
fn callback_serve_runs_a_handler_of_its_own_for_each_connection() -> io::Result<()> {
    use ioloop::callbacks::{Connection, Handler, serve};
    struct Numbered(usize);
    impl Handler for Numbered {
        fn on_connect(&mut self, conn: &mut Connection) {
            conn.queue_send(format!("{}\n", self.0).as_bytes());
        }
        fn on_data(&mut self, conn: &mut Connection) {
            let data = conn.inbuf().to_vec();
            conn.consume(data.len());
            conn.queue_send(&data);
        }
    }
    within(SAFETY, || {
        ioloop::block_on(async {
            let listener = TcpListener::bind("127.0.0.1:0").await?;
            let addr = listener.local_addr()?;
            let mut made = 0;
            let server = ioloop::spawn(serve(listener, move || {
                made += 1;
                Numbered(made)
            }));
            let mut clients = Vec::new();
            for _ in 0..3 {
                clients.push(TcpStream::connect(addr).await?);
            }
            let mut numbers = Vec::new();
            for client in &clients {
                let mut reader = StreamReader::new(client);
                let number = timeout(SAFETY, reader.read_line()).await??;
                numbers.push(number.expect("greeted").to_vec());
                let mut writer = StreamWriter::new(client);
                writer.write(b"ping\n");
                writer.drain().await?;
                let echoed = timeout(SAFETY, reader.read_line()).await??;
                assert_eq!(echoed, Some(&b"ping"[..]));
            }
            numbers.sort();
            assert_eq!(numbers, [b"1".to_vec(), b"2".to_vec(), b"3".to_vec()]);
            assert!(!server.is_finished(), "serve returned while listening");
            server.abort();
            Ok(())
        })
    })
}
