//! Every limit of `kv_server` at limit − 1, limit and limit + 1: the
//! argument count, the bulk length, the line length, the connection
//! limit, a subscriber's output bound, and the ranges of `SET`'s numbers
//! (those that move with the clock, at a fixed clock). Redis 7's texts.

use std::io::{self, Write};
use std::net::Shutdown;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use testkit::kv_pubsub::{Mailbox, OutputLimit, PUBSUB_LIMIT, message_len};
use testkit::kv_run::{Reply, Server, err, subscribed};
use testkit::kv_store::{INVALID_EXPIRE, NOT_AN_INTEGER, set_options};
use testkit::resp::{self, MAX_ARGS, MAX_BULK, MAX_LINE, Parsed};
use testkit::util::{CountingWaker, within};

fn protocol_error(what: &str) -> Reply {
    err(&format!("ERR Protocol error: {what}"))
}

/// `DEL` with `n` arguments in all, one-byte keys: `:0` up to the limit,
/// refused past it, the connection closed.
#[test]
fn kv_argument_count_at_its_limit() -> io::Result<()> {
    within(Duration::from_secs(300), || {
        let server = Server::start(250);
        for (n, fits) in [
            (MAX_ARGS - 1, true),
            (MAX_ARGS, true),
            (MAX_ARGS + 1, false),
        ] {
            let mut c = server.client()?;
            let mut wire = format!("*{n}\r\n$3\r\nDEL\r\n").into_bytes();
            // Refused at its header: the rest would meet a closed socket.
            for _ in 1..if fits { n } else { 1 } {
                wire.extend_from_slice(b"$1\r\nk\r\n");
            }
            c.writer.write_all(&wire)?;
            if fits {
                assert_eq!(c.reply()?, Reply::Int(0), "{n} arguments");
                assert_eq!(c.call(&["PING"])?, Reply::Simple("PONG".into()));
            } else {
                assert_eq!(c.reply()?, protocol_error("invalid multibulk length"));
                assert!(c.closed(), "{n} arguments");
            }
        }
        io::Result::Ok(())
    })
}

/// A bulk length up to 512 MiB is taken (the server waits for the bytes;
/// a client that then closes gets no error, only the end), past it is
/// refused. Nothing is allocated for a length before its bytes come.
#[test]
fn kv_bulk_length_at_its_limit() -> io::Result<()> {
    let server = Server::start(250);
    for (len, fits) in [
        (MAX_BULK - 1, true),
        (MAX_BULK, true),
        (MAX_BULK + 1, false),
    ] {
        let header = format!("*1\r\n${len}\r\n");
        let parsed = resp::Parser::new().parse(header.as_bytes());
        let mut c = server.client()?;
        c.writer.write_all(header.as_bytes())?;
        if fits {
            assert_eq!(parsed, Parsed::Incomplete, "${len}");
            c.writer.shutdown(Shutdown::Write)?;
            assert!(c.closed(), "${len}: an end with no reply");
        } else {
            assert_eq!(parsed, Parsed::Invalid("invalid bulk length".into()));
            assert_eq!(c.reply()?, protocol_error("invalid bulk length"));
            assert!(c.closed());
        }
    }
    Ok(())
}

/// An inline line, or a header, may take `MAX_LINE` bytes before its end
/// comes; one more with no end is refused (Redis's three texts).
#[test]
fn kv_line_length_at_its_limit() -> io::Result<()> {
    let server = Server::start(250);
    for len in [MAX_LINE - 1, MAX_LINE] {
        let mut c = server.client()?;
        let mut line = vec![b'x'; len];
        line.extend_from_slice(b"\r\n");
        c.writer.write_all(&line)?;
        let name = "x".repeat(128);
        let want = format!("ERR unknown command '{name}', with args beginning with: ");
        assert_eq!(c.reply()?, err(&want), "an inline line of {len}");
        // A header of that length whose end came is judged as a number.
        let mut header = vec![b'1'; len];
        header[0] = b'*';
        header.extend_from_slice(b"\r\n");
        c.writer.write_all(&header)?;
        assert_eq!(c.reply()?, protocol_error("invalid multibulk length"));
        assert!(c.closed());
    }
    // Short of its end, a line of `MAX_LINE` bytes is still awaited...
    let mut header = b"*".to_vec();
    header.resize(MAX_LINE, b'1');
    assert_eq!(resp::Parser::new().parse(&header), Parsed::Incomplete);
    assert_eq!(
        resp::Parser::new().parse(&vec![b'x'; MAX_LINE]),
        Parsed::Incomplete
    );
    // ...and one more byte is refused.
    let mut too_long: Vec<(Vec<u8>, &str)> =
        vec![(vec![b'x'; MAX_LINE + 1], "too big inline request")];
    for (start, what) in [
        (&b"*"[..], "too big mbulk count string"),
        (b"*1\r\n$", "too big bulk count string"),
    ] {
        let mut line = start.to_vec();
        line.extend(std::iter::repeat_n(b'1', MAX_LINE));
        too_long.push((line, what));
    }
    for (line, what) in too_long {
        let mut c = server.client()?;
        c.writer.write_all(&line)?;
        assert_eq!(c.reply()?, protocol_error(what));
        assert!(c.closed());
    }
    Ok(())
}

/// With a limit of 3: two clients are served (limit − 1), a third too
/// (the limit), a fourth waits, connected, until one leaves (limit + 1).
#[test]
fn kv_connection_limit_at_its_limit() -> io::Result<()> {
    let server = Server::start(3);
    let mut served = Vec::new();
    for _ in 0..3 {
        let mut c = server.client()?;
        assert_eq!(c.call(&["PING"])?, Reply::Simple("PONG".into()));
        served.push(c);
    }
    let mut fourth = server.client()?;
    fourth.send(&[b"PING"])?;
    // Not served while three are: no reply in a while (a reply would only
    // come early if the limit were broken, so the wait cannot flake).
    fourth
        .writer
        .set_read_timeout(Some(Duration::from_millis(200)))?;
    let waited = fourth.reader.get_ref().peek(&mut [0]);
    assert!(
        matches!(&waited, Err(e) if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut)),
        "{waited:?}"
    );
    fourth
        .writer
        .set_read_timeout(Some(testkit::kv_run::SAFETY))?;
    drop(served.pop());
    assert_eq!(fourth.reply()?, Reply::Simple("PONG".into()));
    Ok(())
}

/// Polls `mailbox` once with `waker`; the bytes taken, or the error.
fn take(mailbox: &Mailbox, waker: &Waker) -> Poll<io::Result<usize>> {
    mailbox.poll_take(&mut Context::from_waker(waker), &mut Vec::new())
}

/// The hard bound: a subscriber whose waiting bytes reach 32 MiB is
/// dropped, one byte short is kept; what a message weighs is its bytes on
/// the wire, and bytes the socket took no longer count.
#[test]
fn kv_a_subscribers_hard_bound_at_its_limit() {
    let channel: Arc<[u8]> = (*b"news").into();
    let now = Instant::now();
    // One message that fills the bound to `limit + extra` bytes.
    // The payload's length has 8 digits where an empty one's has 1.
    let overhead = message_len(channel.len(), 0) + 7;
    for extra in [-1isize, 0, 1] {
        let total = (PUBSUB_LIMIT.hard as isize + extra) as usize;
        let payload = Arc::new(vec![b'm'; total - overhead]);
        assert_eq!(message_len(channel.len(), payload.len()), total);
        let mailbox = Mailbox::new(PUBSUB_LIMIT);
        let mut wake = Vec::new();
        let kept = mailbox.push(&channel, &payload, now, &mut wake);
        assert_eq!(kept, extra < 0, "{total} bytes waiting");
        let waker = Waker::noop();
        match take(&mailbox, waker) {
            Poll::Ready(Ok(bytes)) => assert_eq!(bytes, total),
            Poll::Ready(Err(e)) => assert!(e.to_string().contains("hard limit"), "{e}"),
            Poll::Pending => panic!("nothing to take"),
        }
    }
    // Taken and delivered, bytes stop counting: the same 32 MiB − 1 twice.
    let mailbox = Mailbox::new(PUBSUB_LIMIT);
    let payload = Arc::new(vec![b'm'; PUBSUB_LIMIT.hard - 1 - overhead]);
    let mut wake = Vec::new();
    assert!(mailbox.push(&channel, &payload, now, &mut wake));
    let Poll::Ready(Ok(bytes)) = take(&mailbox, Waker::noop()) else {
        panic!("a message waits");
    };
    // Taken but not yet delivered: still waiting, so one more drops it...
    let two = Mailbox::new(PUBSUB_LIMIT);
    assert!(two.push(&channel, &payload, now, &mut wake));
    assert!(matches!(take(&two, Waker::noop()), Poll::Ready(Ok(_))));
    assert!(!two.push(&channel, &payload, now, &mut wake));
    // ...delivered, it does not.
    mailbox.delivered(bytes);
    assert!(mailbox.push(&channel, &payload, now, &mut wake));
}

/// The soft bound: 8 MiB or more waiting for 60 s is kept, for 60 s and a
/// nanosecond is dropped; dipping under 8 MiB starts the count again
/// (a fixed clock: the instants are made, not waited for).
#[test]
fn kv_a_subscribers_soft_bound_at_its_limit() {
    let limit = PUBSUB_LIMIT;
    let t0 = Instant::now();
    let mut since = None;
    assert_eq!(limit.check(limit.soft - 1, &mut since, t0), Ok(()));
    assert_eq!(since, None);
    assert_eq!(limit.check(limit.soft, &mut since, t0), Ok(()));
    assert_eq!(since, Some(t0));
    let at = t0 + limit.soft_for;
    assert_eq!(limit.check(limit.soft + 1, &mut since, at), Ok(()));
    let past = at + Duration::from_nanos(1);
    assert_eq!(limit.check(limit.soft, &mut since, past), Err("soft limit"));
    // Under the soft limit once: the count starts again.
    let mut since = Some(t0);
    assert_eq!(limit.check(limit.soft - 1, &mut since, past), Ok(()));
    assert_eq!(since, None);
    assert_eq!(limit.check(limit.soft, &mut since, past), Ok(()));
    assert_eq!(since, Some(past));
    // The hard limit is at its byte whatever the soft one says.
    let mut since = None;
    assert_eq!(limit.check(limit.hard - 1, &mut since, t0), Ok(()));
    assert_eq!(limit.check(limit.hard, &mut None, t0), Err("hard limit"));
    assert_eq!(
        limit.check(limit.hard + 1, &mut None, t0),
        Err("hard limit")
    );
    // A mailbox under a small limit: the soft limit reached through pushes.
    let small = OutputLimit {
        hard: 1 << 20,
        soft: 100,
        soft_for: Duration::from_secs(60),
    };
    let mailbox = Mailbox::new(small);
    let (channel, payload): (Arc<[u8]>, _) = ((*b"c").into(), Arc::new(vec![b'm'; 100]));
    let mut wake = Vec::new();
    assert!(mailbox.push(&channel, &payload, t0, &mut wake));
    assert!(mailbox.push(&channel, &payload, t0 + small.soft_for, &mut wake));
    assert!(!mailbox.push(&channel, &payload, past, &mut wake));
}

/// The mailbox is shared by a publisher and its subscriber: a waiting
/// subscriber is woken once by a push, and by the push that drops it;
/// `delivered` and pushes while it waits leave its waker in place.
#[test]
fn kv_a_mailbox_wakes_its_waiting_subscriber() {
    let small = OutputLimit {
        hard: 200,
        soft: 200,
        soft_for: Duration::ZERO,
    };
    let mailbox = Mailbox::new(small);
    let counter = Arc::new(CountingWaker::default());
    let waker = Waker::from(counter.clone());
    let (channel, payload): (Arc<[u8]>, _) = ((*b"c").into(), Arc::new(vec![b'm'; 10]));
    assert!(take(&mailbox, &waker).is_pending());
    mailbox.delivered(0);
    let mut wake = Vec::new();
    assert!(mailbox.push(&channel, &payload, Instant::now(), &mut wake));
    assert!(mailbox.push(&channel, &payload, Instant::now(), &mut wake));
    assert_eq!(wake.len(), 1, "one waker, taken once");
    wake.drain(..).for_each(Waker::wake);
    assert_eq!(counter.wakes.load(std::sync::atomic::Ordering::SeqCst), 1);
    let mut out = Vec::new();
    let taken = mailbox.poll_take(&mut Context::from_waker(&waker), &mut out);
    assert!(matches!(taken, Poll::Ready(Ok(n)) if n == out.len() && n == 2 * message_len(1, 10)));
    assert!(take(&mailbox, &waker).is_pending());
    let big = Arc::new(vec![b'm'; 300]);
    assert!(!mailbox.push(&channel, &big, Instant::now(), &mut wake));
    assert_eq!(wake.len(), 1, "the drop wakes the subscriber");
    wake.drain(..).for_each(Waker::wake);
    assert!(matches!(take(&mailbox, &waker), Poll::Ready(Err(_))));
    assert!(!mailbox.push(&channel, &payload, Instant::now(), &mut wake));
}

/// `SET`'s numbers at the bounds that move with the clock, at a fixed
/// clock: `EX` up to `(i64::MAX - now) / 1000`, `PX` up to
/// `i64::MAX - now`; and a 64-bit integer's own bounds.
#[test]
fn kv_set_expiry_ranges_at_their_limits() {
    let now_ms: i64 = 1_796_000_000_123;
    let set = |words: &str| {
        let words: Vec<Vec<u8>> = words.split(' ').map(|w| w.as_bytes().to_vec()).collect();
        set_options(&words, now_ms).map(|o| o.deadline)
    };
    let ex = (i64::MAX - now_ms) / 1000;
    assert_eq!(
        set(&format!("EX {}", ex - 1)),
        Ok(Some((ex - 1) * 1000 + now_ms))
    );
    assert_eq!(set(&format!("EX {ex}")), Ok(Some(ex * 1000 + now_ms)));
    assert_eq!(set(&format!("EX {}", ex + 1)), Err(INVALID_EXPIRE));
    let px = i64::MAX - now_ms;
    assert_eq!(set(&format!("PX {}", px - 1)), Ok(Some(i64::MAX - 1)));
    assert_eq!(set(&format!("PX {px}")), Ok(Some(i64::MAX)));
    assert_eq!(set(&format!("PX {}", px + 1)), Err(INVALID_EXPIRE));
    assert_eq!(set("PX 1"), Ok(Some(now_ms + 1)));
    assert_eq!(set("PX 0"), Err(INVALID_EXPIRE));
    assert_eq!(set("EXAT 1"), Ok(Some(1000)));
    for (text, n) in [
        ("9223372036854775807", Some(i64::MAX)),
        ("9223372036854775806", Some(i64::MAX - 1)),
        ("9223372036854775808", None),
        ("-9223372036854775808", Some(i64::MIN)),
        ("-9223372036854775807", Some(i64::MIN + 1)),
        ("-9223372036854775809", None),
        ("0", Some(0)),
        ("-0", None),
        ("", None),
        ("-", None),
        ("1 ", None),
    ] {
        assert_eq!(resp::parse_integer(text.as_bytes()), n, "{text:?}");
    }
    assert_eq!(set("PX x"), Err(NOT_AN_INTEGER));
}

/// A client's bytes quoted in an error cannot end its line: a CR or LF
/// goes out as a space (Redis's `addReplyErrorFormat`), and the quote
/// stops past 128 bytes, as Redis's does.
#[test]
fn kv_an_error_quoting_a_clients_bytes_stays_one_line() -> io::Result<()> {
    let server = Server::start(250);
    let mut c = server.client()?;
    c.send(&[b"NOSUCH\r\n+OK", b"a\rb", b"c\nd"])?;
    assert_eq!(
        c.reply()?,
        err("ERR unknown command 'NOSUCH  +OK', with args beginning with: 'a b' 'c d' ")
    );
    let ten = "abcdefghij";
    let args: Vec<&str> = std::iter::once("NOSUCH").chain([ten; 30]).collect();
    let quoted = format!("'{ten}' ").repeat(10);
    let want = format!("ERR unknown command 'NOSUCH', with args beginning with: {quoted}");
    assert_eq!(c.call(&args)?, err(&want));
    assert_eq!(c.call(&["SUBSCRIBE", "a"])?, subscribed("a", 1));
    // In the pub/sub context: the name and the count are checked first.
    assert_eq!(
        c.call(&["NOSUCH", "x"])?,
        err("ERR unknown command 'NOSUCH', with args beginning with: 'x' ")
    );
    assert_eq!(
        c.call(&["GET"])?,
        err("ERR wrong number of arguments for 'get' command")
    );
    assert_eq!(
        c.call(&["DBSIZE", "x"])?,
        err("ERR wrong number of arguments for 'dbsize' command")
    );
    Ok(())
}

/// More than a batch (64 KiB) waiting: taken in several batches, every
/// message once, in order, and their bytes counted exactly.
#[test]
fn kv_a_mailbox_gives_what_waits_in_batches_in_order() {
    let mailbox = Mailbox::new(PUBSUB_LIMIT);
    let channel: Arc<[u8]> = (*b"c").into();
    let (mut want, mut wake) = (Vec::new(), Vec::new());
    for i in 0..3000 {
        let payload = Arc::new(format!("{i:0>100}").into_bytes());
        testkit::kv_pubsub::message(&mut want, &channel, &payload);
        assert!(mailbox.push(&channel, &payload, Instant::now(), &mut wake));
    }
    let (mut got, mut batches, mut total) = (Vec::new(), 0, 0);
    while let Poll::Ready(taken) =
        mailbox.poll_take(&mut Context::from_waker(Waker::noop()), &mut got)
    {
        total += taken.expect("under the bound");
        batches += 1;
    }
    assert!(batches > 1, "{batches} batches");
    assert_eq!(total, want.len());
    assert!(got == want, "the messages out of order or lost");
}

/// A `Subscriber` dropped (a connection's task dropped mid-await) leaves
/// every channel it heard: a PUBLISH after it reaches nobody.
#[test]
fn kv_a_dropped_subscriber_leaves_its_channels() {
    use testkit::kv_pubsub::Subscriber;
    use testkit::kv_store::{Progress, Store};
    let store = Store::default();
    let mut subscriber = Subscriber::new(&store);
    let mut args = vec![b"SUBSCRIBE".to_vec(), b"a".to_vec(), b"b".to_vec()];
    let mut out = Vec::new();
    assert!(subscriber.command(&mut args, &mut out, &mut Progress::default()));
    let publish = |out: &mut Vec<u8>| {
        out.clear();
        let mut args = vec![b"PUBLISH".to_vec(), b"b".to_vec(), b"x".to_vec()];
        store.execute(&mut args, out, false, &mut Progress::default());
    };
    publish(&mut out);
    assert_eq!(out, b":1\r\n");
    drop(subscriber);
    publish(&mut out);
    assert_eq!(out, b":0\r\n");
}
