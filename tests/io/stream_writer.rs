//! `StreamWriter`: `write` tries at once and keeps exactly what was
//! refused, `flush` and `close` lose nothing, and errors surface where the
//! program can see them. (`drain` and the water marks: io_writer_drain.rs.)

use std::io;

use io_run::run;
use io_writer::{Act, Rng, planned, script, script_then};
use ioloop::io::StreamWriter;
use testkit::{io_run, io_writer};

#[test]
fn write_to_an_empty_buffer_tries_the_inner_writer_at_once() -> io::Result<()> {
    run(|| async {
        let (sink, probe) = planned(script([Act::Take(3), Act::WouldBlock]));
        let mut writer = StreamWriter::new(sink);
        writer.write(b"hello world");
        // One call took 3 bytes, the next refused: exactly the rest is kept.
        assert_eq!(probe.calls(), 2);
        assert_eq!(probe.received(), b"hel");
        assert_eq!(writer.buffered(), 8);
        // With bytes queued, a write only appends: no call, order kept.
        writer.write(b"!");
        assert_eq!(probe.calls(), 2);
        assert_eq!(writer.buffered(), 9);
        writer.drain().await?;
        assert_eq!(probe.received(), b"hello world!");
        assert_eq!(writer.buffered(), 0);
        Ok(())
    })
}

#[test]
fn write_keeps_trying_while_the_inner_writer_takes_bytes() -> io::Result<()> {
    run(|| async {
        let (sink, probe) = planned(script_then([], Act::Take(4)));
        let mut writer = StreamWriter::new(sink);
        writer.write(&[1; 20]);
        assert_eq!(probe.calls(), 5);
        assert_eq!(writer.buffered(), 0);
        // A refusal by `Pending` (a socket's usual answer) stops the try too.
        probe.set_plan(script([Act::Take(6), Act::Pending]));
        writer.write(&[2; 20]);
        assert_eq!(probe.calls(), 7);
        assert_eq!(writer.buffered(), 14);
        Ok(())
    })
}

#[test]
fn a_huge_write_keeps_only_what_was_refused() -> io::Result<()> {
    run(|| async {
        let (sink, probe) = planned(script([Act::Take(1_000_000), Act::WouldBlock]));
        let mut writer = StreamWriter::new(sink);
        writer.write(&vec![9; 1 << 20]);
        assert_eq!(writer.buffered(), (1 << 20) - 1_000_000);
        writer.flush().await?;
        assert_eq!(probe.received_len(), 1 << 20);
        Ok(())
    })
}

#[test]
fn random_partial_writes_deliver_exactly_what_was_written() -> io::Result<()> {
    run(|| async {
        for seed in 0..200 {
            let mut rng = Rng::new(seed);
            let mut plan_rng = Rng::new(seed + 1_000);
            let (sink, probe) = planned(Box::new(move |_, _| match plan_rng.below(5) {
                0 => Act::Pending,
                1 => Act::WouldBlock,
                _ => Act::Take(1 + plan_rng.below(64)),
            }));
            let mut writer = StreamWriter::new(sink);
            let high = rng.below(300);
            let low = rng.below(high + 1);
            writer.set_write_buffer_limits(high, low);
            let mut written = Vec::new();
            for _ in 0..40 {
                let len = rng.below(200);
                let data = rng.bytes(len);
                writer.write(&data);
                written.extend_from_slice(&data);
                // What the writer received plus what is queued is all of it.
                assert_eq!(probe.received_len() + writer.buffered(), written.len());
                if rng.below(3) == 0 {
                    drain_retrying(&mut writer).await?;
                    assert!(writer.buffered() <= high, "seed {seed}");
                }
            }
            while writer.buffered() > 0 {
                match writer.flush().await {
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                    other => other?,
                }
            }
            assert_eq!(probe.received(), written, "seed {seed}");
        }
        Ok(())
    })
}

/// `drain`, retried while the double answers `WouldBlock`, which a
/// futures-io writer passes up as an error rather than waiting.
async fn drain_retrying<W>(writer: &mut StreamWriter<W>) -> io::Result<()>
where
    W: futures_util::io::AsyncWrite + Unpin,
{
    loop {
        match writer.drain().await {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            other => return other,
        }
    }
}

#[test]
fn flush_empties_the_buffer_and_flushes_the_inner_writer() -> io::Result<()> {
    run(|| async {
        let (sink, probe) = planned(script_then([Act::WouldBlock], Act::Take(3)));
        let mut writer = StreamWriter::new(sink);
        writer.set_write_buffer_limits(1000, 500);
        writer.write(b"kept below the marks");
        writer.flush().await?;
        assert_eq!(writer.buffered(), 0);
        assert_eq!(probe.received(), b"kept below the marks");
        assert_eq!(probe.flushes(), 1);
        Ok(())
    })
}

#[test]
fn close_sends_every_byte_before_closing() -> io::Result<()> {
    run(|| async {
        let plan = script_then([Act::WouldBlock], Act::Take(100));
        let (sink, probe) = planned(plan);
        let mut writer = StreamWriter::new(sink);
        writer.set_write_buffer_limits(10_000, 10_000);
        writer.write(&[8; 5000]);
        writer.close().await?;
        assert_eq!(probe.closed_after(), Some(5000));
        // Writing after close fails, and the next drain says so.
        writer.write(b"late");
        let err = writer.drain().await.unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::BrokenPipe);
        Ok(())
    })
}

#[test]
fn an_error_during_write_surfaces_at_the_next_drain() -> io::Result<()> {
    run(|| async {
        let (sink, probe) = planned(script([Act::Fail(io::ErrorKind::ConnectionReset)]));
        let mut writer = StreamWriter::new(sink);
        writer.write(b"abc");
        assert_eq!(writer.buffered(), 3, "the bytes are kept, not dropped");
        let err = writer.drain().await.unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::ConnectionReset);
        // Reported once; a later drain tries the bytes again.
        writer.drain().await?;
        assert_eq!(probe.received(), b"abc");
        Ok(())
    })
}

#[test]
fn an_error_during_drain_is_returned_and_keeps_the_bytes() -> io::Result<()> {
    run(|| async {
        let plan = script([
            Act::WouldBlock,
            Act::Take(2),
            Act::Fail(io::ErrorKind::BrokenPipe),
        ]);
        let (sink, probe) = planned(plan);
        let mut writer = StreamWriter::new(sink);
        writer.write(b"abcdef");
        let err = writer.drain().await.unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::BrokenPipe);
        assert_eq!(writer.buffered(), 4);
        assert_eq!(probe.received(), b"ab");
        Ok(())
    })
}

#[test]
fn chunks_queued_behind_a_refusal_leave_together_in_one_call() -> io::Result<()> {
    run(|| async {
        let (sink, probe) = planned(script([Act::WouldBlock]));
        let mut writer = StreamWriter::new(sink);
        // A reply in three pieces, the peer not reading: the first write
        // tries and is refused, the other two only append.
        writer.write(b"HTTP/1.1 200 OK\r\n");
        writer.write(b"Content-Length: 5\r\n\r\n");
        writer.write(b"hello");
        assert_eq!(probe.calls(), 1);
        writer.drain().await?;
        // The queue is one buffer, so one call (one send(2) on a socket)
        // takes all three pieces, not one call each.
        assert_eq!(probe.calls(), 2);
        assert_eq!(
            probe.received(),
            b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"
        );
        Ok(())
    })
}

#[test]
fn a_vectored_write_tries_once_and_queues_exactly_what_was_refused() -> io::Result<()> {
    use futures_util::io::AsyncWriteExt;
    use std::io::IoSlice;
    run(|| async {
        // The planned writer has no vectored call of its own: futures-io's
        // default sends the first slice, so the other two must be queued.
        let (sink, probe) = planned(script([]));
        let mut writer = StreamWriter::new(sink);
        let parts = [
            IoSlice::new(b"one "),
            IoSlice::new(b"two "),
            IoSlice::new(b"three"),
        ];
        assert_eq!(writer.write_vectored(&parts).await?, 13);
        assert_eq!(probe.calls(), 1);
        assert_eq!(probe.received(), b"one ");
        assert_eq!(writer.buffered(), 9);
        writer.drain().await?;
        assert_eq!(probe.calls(), 2);
        assert_eq!(probe.received(), b"one two three");
        Ok(())
    })
}

/// `Debug` shows the inner writer, how much is queued, the water marks
/// and whether an error waits.
#[test]
fn a_writer_shows_its_inner_writer_what_it_holds_and_its_marks() -> io::Result<()> {
    run(|| async {
        let mut writer = StreamWriter::new(Vec::new());
        writer.set_write_buffer_limits(100, 10);
        writer.write(b"hi");
        assert_eq!(
            format!("{writer:?}"),
            "StreamWriter { inner: [104, 105], buffered: 0, high: 100, low: 10, error: None }"
        );
        Ok(())
    })
}
