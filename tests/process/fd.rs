//! `AsyncFd`: any nonblocking descriptor on the reactor: reads and writes
//! through futures-io, readiness waited for and cleared, the descriptor
//! given back still open, clear errors for what epoll refuses, and one task
//! waiting while another uses every other method.

use std::cell::Cell;
use std::io::{self, ErrorKind, Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::net::{UnixDatagram, UnixStream};
use std::rc::Rc;
use std::time::Duration;

use ioloop::io::{AsyncFd, AsyncReadExt, AsyncWriteExt};
use ioloop::time::timeout;

use crate::child::run;

fn pair() -> io::Result<(UnixStream, UnixStream)> {
    let (a, b) = UnixStream::pair()?;
    a.set_nonblocking(true)?;
    b.set_nonblocking(true)?;
    Ok((a, b))
}

#[test]
fn bytes_cross_a_socket_pair_both_ways_through_futures_io() -> io::Result<()> {
    run(async || {
        let (a, b) = pair()?;
        let (mut a, mut b) = (AsyncFd::new(a)?, AsyncFd::new(b)?);
        // More than the socket buffer holds: the writer waits for the reader.
        let data: Vec<u8> = (0..4 << 20).map(|i| i as u8).collect();
        let expected = data.clone();
        let reader = ioloop::spawn(async move {
            let mut got = vec![0; expected.len()];
            b.read_exact(&mut got).await?;
            assert!(got == expected);
            b.write_all(b"done").await?;
            b.flush().await?;
            b.close().await?;
            Ok::<_, io::Error>(b)
        });
        a.write_all(&data).await?;
        let mut b = reader.await.expect("the reader")?;
        let mut done = [0; 4];
        a.read_exact(&mut done).await?;
        assert_eq!(&done, b"done");
        // Vectored calls, both ways.
        let n = a
            .write_vectored(&[io::IoSlice::new(b"ab"), io::IoSlice::new(b"cd")])
            .await?;
        assert_eq!(n, 4);
        let (mut x, mut y) = ([0; 3], [0; 3]);
        let mut slices = [io::IoSliceMut::new(&mut x), io::IoSliceMut::new(&mut y)];
        let n = b.read_vectored(&mut slices).await?;
        assert_eq!((n, &x, y[0]), (4, b"abc", b'd'));
        Ok(())
    })
}

#[test]
fn a_terminal_like_source_with_more_left_after_a_short_read_is_read_again() -> io::Result<()> {
    // A datagram socket hands out one message a read, short of the buffer,
    // with more queued, as a terminal hands out one line: a reader that
    // took a short read for "empty" would wait forever for the second.
    run(async || {
        let (a, b) = UnixDatagram::pair()?;
        a.set_nonblocking(true)?;
        let mut a = AsyncFd::new(Datagrams(a))?;
        b.send(b"one")?;
        b.send(b"two")?;
        let mut buf = [0; 64];
        assert_eq!(a.read(&mut buf).await?, 3);
        let second = timeout(Duration::from_secs(5), a.read(&mut buf)).await;
        assert_eq!(second.expect("the second message was waited for")?, 3);
        assert_eq!(&buf[..3], b"two");
        Ok(())
    })
}

/// A datagram socket read as a byte stream: a message a read.
struct Datagrams(UnixDatagram);

impl Read for &Datagrams {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.recv(buf)
    }
}

impl AsRawFd for Datagrams {
    fn as_raw_fd(&self) -> std::os::fd::RawFd {
        self.0.as_raw_fd()
    }
}

#[test]
fn readiness_is_waited_for_cleared_and_raised_again_by_new_data() -> io::Result<()> {
    run(async || {
        let (a, mut b) = pair()?;
        let a = AsyncFd::new(a)?;
        // A fresh registration says ready at once; a read says WouldBlock.
        let event = a.readable().await?;
        let mut buf = [0; 16];
        let err = a.get_ref().read(&mut buf).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::WouldBlock);
        a.clear_readiness(event);
        assert!(
            timeout(Duration::from_millis(30), a.readable())
                .await
                .is_err()
        );
        b.write_all(b"x")?;
        let event = a.readable().await?;
        assert!(event.is_readable());
        assert_eq!(a.read_io(|mut s| s.read(&mut buf)).await?, 1);
        assert!(a.writable().await?.is_writable());
        assert_eq!(a.write_io(|mut s| s.write(b"y")).await?, 1);
        let mut got = [0; 1];
        b.read_exact(&mut got)?;
        assert_eq!(&got, b"y");
        Ok(())
    })
}

#[test]
fn into_inner_gives_the_descriptor_back_open_and_unregistered() -> io::Result<()> {
    run(async || {
        let (a, mut b) = pair()?;
        let raw = a.as_raw_fd();
        let fd = AsyncFd::new(a)?;
        assert_eq!(fd.as_raw_fd(), raw);
        assert!(format!("{fd:?}").contains("AsyncFd"));
        let mut a = fd.into_inner();
        a.write_all(b"still open")?;
        let mut got = [0; 10];
        b.read_exact(&mut got)?;
        // Unregistered: it can be registered again.
        let mut a = AsyncFd::new(a)?;
        a.get_mut().write_all(b"!")?;
        let mut one = [0; 1];
        b.read_exact(&mut one)?;
        assert_eq!(&one, b"!");
        Ok(())
    })
}

#[test]
fn what_epoll_refuses_is_a_clear_error() -> io::Result<()> {
    run(async || {
        let file = std::fs::File::open("/proc/self/status")?;
        let err = AsyncFd::new(file).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::PermissionDenied);
        assert!(err.to_string().contains("spawn_blocking"), "{err}");
        // The same descriptor twice.
        let (a, _b) = pair()?;
        let _first = AsyncFd::new(a.as_raw_fd())?;
        let err = AsyncFd::new(a.as_raw_fd()).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::AlreadyExists);
        Ok(())
    })
}

#[test]
fn outside_a_runtime_is_an_error() -> io::Result<()> {
    let _serial = testkit::account::serial();
    let (a, _b) = pair()?;
    let err = AsyncFd::new(a).unwrap_err();
    assert!(
        err.to_string().contains("outside an ioloop runtime"),
        "{err}"
    );
    Ok(())
}

/// One task waits to read while another, on the same `AsyncFd`, calls
/// every other method; the waiter is woken by the data that finally
/// comes, and by nothing else.
#[test]
fn a_reader_waits_while_another_task_uses_every_other_method() -> io::Result<()> {
    run(async || {
        let (a, b) = pair()?;
        let a = Rc::new(AsyncFd::new(a)?);
        let mut b = AsyncFd::new(b)?;
        let woke = Rc::new(Cell::new(false));
        let waiter = ioloop::spawn_local({
            let (a, woke) = (a.clone(), woke.clone());
            async move {
                let mut buf = [0; 8];
                let n = a.read_io(|mut s| s.read(&mut buf)).await?;
                woke.set(true);
                Ok::<_, io::Error>(buf[..n].to_vec())
            }
        });
        ioloop::yield_now().await;
        assert!(!woke.get());
        // Every other method, while the reader waits.
        assert!(a.writable().await?.is_writable());
        assert_eq!(a.write_io(|mut s| s.write(b"w")).await?, 1);
        assert!(std::future::poll_fn(|cx| a.poll_write_io(cx, |mut s| s.write(b"v"))).await? == 1);
        // Cleared with room left, the write side waits for an edge that
        // is not coming: only a `WouldBlock` should clear it. Nothing
        // writes through `a` after this.
        let event = std::future::poll_fn(|cx| a.poll_write_ready(cx)).await?;
        a.clear_readiness(event);
        assert!(
            timeout(Duration::from_millis(20), a.writable())
                .await
                .is_err()
        );
        assert_eq!(a.as_raw_fd(), a.get_ref().as_raw_fd());
        assert!(format!("{a:?}").contains("UnixStream"));
        ioloop::yield_now().await;
        assert!(!woke.get(), "woken by the other task's calls");
        let mut got = [0; 2];
        b.read_exact(&mut got).await?;
        assert_eq!(&got, b"wv");
        b.write_all(b"data").await?;
        assert_eq!(waiter.await.expect("the reader")?, b"data");
        Ok(())
    })
}

/// A socket whose `Write` counts its flushes: `AsyncFd`'s flush and close
/// reach the inner writer's flush.
struct Counted {
    stream: UnixStream,
    flushes: Cell<usize>,
}

impl Write for &Counted {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        (&self.stream).write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.flushes.set(self.flushes.get() + 1);
        Ok(())
    }
}

impl AsRawFd for Counted {
    fn as_raw_fd(&self) -> std::os::fd::RawFd {
        self.stream.as_raw_fd()
    }
}

#[test]
fn flush_and_close_reach_the_inner_writers_flush() -> io::Result<()> {
    run(async || {
        let (a, _b) = pair()?;
        let mut a = AsyncFd::new(Counted {
            stream: a,
            flushes: Cell::new(0),
        })?;
        a.write_all(b"x").await?;
        a.flush().await?;
        assert_eq!(a.get_ref().flushes.get(), 1);
        a.close().await?;
        assert_eq!(a.get_ref().flushes.get(), 2);
        Ok(())
    })
}

/// Churn with accounting: 1,000 `AsyncFd`s made and dropped, given back
/// with `into_inner` and dropped, and 1,000 of each standard stream opened
/// and dropped (whatever this process's are, on the loop or the pool):
/// descriptors back where they were.
#[test]
fn churn_of_descriptors_and_standard_streams_leaves_none_behind() -> io::Result<()> {
    run(async || {
        let before = testkit::account::open_fds();
        for i in 0..1000 {
            let (a, _b) = pair()?;
            let fd = AsyncFd::new(a)?;
            if i % 2 == 0 {
                drop(fd.into_inner());
            }
            drop(ioloop::io::stdin()?);
            drop(ioloop::io::stdout()?);
            drop(ioloop::io::stderr()?);
        }
        assert_eq!(testkit::account::open_fds(), before);
        Ok(())
    })
}
