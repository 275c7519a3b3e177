//! `StreamWriter::drain`, the backpressure point: it returns at once at or
//! below the high-water mark, otherwise waits until at or below the low
//! one; the defaults (0, 0) send everything; a dropped drain loses nothing.

use std::io;
use std::task::Poll;
use std::time::Duration;

use io_run::run;
use io_writer::{Act, Rng, planned, script, script_then};
use ioloop::io::StreamWriter;
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
