//! `InBuf` and `OutBuf`, the buffers alone, as a layer of one's own over a
//! socket uses them (ioloop-callbacks' `Connection` is one): a fill within
//! what it may read, a consume of any length, bytes fed in order; a send
//! that stops at its target, and a failed or refused send that keeps the
//! bytes the writer did not take.

use std::future::poll_fn;
use std::io;
use std::task::{Context, Poll, Waker};

use io_run::run;
use io_writer::{Act, planned, script, script_then};
use ioloop::io::{InBuf, OutBuf};
use testkit::{io_run, io_writer};

#[test]
fn a_fill_reads_at_most_what_it_may_and_zero_is_the_end() -> io::Result<()> {
    run(|| async {
        // The peer has 5 bytes; the fill may read one less, exactly, one more.
        for (at_most, got) in [(4, 4), (5, 5), (6, 5)] {
            let mut peer = &b"hello"[..];
            let mut inbuf = InBuf::default();
            let n = poll_fn(|cx| inbuf.poll_fill(cx, &mut peer, 1024, at_most)).await?;
            assert_eq!(
                (n, inbuf.unread()),
                (got, &b"hello"[..got]),
                "at most {at_most}"
            );
            // Once allocated, the same limit: one byte more at most.
            let mut more = &b"!?"[..];
            let n = poll_fn(|cx| inbuf.poll_fill(cx, &mut more, 1024, 1)).await?;
            assert_eq!((n, inbuf.len()), (1, got + 1));
            assert_eq!(inbuf.unread().last(), Some(&b'!'));
        }
        let (mut inbuf, mut ended) = (InBuf::default(), &b""[..]);
        let n = poll_fn(|cx| inbuf.poll_fill(cx, &mut ended, 1024, usize::MAX)).await?;
        assert_eq!(n, 0, "the end of the stream");
        assert!(inbuf.is_empty());
        Ok(())
    })
}

#[test]
fn consume_drops_a_prefix_of_any_length_and_feeding_keeps_the_order() {
    // One byte less than the buffer's 4, all of them, one byte more.
    for (n, left) in [(3, &b"e"[..]), (4, b""), (5, b"")] {
        let mut inbuf = InBuf::default();
        inbuf.extend(b"ab");
        inbuf.extend(b"cd");
        inbuf.consume(1);
        assert_eq!(inbuf.unread(), b"bcd");
        inbuf.extend(b"e");
        inbuf.consume(n);
        assert_eq!(
            (inbuf.unread(), inbuf.len()),
            (left, left.len()),
            "consume {n}"
        );
        assert_eq!(inbuf.is_empty(), left.is_empty());
        // Emptied or not, what is fed next comes after what is left.
        inbuf.extend(b"\n");
        assert_eq!(inbuf.unread(), [left, b"\n"].concat());
    }
}

#[test]
fn a_send_stops_at_its_target_and_keeps_the_rest_in_order() -> io::Result<()> {
    run(|| async {
        // 10 bytes queued, 4 taken a write: (target, writes, left).
        for (target, writes, left) in [(10, 0, 10), (7, 1, 6), (6, 1, 6), (5, 2, 2), (0, 3, 0)] {
            let (mut sink, probe) = planned(script_then([], Act::Take(4)));
            let mut outbuf = OutBuf::default();
            outbuf.push(b"01234");
            outbuf.push(b"56789");
            poll_fn(|cx| outbuf.poll_send_down_to(cx, &mut sink, target)).await?;
            assert_eq!(
                (probe.calls(), outbuf.len()),
                (writes, left),
                "target {target}"
            );
            assert_eq!(outbuf.unsent(), &b"0123456789"[10 - left..]);
            assert_eq!(probe.received(), &b"0123456789"[..10 - left]);
            assert_eq!(outbuf.is_empty(), left == 0);
        }
        Ok(())
    })
}

#[test]
fn a_refused_or_failed_send_keeps_what_the_writer_did_not_take() {
    let mut cx = Context::from_waker(Waker::noop());
    let plan = [
        Act::Take(1),
        Act::Stall,
        Act::Fail(io::ErrorKind::Interrupted),
        Act::Take(1),
        Act::Fail(io::ErrorKind::BrokenPipe),
        Act::Take(0),
    ];
    let (mut sink, probe) = planned(script(plan));
    let mut outbuf = OutBuf::default();
    outbuf.push(b"abcd");
    // A refusal: `Pending`, the byte it took gone, the rest kept.
    let sent = outbuf.poll_send_down_to(&mut cx, &mut sink, 0);
    assert!(sent.is_pending());
    assert_eq!(outbuf.unsent(), b"bcd");
    // An interrupted write is tried again; another error is returned.
    probe.unstall();
    let sent = outbuf.poll_send_down_to(&mut cx, &mut sink, 0);
    assert!(matches!(sent, Poll::Ready(Err(e)) if e.kind() == io::ErrorKind::BrokenPipe));
    assert_eq!(
        (probe.received(), outbuf.unsent()),
        (b"ab".to_vec(), &b"cd"[..])
    );
    // A writer that takes nothing and says nothing would be polled forever.
    let sent = outbuf.poll_send_down_to(&mut cx, &mut sink, 0);
    assert!(matches!(sent, Poll::Ready(Err(e)) if e.kind() == io::ErrorKind::WriteZero));
    assert_eq!(outbuf.unsent(), b"cd");
    assert_eq!(probe.calls(), 6);
}
