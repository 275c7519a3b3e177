//! `StreamWriter::drain`, the backpressure point: it returns at once at or
//! below the high-water mark, otherwise waits until at or below the low
//! one; the defaults (0, 0) send everything; a dropped drain loses nothing.

use std::future::poll_fn;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use io_run::run;
use io_writer::{Act, Rng, planned, script, script_then};
use ioloop::io::{AsyncWrite, StreamWriter};
use ioloop::time::timeout;
use testkit::{io_run, io_writer, time_poll};
use time_poll::poll_once;

#[test]
fn drain_sends_until_at_or_below_the_low_water_mark() -> io::Result<()> {
    run(|| async {
        let plan = script_then([Act::WouldBlock], Act::Take(7));
        let (sink, probe) = planned(plan);
        let mut writer = StreamWriter::new(sink);
        writer.set_write_buffer_limits(100, 40);
        writer.write(&[5; 1000]);
        assert_eq!(writer.buffered(), 1000);
        writer.drain().await?;
        // It stopped as soon as 40 or fewer were left: within one call's 7.
        let left = writer.buffered();
        assert!((34..=40).contains(&left), "left {left}");
        assert_eq!(probe.received_len(), 1000 - left);
        Ok(())
    })
}

#[test]
fn drain_waits_for_a_stalled_peer_and_returns_when_it_reads() -> io::Result<()> {
    run(|| async {
        let (sink, probe) = planned(script([Act::Stall]));
        let mut writer = StreamWriter::new(sink);
        writer.write(b"reply\n");
        assert_eq!(writer.buffered(), 6);
        let mut drain = Box::pin(writer.drain());
        assert!(poll_once(&mut drain).is_pending());
        assert!(poll_once(&mut drain).is_pending());
        probe.unstall();
        drain.await?;
        assert_eq!(probe.received(), b"reply\n");
        Ok(())
    })
}

#[test]
fn drain_at_or_below_the_high_water_mark_returns_at_once_after_one_try() -> io::Result<()> {
    run(|| async {
        let (sink, probe) = planned(script([Act::WouldBlock, Act::Take(10), Act::Stall]));
        let mut writer = StreamWriter::new(sink);
        writer.set_write_buffer_limits(100, 10);
        writer.write(&[1; 50]);
        assert_eq!(probe.calls(), 1);
        // 50 <= 100: one non-blocking try (takes 10, then stalls), and done.
        assert!(matches!(
            poll_once(&mut Box::pin(writer.drain())),
            Poll::Ready(Ok(()))
        ));
        assert_eq!(probe.calls(), 3);
        assert_eq!(writer.buffered(), 40);
        // Over the high-water mark, drain must wait for the stalled peer.
        writer.write(&[2; 70]);
        let mut drain = Box::pin(writer.drain());
        assert!(poll_once(&mut drain).is_pending());
        probe.unstall();
        drain.await?;
        assert!(writer.buffered() <= 10);
        Ok(())
    })
}

/// The high-water mark at its edge: with 99 or 100 bytes queued (mark
/// 100) a drain returns after one try; with 101 it waits for the peer.
#[test]
fn drain_waits_only_above_the_high_water_mark_at_its_edge() -> io::Result<()> {
    run(|| async {
        for (queued, waits) in [(99, false), (100, false), (101, true)] {
            let (sink, probe) = planned(script([Act::WouldBlock, Act::Stall]));
            let mut writer = StreamWriter::new(sink);
            writer.set_write_buffer_limits(100, 10);
            writer.write(&vec![3; queued]);
            assert_eq!(writer.buffered(), queued);
            let mut drain = Box::pin(writer.drain());
            let first = poll_once(&mut drain);
            assert_eq!(first.is_pending(), waits, "{queued} queued: {first:?}");
            probe.unstall();
            let drained = match first {
                Poll::Pending => drain.await,
                Poll::Ready(done) => {
                    drop(drain);
                    done
                }
            };
            drained?;
            assert!(writer.buffered() <= if waits { 10 } else { queued });
        }
        Ok(())
    })
}

/// At or below the high-water mark, a writer that answers the one try
/// with a `WouldBlock` error (as a raw non-blocking socket does) is no
/// error to the drain: it returns `Ok`, and the queue keeps every byte.
#[test]
fn a_would_block_error_on_the_one_try_is_no_error_and_loses_nothing() -> io::Result<()> {
    run(|| async {
        let (sink, probe) = planned(script([Act::WouldBlock, Act::WouldBlock]));
        let mut writer = StreamWriter::new(sink);
        writer.set_write_buffer_limits(100, 10);
        writer.write(&[6; 50]);
        assert!(matches!(
            poll_once(&mut Box::pin(writer.drain())),
            Poll::Ready(Ok(()))
        ));
        assert_eq!(probe.calls(), 2);
        assert_eq!(writer.buffered(), 50);
        writer.set_write_buffer_limits(0, 0);
        writer.drain().await?;
        assert_eq!(probe.received(), vec![6; 50]);
        Ok(())
    })
}

/// A drain that sends its queue down to nothing (a low-water mark of 0)
/// flushes the inner writer too, whose own gathered writes (a socket's)
/// would otherwise stay behind; one that stops at a mark above 0 leaves
/// the inner writer as it is.
#[test]
fn a_drain_down_to_nothing_flushes_the_inner_writer_and_one_to_a_mark_does_not() -> io::Result<()> {
    run(|| async {
        for (high, low, flushed) in [(0, 0, 1), (50, 10, 0)] {
            let (sink, probe) = planned(script_then([Act::WouldBlock], Act::Take(7)));
            let mut writer = StreamWriter::new(sink);
            writer.set_write_buffer_limits(high, low);
            writer.write(&[4; 100]);
            assert_eq!(writer.buffered(), 100);
            writer.drain().await?;
            assert!(writer.buffered() <= low, "({high}, {low})");
            assert_eq!(probe.flushes(), flushed, "({high}, {low})");
        }
        Ok(())
    })
}

#[test]
fn the_default_limits_make_drain_send_everything() -> io::Result<()> {
    run(|| async {
        let mut rng = Rng::new(99);
        let (sink, probe) = planned(Box::new(move |_, _| match rng.below(3) {
            0 => Act::Pending,
            _ => Act::Take(1 + rng.below(50)),
        }));
        let mut writer = StreamWriter::new(sink);
        assert_eq!(writer.write_buffer_limits(), (0, 0));
        for _ in 0..100 {
            writer.write(&[3; 100]);
            writer.drain().await?;
            assert_eq!(writer.buffered(), 0);
        }
        assert_eq!(probe.received_len(), 10_000);
        Ok(())
    })
}

#[test]
fn a_drain_dropped_half_way_loses_and_repeats_nothing() -> io::Result<()> {
    run(|| async {
        let plan = script([Act::WouldBlock, Act::Take(5), Act::Stall]);
        let (sink, probe) = planned(plan);
        let mut writer = StreamWriter::new(sink);
        writer.write(b"0123456789");
        assert!(
            timeout(Duration::from_millis(10), writer.drain())
                .await
                .is_err()
        );
        assert_eq!(probe.received(), b"01234");
        assert_eq!(writer.buffered(), 5);
        probe.unstall();
        writer.drain().await?;
        assert_eq!(probe.received(), b"0123456789");
        Ok(())
    })
}

#[test]
#[should_panic(expected = "low-water mark 2 is above high-water mark 1")]
fn limits_with_low_above_high_panic() {
    let (sink, _) = planned(script([]));
    StreamWriter::new(sink).set_write_buffer_limits(1, 2);
}

/// Takes every byte; its flush says `Pending` (waking at once) the first
/// `pending` times; counts its flushes.
struct SlowFlush {
    pending: usize,
    flushes: usize,
}

impl AsyncWrite for SlowFlush {
    fn poll_write(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        Poll::Ready(Ok(data.len()))
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.flushes += 1;
        if self.pending == 0 {
            return Poll::Ready(Ok(()));
        }
        self.pending -= 1;
        cx.waker().wake_by_ref();
        Poll::Pending
    }

    fn poll_close(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

/// With nothing queued, a drain is a flush of the inner writer, tried
/// once without waiting: under the default marks a flush that is not done
/// yet is then awaited (done here in the same poll: the writer is ready
/// the second time), and under a high-water mark above 0 it is left as it
/// is, with no second try.
#[test]
fn a_drain_with_nothing_queued_flushes_once_and_waits_only_under_the_default_marks() {
    for (high, flushes) in [(0, 2), (100, 1)] {
        let mut writer = StreamWriter::new(SlowFlush {
            pending: 1,
            flushes: 0,
        });
        writer.set_write_buffer_limits(high, 0);
        let first = poll_once(&mut Box::pin(writer.drain()));
        assert!(
            matches!(first, Poll::Ready(Ok(()))),
            "high {high}: {first:?}"
        );
        assert_eq!(writer.get_ref().flushes, flushes, "high {high}");
    }
}

/// `AsyncWrite::poll_write` makes room first: with 99 or 100 bytes queued
/// (mark 100) it takes the next byte at once; with 101 it must send down
/// to the low mark, and waits for a stalled peer.
#[test]
fn poll_write_waits_for_room_only_above_the_high_water_mark_at_its_edge() -> io::Result<()> {
    run(|| async {
        for (queued, waits) in [(99, false), (100, false), (101, true)] {
            let (sink, probe) = planned(script([Act::WouldBlock, Act::Stall]));
            let mut writer = StreamWriter::new(sink);
            writer.set_write_buffer_limits(100, 10);
            writer.write(&vec![3; queued]);
            let mut one = poll_fn(|cx| Pin::new(&mut writer).poll_write(cx, b"x"));
            let first = poll_once(&mut one);
            assert_eq!(first.is_pending(), waits, "{queued} queued: {first:?}");
            probe.unstall();
            let taken = match first {
                Poll::Pending => one.await?,
                Poll::Ready(taken) => taken?,
            };
            assert_eq!(taken, 1);
            assert!(writer.buffered() <= if waits { 11 } else { queued + 1 });
        }
        Ok(())
    })
}
