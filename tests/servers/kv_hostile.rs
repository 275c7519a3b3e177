//! `kv_server` against hostile clients, beside what Redis 7 answers (the
//! expected replies below are redis-server 7.0.15's, read with redis-cli
//! and raw RESP): numbers out of range, a subscriber that reads nothing,
//! a publisher faster than its subscriber. What a client's state costs the
//! server's heap is in tests/churn/kv.rs.

use std::io::{self, Read, Write};
use std::time::Duration;

use testkit::kv_run::{Reply, Server, bulk, cli, encode, err, message, ok, redis_cli, subscribed};
use testkit::kv_store::SLICE;
use testkit::util::within;

const NOT_AN_INTEGER: &str = "ERR value is not an integer or out of range";
const INVALID_EXPIRE: &str = "ERR invalid expire time in 'set' command";
const SYNTAX: &str = "ERR syntax error";

/// `SET k v` with each option list, and Redis 7's answer to it. The
/// bounds that do not move with the clock: `EXAT` up to `i64::MAX / 1000`,
/// `PXAT` up to `i64::MAX` (each at − 1, at, + 1), `EX` past
/// `i64::MAX / 1000` (its multiplication would overflow) and `EX`/`PX`
/// whose deadline `now + amount` would (tests/servers/kv_store.rs has the
/// edges that move with the clock, at a fixed `now`).
const SET_OPTIONS: &[(&str, &str)] = &[
    ("EX 18446744073709551615", NOT_AN_INTEGER),
    ("PX 9223372036854775807", INVALID_EXPIRE),
    ("PX 9223372036854775808", NOT_AN_INTEGER),
    ("EX 9223372036854775", INVALID_EXPIRE),
    ("EX 9223372036854776", INVALID_EXPIRE),
    ("EX 0", INVALID_EXPIRE),
    ("EX -1", INVALID_EXPIRE),
    ("PX -9223372036854775808", INVALID_EXPIRE),
    ("PX -9223372036854775809", NOT_AN_INTEGER),
    ("PX -0", NOT_AN_INTEGER),
    ("EX 01", NOT_AN_INTEGER),
    ("EX +5", NOT_AN_INTEGER),
    ("EX 1.5", NOT_AN_INTEGER),
    ("EX abc", NOT_AN_INTEGER),
    ("EX 123456789012345678901", NOT_AN_INTEGER),
    ("EX", SYNTAX),
    ("EX abc FOO", SYNTAX),
    ("EX 10 PX 20", SYNTAX),
    ("EX 10 KEEPTTL", SYNTAX),
    ("NX XX", SYNTAX),
    ("FOO", SYNTAX),
    ("EX 10 EX abc", NOT_AN_INTEGER),
    ("EXAT 0", INVALID_EXPIRE),
    ("EXAT 9223372036854774", "OK"),
    ("EXAT 9223372036854775", "OK"),
    ("EXAT 9223372036854776", INVALID_EXPIRE),
    ("PXAT 9223372036854775806", "OK"),
    ("PXAT 9223372036854775807", "OK"),
    ("PXAT 9223372036854775808", NOT_AN_INTEGER),
    ("EX 10 EX 20", "OK"),
    ("ex 10", "OK"),
    ("PX 1000000", "OK"),
    ("KEEPTTL", "OK"),
];

fn expected(answer: &str) -> Reply {
    match answer {
        "OK" => ok(),
        error => err(error),
    }
}

/// Bug 10: `SET k v EX 18446744073709551615` panicked the connection
/// (`Instant + Duration` overflowed), so it got no reply and a PING
/// pipelined behind it was lost; `PX 9223372036854775807` was accepted.
/// Every option list is answered as Redis answers it, each followed by
/// a PING in the same write, and the connection goes on.
#[test]
fn kv_set_expiry_out_of_range_is_answered_as_redis_does_and_the_connection_goes_on()
-> io::Result<()> {
    let server = Server::start(250);
    let mut c = server.client()?;
    let mut batch = Vec::new();
    for (options, _) in SET_OPTIONS {
        let mut args: Vec<&[u8]> = vec![b"SET", b"k", b"v"];
        args.extend(options.split(' ').map(str::as_bytes));
        batch.extend(encode(&args));
        batch.extend(encode(&[b"PING"]));
    }
    c.writer.write_all(&batch)?;
    for (options, answer) in SET_OPTIONS {
        assert_eq!(c.reply()?, expected(answer), "SET k v {options}");
        assert_eq!(c.reply()?, Reply::Simple("PONG".into()), "after {options}");
    }
    Ok(())
}

/// The same through redis-cli.
#[test]
fn kv_set_expiry_out_of_range_through_redis_cli() -> io::Result<()> {
    if redis_cli().is_none() {
        return Ok(());
    }
    let server = Server::start(250);
    for (options, answer) in SET_OPTIONS {
        let mut args = vec!["SET", "k", "v"];
        args.extend(options.split(' '));
        assert_eq!(cli(server.addr, &args)?, *answer, "SET k v {options}");
    }
    Ok(())
}

/// What the options do: a deadline in the past leaves no key, `KEEPTTL`
/// keeps the deadline, `NX` / `XX` set only a missing / present key and
/// answer nil otherwise, `GET` answers the old value instead of `OK`.
#[test]
fn kv_set_options_do_what_redis_does() -> io::Result<()> {
    let server = Server::start(250);
    let mut c = server.client()?;
    assert_eq!(c.call(&["SET", "k", "v", "EXAT", "1"])?, ok());
    assert_eq!(c.call(&["GET", "k"])?, Reply::Bulk(None));
    assert_eq!(c.call(&["SET", "k", "v", "PXAT", "1"])?, ok());
    assert_eq!(c.call(&["GET", "k"])?, Reply::Bulk(None));
    assert_eq!(
        c.call(&["SET", "k", "v", "PXAT", "9223372036854775807"])?,
        ok()
    );
    assert_eq!(c.call(&["GET", "k"])?, bulk("v"));
    // A deadline 1 ms away, kept by KEEPTTL, dropped by a plain SET.
    assert_eq!(c.call(&["SET", "short", "a", "PX", "1"])?, ok());
    assert_eq!(c.call(&["SET", "short", "b", "KEEPTTL"])?, ok());
    assert_eq!(c.call(&["SET", "long", "a", "PX", "1"])?, ok());
    assert_eq!(c.call(&["SET", "long", "b"])?, ok());
    std::thread::sleep(Duration::from_millis(5));
    assert_eq!(c.call(&["GET", "short"])?, Reply::Bulk(None));
    assert_eq!(c.call(&["GET", "long"])?, bulk("b"));
    assert_eq!(c.call(&["SET", "n", "1", "XX"])?, Reply::Bulk(None));
    assert_eq!(c.call(&["GET", "n"])?, Reply::Bulk(None));
    assert_eq!(c.call(&["SET", "n", "1", "NX"])?, ok());
    assert_eq!(c.call(&["SET", "n", "2", "nx"])?, Reply::Bulk(None));
    assert_eq!(c.call(&["SET", "n", "3", "XX"])?, ok());
    assert_eq!(c.call(&["SET", "n", "4", "GET"])?, bulk("3"));
    assert_eq!(c.call(&["SET", "n", "5", "NX", "GET"])?, bulk("4"));
    assert_eq!(c.call(&["GET", "n"])?, bulk("4"));
    assert_eq!(c.call(&["SET", "m", "1", "GET"])?, Reply::Bulk(None));
    assert_eq!(c.call(&["GET", "m"])?, bulk("1"));
    Ok(())
}

/// Bug 13: a client that pipelined 2,000 PUBLISH to a channel another
/// client subscribes to got the subscriber disconnected (its broadcast
/// channel held 1,024 messages). Bounded by bytes, as Redis bounds it, the
/// 2,000 small messages all arrive, in order.
#[test]
fn kv_a_subscriber_gets_2000_messages_a_publisher_pipelined_at_once() -> io::Result<()> {
    let server = Server::start(250);
    let (mut sub, mut publisher) = (server.client()?, server.client()?);
    assert_eq!(sub.call(&["SUBSCRIBE", "news"])?, subscribed("news", 1));
    let mut batch = Vec::new();
    for i in 0..2000 {
        batch.extend(encode(&[b"PUBLISH", b"news", format!("m{i}").as_bytes()]));
    }
    publisher.writer.write_all(&batch)?;
    for i in 0..2000 {
        assert_eq!(publisher.reply()?, Reply::Int(1), "PUBLISH {i}");
    }
    for i in 0..2000 {
        assert_eq!(
            sub.reply()?,
            message("news", &format!("m{i}")),
            "message {i}"
        );
    }
    assert_eq!(
        sub.call(&["PING"])?,
        Reply::Array(vec![bulk("pong"), bulk("")])
    );
    Ok(())
}

/// A subscriber that reads nothing is disconnected once 32 MiB wait for
/// it (Redis's `client-output-buffer-limit pubsub 32mb`): a publisher of
/// 1 MiB messages sees it counted, then gone before 64 MiB went out (the
/// kernel's buffers take a few MiB that never wait in the server), and
/// the subscriber reads what its socket held, then the end.
#[test]
fn kv_a_subscriber_that_reads_nothing_is_dropped_once_32_mib_wait_for_it() -> io::Result<()> {
    within(Duration::from_secs(120), || {
        let server = Server::start(250);
        let (mut sub, mut publisher) = (server.client()?, server.client()?);
        assert_eq!(sub.call(&["SUBSCRIBE", "news"])?, subscribed("news", 1));
        let message = vec![b'm'; 1 << 20];
        let mut published = 0;
        while publisher.send(&[b"PUBLISH", b"news", &message]).is_ok()
            && publisher.reply()? == Reply::Int(1)
        {
            published += 1;
            assert!(published < 64, "still subscribed after {published} MiB");
        }
        assert!(published >= 32, "dropped after only {published} MiB");
        assert_eq!(publisher.call(&["PUBLISH", "news", "x"])?, Reply::Int(0));
        let mut got = Vec::new();
        let ended = sub.reader.read_to_end(&mut got);
        assert!(
            ended.is_ok() || ended.is_err_and(|e| e.kind() == io::ErrorKind::ConnectionReset),
            "the subscriber's connection ends"
        );
        eprintln!(
            "published {published} MiB; the subscriber read {} KiB before the end",
            got.len() >> 10
        );
        io::Result::Ok(())
    })
}

/// Message `i` of 1 MiB: its number, padded with zeros.
fn big(i: usize) -> String {
    let mut text = format!("{i:08}");
    text.push_str(&"0".repeat((1 << 20) - text.len()));
    text
}

/// A subscriber that reads while 40 MiB go to it, more than the bound in
/// total but never that much waiting, gets every message.
#[test]
fn kv_a_subscriber_that_reads_gets_more_than_the_bound_in_total() -> io::Result<()> {
    within(Duration::from_secs(120), || {
        let server = Server::start(250);
        let (mut sub, mut publisher) = (server.client()?, server.client()?);
        assert_eq!(sub.call(&["SUBSCRIBE", "news"])?, subscribed("news", 1));
        let reader = std::thread::spawn(move || -> io::Result<()> {
            for i in 0..40 {
                let want = message("news", &big(i));
                assert_eq!(sub.reply()?, want, "message {i}");
            }
            Ok(())
        });
        for i in 0..40 {
            let text = big(i);
            assert_eq!(publisher.call(&["PUBLISH", "news", &text])?, Reply::Int(1));
        }
        reader.join().unwrap()
    })
}

/// A long command runs in slices of `SLICE` keys or channels: `DEL` of
/// `SLICE` − 1, `SLICE` and `SLICE` + 1 keys (one missing, one past its
/// deadline, one named twice) counts each key once.
#[test]
fn kv_a_del_across_slices_counts_each_key_once() -> io::Result<()> {
    let server = Server::start(250);
    let mut c = server.client()?;
    for keys in [SLICE - 1, SLICE, SLICE + 1] {
        let names: Vec<String> = (0..keys).map(|i| format!("k{i}")).collect();
        let mut batch = Vec::new();
        for name in &names[..keys - 3] {
            batch.extend(encode(&[b"SET", name.as_bytes(), b"v"]));
        }
        batch.extend(encode(&[
            b"SET",
            names[keys - 3].as_bytes(),
            b"v",
            b"PXAT",
            b"1",
        ]));
        c.writer.write_all(&batch)?;
        for _ in 0..keys - 2 {
            assert_eq!(c.reply()?, ok());
        }
        let mut del: Vec<&[u8]> = vec![b"DEL"];
        del.extend(names.iter().map(String::as_bytes));
        del.push(names[0].as_bytes());
        c.send(&del)?;
        assert_eq!(
            c.reply()?,
            Reply::Int(keys as i64 - 3),
            "DEL of {keys} keys"
        );
        assert_eq!(c.call(&["DBSIZE"])?, Reply::Int(0));
    }
    Ok(())
}

/// A `DEL` run in slices is whole to other clients, as Redis's is: while
/// one client deletes 8,192 keys, another that reads the first and the
/// last again and again never sees the first gone and the last still
/// there. (It would, often, if the slices let other commands on keys
/// run between them; with the store's turn it cannot.)
#[test]
fn kv_a_del_across_slices_is_whole_to_other_clients() -> io::Result<()> {
    const KEYS: usize = 8 * SLICE;
    let server = Server::start(250);
    let (mut deleter, mut reader) = (server.client()?, server.client()?);
    for round in 0..5 {
        let names: Vec<String> = (0..KEYS).map(|i| format!("r{round}:{i}")).collect();
        let mut set = Vec::new();
        for name in &names {
            set.extend(encode(&[b"SET", name.as_bytes(), b"v"]));
        }
        deleter.writer.write_all(&set)?;
        for _ in 0..KEYS {
            assert_eq!(deleter.reply()?, ok());
        }
        let (first, last) = (names[0].as_bytes(), names[KEYS - 1].as_bytes());
        let mut reads = Vec::new();
        for _ in 0..2000 {
            reads.extend(encode(&[b"GET", first]));
            reads.extend(encode(&[b"GET", last]));
        }
        let mut del: Vec<&[u8]> = vec![b"DEL"];
        del.extend(names.iter().map(String::as_bytes));
        deleter.send(&del)?;
        reader.writer.write_all(&reads)?;
        for i in 0..2000 {
            let (a, b) = (reader.reply()?, reader.reply()?);
            assert!(
                !(a == Reply::Bulk(None) && b == bulk("v")),
                "round {round}, read {i}: the first key gone, the last still there"
            );
        }
        assert_eq!(deleter.reply()?, Reply::Int(KEYS as i64));
    }
    Ok(())
}

/// SUBSCRIBE and UNSUBSCRIBE across slices: 2,500 channels, each answered
/// in order with its count; UNSUBSCRIBE with no channel leaves them all in
/// order, counting down to 0.
#[test]
fn kv_subscriptions_across_slices_are_answered_in_order() -> io::Result<()> {
    let server = Server::start(250);
    let (mut c, mut publisher) = (server.client()?, server.client()?);
    let names: Vec<String> = (0..2500).map(|i| format!("c{i:04}")).collect();
    for all_named in [true, false] {
        let mut args: Vec<&[u8]> = vec![b"SUBSCRIBE"];
        args.extend(names.iter().map(String::as_bytes));
        c.send(&args)?;
        for (i, name) in names.iter().enumerate() {
            assert_eq!(c.reply()?, subscribed(name, i as i64 + 1));
        }
        assert_eq!(publisher.call(&["PUBLISH", "c2499", "x"])?, Reply::Int(1));
        assert_eq!(c.reply()?, message("c2499", "x"));
        args[0] = b"UNSUBSCRIBE";
        if !all_named {
            args.truncate(1);
        }
        c.send(&args)?;
        for (i, name) in names.iter().enumerate() {
            let left = Reply::Int((names.len() - i - 1) as i64);
            let want = Reply::Array(vec![bulk("unsubscribe"), bulk(name), left]);
            assert_eq!(c.reply()?, want);
        }
        assert_eq!(publisher.call(&["PUBLISH", "c0000", "x"])?, Reply::Int(0));
        assert_eq!(c.call(&["GET", "x"])?, Reply::Bulk(None));
    }
    // Some channels by name (one never heard), then the rest, then none.
    let unsubscribed = |channel: Option<&str>, n| {
        let channel = channel.map_or(Reply::Bulk(None), bulk);
        Reply::Array(vec![bulk("unsubscribe"), channel, Reply::Int(n)])
    };
    c.send(&[b"SUBSCRIBE", b"a", b"b", b"c"])?;
    for (i, name) in ["a", "b", "c"].iter().enumerate() {
        assert_eq!(c.reply()?, subscribed(name, i as i64 + 1));
    }
    c.send(&[b"UNSUBSCRIBE", b"b", b"x"])?;
    assert_eq!(c.reply()?, unsubscribed(Some("b"), 2));
    assert_eq!(c.reply()?, unsubscribed(Some("x"), 2));
    assert_eq!(publisher.call(&["PUBLISH", "a", "y"])?, Reply::Int(1));
    assert_eq!(c.reply()?, message("a", "y"));
    c.send(&[b"UNSUBSCRIBE"])?;
    assert_eq!(c.reply()?, unsubscribed(Some("a"), 1));
    assert_eq!(c.reply()?, unsubscribed(Some("c"), 0));
    assert_eq!(c.call(&["UNSUBSCRIBE"])?, unsubscribed(None, 0));
    Ok(())
}
