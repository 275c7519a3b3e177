//! `stdin()`, `stdout()`, `stderr()`: the process's standard streams as
//! futures-io streams.
//!
//! A pipe or a terminal (a FIFO or a character device) is opened again via
//! `/proc/self/fd/N`, which gives a new open file of its own: it is made
//! nonblocking and watched by the reactor, and the file the process
//! inherited (shared with the shell, or the parent) keeps its blocking
//! mode. What cannot be opened so or watched (a regular file, `/dev/null`,
//! a socket, a system without `/proc`) is read or written on the blocking
//! pool, where a read first waits in `poll(2)` for the descriptor or for a
//! cancel pipe: dropping the stream (as a runtime shutting down drops its
//! tasks) closes that pipe's write end, and the pool's thread returns at once
//! instead of holding the shutdown for a read that may never come.

use std::fs::{File, OpenOptions};
use std::future::Future;
use std::io::{self, PipeReader, PipeWriter, Read, Write};
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};

use futures_io::{AsyncRead, AsyncWrite};
use ioloop_runtime::{JoinHandle, spawn_blocking};
use rustix::event::{PollFd, PollFlags, poll};

use crate::AsyncFd;

/// The most a read or write on the blocking pool moves at once.
const CHUNK: usize = 64 * 1024;

/// The process's standard input, read on the loop (a pipe, a terminal)
/// or on the blocking pool (a file, `/dev/null`, a socket: anything
/// else), either way cancellable: see [`stdin`].
#[derive(Debug)]
pub struct Stdin {
    io: Stdio,
}

/// The process's standard output, written on the loop or on the blocking
/// pool: see [`stdout`].
#[derive(Debug)]
pub struct Stdout {
    io: Stdio,
}

/// The process's standard error: as [`Stdout`].
#[derive(Debug)]
pub struct Stderr {
    io: Stdio,
}

/// One standard stream, however it is reached.
#[derive(Debug)]
enum Stdio {
    /// Opened again, nonblocking, on the reactor.
    Loop(AsyncFd<File>),
    /// On the blocking pool.
    Pool(Pool),
}

/// A standard stream on the blocking pool: one job at a time.
#[derive(Debug)]
struct Pool {
    file: Arc<File>,
    /// A read's bytes the caller's buffer had no room for.
    left: io::Cursor<Vec<u8>>,
    /// The job in flight: a read's bytes, or a write (whose error the
    /// next call returns: the write was reported taken).
    job: Option<JoinHandle<io::Result<Vec<u8>>>>,
    /// Never written: dropped with the stream, it hangs the pipe up, and a
    /// read waiting in `poll` for `cancelled` returns (`POLLHUP`).
    _cancel: PipeWriter,
    cancelled: Arc<PipeReader>,
}

/// The process's standard input as a futures-io reader:
/// `StreamReader::new(ioloop::io::stdin())` gives asyncio's
/// `connect_read_pipe` + `readline`.
///
/// A pipe or a terminal is opened again through
/// `/proc/self/fd/0` and read on the loop; the descriptor the process
/// inherited keeps its blocking mode, so the shell's terminal is left as
/// it was. A regular file, `/dev/null`, a socket or what cannot be opened
/// again is read on the blocking pool, each read waiting in `poll(2)` for
/// either the input or a cancel pipe.
///
/// A read waiting for input never holds anything up: dropping the read
/// (a `timeout`) loses nothing, and dropping the `Stdin` (as a runtime
/// shutting down drops the task that holds it) ends a pool read at once.
/// Each call opens its own stream; bytes std's `io::stdin()` buffered are
/// not seen here.
///
/// # Errors
///
/// Fails outside an ioloop runtime, or if the descriptor cannot be opened
/// or duplicated (out of descriptors).
pub fn stdin() -> io::Result<Stdin> {
    Ok(Stdin {
        io: Stdio::open(io::stdin().as_fd(), 0)?,
    })
}

/// The process's standard output as a futures-io writer (for
/// `StreamWriter`), written on the loop or on the blocking pool as
/// [`stdin`] is read. A write on the pool is reported taken once copied;
/// its error, if any, comes with the next call, and `flush` waits for it.
/// Bytes std's `print!` buffered are not ordered with these.
///
/// # Errors
///
/// As [`stdin`].
pub fn stdout() -> io::Result<Stdout> {
    Ok(Stdout {
        io: Stdio::open(io::stdout().as_fd(), 1)?,
    })
}

/// The process's standard error as a futures-io writer: as [`stdout`].
///
/// # Errors
///
/// As [`stdin`].
pub fn stderr() -> io::Result<Stderr> {
    Ok(Stderr {
        io: Stdio::open(io::stderr().as_fd(), 2)?,
    })
}

impl Stdio {
    /// Opens descriptor `n` again on the loop if it can, else on the pool.
    fn open(fd: BorrowedFd<'_>, n: i32) -> io::Result<Stdio> {
        if ioloop_runtime::Handle::try_current().is_none() {
            return Err(io::Error::other(
                "a standard stream was opened outside an ioloop runtime",
            ));
        }
        let file = File::from(fd.try_clone_to_owned()?);
        let kind = file.metadata()?.file_type();
        if kind.is_fifo() || kind.is_char_device() {
            let mut again = OpenOptions::new();
            again.custom_flags(
                (rustix::fs::OFlags::NONBLOCK | rustix::fs::OFlags::NOCTTY).bits() as i32,
            );
            let opened = match n {
                0 => again.read(true).open(format!("/proc/self/fd/{n}")),
                _ => again.write(true).open(format!("/proc/self/fd/{n}")),
            };
            // A device epoll cannot watch (`/dev/null`) goes to the pool,
            // as a socket does (it cannot be opened through `/proc`).
            if let Ok(Ok(fd)) = opened.map(AsyncFd::new) {
                return Ok(Stdio::Loop(fd));
            }
        }
        let (cancelled, cancel) = io::pipe()?;
        Ok(Stdio::Pool(Pool {
            file: Arc::new(file),
            left: io::Cursor::default(),
            job: None,
            _cancel: cancel,
            cancelled: Arc::new(cancelled),
        }))
    }

    fn poll_read(&mut self, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<io::Result<usize>> {
        match self {
            Stdio::Loop(fd) => fd.poll_read_io(cx, |mut file| file.read(&mut *buf)),
            Stdio::Pool(pool) => pool.poll_read(cx, buf),
        }
    }

    fn poll_write(&mut self, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        match self {
            Stdio::Loop(fd) => fd.poll_write_io(cx, |mut file| file.write(buf)),
            Stdio::Pool(pool) => pool.poll_write(cx, buf),
        }
    }

    fn poll_flush(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self {
            Stdio::Loop(_) => Poll::Ready(Ok(())),
            Stdio::Pool(pool) => pool.poll_job(cx).map_ok(drop),
        }
    }
}

impl Pool {
    fn poll_read(&mut self, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<io::Result<usize>> {
        if self.left.position() == self.left.get_ref().len() as u64 {
            if self.job.is_none() {
                let (file, cancelled) = (self.file.clone(), self.cancelled.clone());
                self.job = Some(spawn_blocking(move || {
                    read_unless_cancelled(&file, &cancelled)
                }));
            }
            self.left = io::Cursor::new(ready!(self.poll_job(cx))?);
        }
        // Handed out from the cursor's place, the rest left where it is: a
        // reader taking a byte at a time does not move the 64 KiB left
        // each time (as draining the front of a `Vec` would).
        Poll::Ready(self.left.read(buf))
    }

    fn poll_write(&mut self, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        ready!(self.poll_job(cx))?;
        let data = buf[..buf.len().min(CHUNK)].to_vec();
        let n = data.len();
        let file = self.file.clone();
        self.job = Some(spawn_blocking(move || {
            (&*file).write_all(&data)?;
            Ok(Vec::new())
        }));
        Poll::Ready(Ok(n))
    }

    /// Waits for the job in flight, if any, and returns what it returned
    /// (nothing, if there was none).
    fn poll_job(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<Vec<u8>>> {
        let Some(job) = &mut self.job else {
            return Poll::Ready(Ok(Vec::new()));
        };
        let done = ready!(Pin::new(job).poll(cx));
        self.job = None;
        Poll::Ready(done.map_err(io::Error::other).and_then(|done| done))
    }
}

/// A pool job: waits in `poll(2)` for `file` or for `cancelled`, and
/// reads only if `file` is ready, so that the thread is never stuck in a
/// `read` that a cancel cannot end.
fn read_unless_cancelled(file: &File, cancelled: &PipeReader) -> io::Result<Vec<u8>> {
    loop {
        let mut fds = [
            PollFd::new(file, PollFlags::IN),
            PollFd::new(cancelled, PollFlags::IN),
        ];
        match poll(&mut fds, None) {
            Err(rustix::io::Errno::INTR) => continue,
            Err(err) => return Err(err.into()),
            Ok(_) => {}
        }
        if !fds[1].revents().is_empty() {
            return Err(io::Error::new(
                io::ErrorKind::Interrupted,
                "the standard stream was dropped while a read waited",
            ));
        }
        if !fds[0].revents().is_empty() {
            let mut buf = vec![0; CHUNK];
            let n = loop {
                match (&*file).read(&mut buf) {
                    Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                    done => break done?,
                }
            };
            buf.truncate(n);
            return Ok(buf);
        }
    }
}

impl AsyncRead for Stdin {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        self.io.poll_read(cx, buf)
    }
}

macro_rules! writer {
    ($name:ident) => {
        impl AsyncWrite for $name {
            fn poll_write(
                mut self: Pin<&mut Self>,
                cx: &mut Context<'_>,
                buf: &[u8],
            ) -> Poll<io::Result<usize>> {
                self.io.poll_write(cx, buf)
            }

            fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
                self.io.poll_flush(cx)
            }

            /// As `poll_flush`: the descriptor stays open.
            fn poll_close(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
                self.poll_flush(cx)
            }
        }
    };
}

writer!(Stdout);
writer!(Stderr);
