//! `Command` and `Child`: `std::process` with its pipes and its exit on the
//! loop.

use std::ffi::OsStr;
use std::fmt;
use std::future::poll_fn;
use std::io;
use std::os::fd::OwnedFd;
use std::path::Path;
use std::pin::Pin;
use std::process::{ExitStatus, Output, Stdio};
use std::task::{Context, Poll, ready};

use futures_io::AsyncRead;
use ioloop_runtime::Handle;
use ioloop_signal::{Signal, SignalKind};

use crate::{AsyncFd, ChildStderr, ChildStdin, ChildStdout};

/// A process to start: `std::process::Command`, whose child is a [`Child`]
/// with futures-io pipes and an exit to await (asyncio's
/// `create_subprocess_exec`, tokio's `process::Command`).
///
/// # Examples
///
/// ```
/// use ioloop::io::StreamReader;
/// use ioloop::process::{Command, Stdio};
///
/// ioloop::block_on(async {
///     let mut child = Command::new("seq").arg("3").stdout(Stdio::piped()).spawn()?;
///     let mut lines = StreamReader::new(child.stdout.take().unwrap());
///     let mut sum = 0;
///     while let Some(line) = lines.read_line().await? {
///         sum += std::str::from_utf8(line).unwrap().trim_end().parse::<u32>().unwrap();
///     }
///     assert_eq!(sum, 6);
///     assert!(child.wait().await?.success());
///     Ok::<_, std::io::Error>(())
/// })
/// .unwrap();
/// ```
#[doc(alias = "create_subprocess_exec")]
pub struct Command {
    std: std::process::Command,
    kill_on_drop: bool,
    /// The standard streams the caller set, which `output` leaves alone.
    set: [bool; 3],
    /// Wait for exit with SIGCHLD even where the kernel has pidfds: the
    /// fallback's own tests.
    sigchld: bool,
}

impl Command {
    /// A command to run `program`, found in `PATH` if it has no `/`, with
    /// no arguments, the parent's environment, directory and standard
    /// streams.
    pub fn new(program: impl AsRef<OsStr>) -> Command {
        Command::from(std::process::Command::new(program))
    }

    /// Adds an argument.
    pub fn arg(&mut self, arg: impl AsRef<OsStr>) -> &mut Command {
        self.std.arg(arg);
        self
    }

    /// Adds arguments.
    pub fn args<I: IntoIterator<Item = S>, S: AsRef<OsStr>>(&mut self, args: I) -> &mut Command {
        self.std.args(args);
        self
    }

    /// Sets an environment variable.
    pub fn env(&mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> &mut Command {
        self.std.env(key, value);
        self
    }

    /// Sets environment variables.
    pub fn envs<I, K, V>(&mut self, vars: I) -> &mut Command
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<OsStr>,
        V: AsRef<OsStr>,
    {
        self.std.envs(vars);
        self
    }

    /// Removes an environment variable.
    pub fn env_remove(&mut self, key: impl AsRef<OsStr>) -> &mut Command {
        self.std.env_remove(key);
        self
    }

    /// Starts from an empty environment.
    pub fn env_clear(&mut self) -> &mut Command {
        self.std.env_clear();
        self
    }

    /// Sets the working directory.
    pub fn current_dir(&mut self, dir: impl AsRef<Path>) -> &mut Command {
        self.std.current_dir(dir);
        self
    }

    /// The child's standard input: [`Stdio::inherit`] (the default),
    /// [`Stdio::null`], [`Stdio::piped`] (then [`Child::stdin`]), or another
    /// child's pipe ([`ChildStdout::into_stdio`]).
    pub fn stdin(&mut self, cfg: impl Into<Stdio>) -> &mut Command {
        self.std.stdin(cfg);
        self.set[0] = true;
        self
    }

    /// The child's standard output, as [`stdin`](Self::stdin).
    pub fn stdout(&mut self, cfg: impl Into<Stdio>) -> &mut Command {
        self.std.stdout(cfg);
        self.set[1] = true;
        self
    }

    /// The child's standard error, as [`stdin`](Self::stdin).
    pub fn stderr(&mut self, cfg: impl Into<Stdio>) -> &mut Command {
        self.std.stderr(cfg);
        self.set[2] = true;
        self
    }

    /// Kill the child (SIGKILL) when its [`Child`] is dropped before it
    /// exited, as tokio's `kill_on_drop`. Off by default: a dropped child
    /// runs on, and is still reaped (see [`Child`]).
    pub fn kill_on_drop(&mut self, kill: bool) -> &mut Command {
        self.kill_on_drop = kill;
        self
    }

    /// Learn the child's exit from SIGCHLD even where the kernel has
    /// pidfds: what a kernel before Linux 5.3 gets, for its tests.
    #[doc(hidden)]
    pub fn wait_with_sigchld(&mut self, yes: bool) -> &mut Command {
        self.sigchld = yes;
        self
    }

    /// The `std::process::Command` inside, for what this type does not
    /// mirror (`uid`, `pre_exec`, `process_group`, ...).
    pub fn as_std_mut(&mut self) -> &mut std::process::Command {
        &mut self.std
    }

    /// Starts the child, in the runtime running on this thread, whose
    /// reactor watches its pipes and its exit.
    ///
    /// # Errors
    ///
    /// - [`io::ErrorKind::NotFound`] naming the program when there is no
    ///   such program (or directory);
    /// - outside an ioloop runtime;
    /// - what `fork`, `exec` or `pipe` say (out of processes or
    ///   descriptors). A child started before such an error is killed and
    ///   reaped.
    pub fn spawn(&mut self) -> io::Result<Child> {
        let handle = Handle::try_current().ok_or_else(|| {
            io::Error::other("a child process was started outside an ioloop runtime")
        })?;
        let mut std = self.std.spawn().map_err(|err| {
            // The OS's error, of its kind (`NotFound` for a missing program
            // or directory), named: std's says only "No such file or
            // directory", which leaves a reader to guess which. A failure
            // of `exec` itself (not executable, a bad interpreter line)
            // comes here too, from the child, before `spawn` returns.
            let program = self.std.get_program().to_string_lossy();
            io::Error::new(err.kind(), format!("{program}: {err}"))
            // (No other cleanup: no child exists on this path.)
        })?;
        // Anything that fails from here on leaves a child running: it is
        // killed and reaped before the error is returned.
        let pipes = (|| {
            Ok::<_, io::Error>((
                std.stdin.take().map(ChildStdin::new).transpose()?,
                std.stdout.take().map(ChildStdout::new).transpose()?,
                std.stderr.take().map(ChildStderr::new).transpose()?,
                Exit::new(std.id(), self.sigchld)?,
            ))
        })();
        let (stdin, stdout, stderr, exit) = match pipes {
            Ok(pipes) => pipes,
            Err(err) => {
                let _ = std.kill();
                let _ = std.wait();
                return Err(err);
            }
        };
        log::debug!(
            "ioloop: started child {} ({:?})",
            std.id(),
            self.std.get_program()
        );
        Ok(Child {
            stdin,
            stdout,
            stderr,
            inner: Some(Inner {
                std,
                exit,
                handle,
                killed: false,
                reaped: false,
            }),
            kill_on_drop: self.kill_on_drop,
        })
    }

    /// Starts the child and waits for it, collecting its standard output
    /// and error (piped unless set; stdin is null unless set), both read
    /// at once: a child that fills one pipe while the other is read does
    /// not stall. asyncio's `communicate()`.
    ///
    /// # Errors
    ///
    /// As [`spawn`](Self::spawn), and a failed read of either pipe (the
    /// child is then reaped in the background).
    pub async fn output(&mut self) -> io::Result<Output> {
        let streams: [fn() -> Stdio; 3] = [Stdio::null, Stdio::piped, Stdio::piped];
        let set: [fn(&mut std::process::Command, Stdio) -> &mut std::process::Command; 3] = [
            std::process::Command::stdin,
            std::process::Command::stdout,
            std::process::Command::stderr,
        ];
        for ((make, set), given) in streams.iter().zip(set).zip(self.set) {
            if !given {
                set(&mut self.std, make());
            }
        }
        let mut child = self.spawn()?;
        let (mut stdout, mut stderr) = (child.stdout.take(), child.stderr.take());
        let (mut out, mut err) = (Vec::new(), Vec::new());
        poll_fn(|cx| {
            let a = poll_read_all(cx, stdout.as_mut(), &mut out)?;
            let b = poll_read_all(cx, stderr.as_mut(), &mut err)?;
            if a.is_ready() {
                stdout = None;
            }
            if b.is_ready() {
                stderr = None;
            }
            if a.is_ready() && b.is_ready() {
                Poll::Ready(Ok::<_, io::Error>(()))
            } else {
                Poll::Pending
            }
        })
        .await?;
        let status = child.wait().await?;
        Ok(Output {
            status,
            stdout: out,
            stderr: err,
        })
    }

    /// Starts the child with the parent's standard streams (unless set)
    /// and waits for its exit.
    ///
    /// # Errors
    ///
    /// As [`spawn`](Self::spawn).
    pub async fn status(&mut self) -> io::Result<ExitStatus> {
        let mut child = self.spawn()?;
        child.wait().await
    }
}

/// Reads `reader` to its end into `buf` (`Ready` at once for no reader).
fn poll_read_all<R: AsyncRead + Unpin>(
    cx: &mut Context<'_>,
    reader: Option<&mut R>,
    buf: &mut Vec<u8>,
) -> Poll<io::Result<()>> {
    let Some(reader) = reader else {
        return Poll::Ready(Ok(()));
    };
    const CHUNK: usize = 16 * 1024;
    loop {
        let len = buf.len();
        buf.resize(len + CHUNK, 0);
        let read = Pin::new(&mut *reader).poll_read(cx, &mut buf[len..]);
        // What was read stays; the rest of the chunk goes.
        let n = if let Poll::Ready(Ok(n)) = read { n } else { 0 };
        buf.truncate(len + n);
        if ready!(read)? == 0 {
            return Poll::Ready(Ok(()));
        }
    }
}

impl From<std::process::Command> for Command {
    /// Takes a `std` command as it is. Streams it set are not known to be
    /// set: [`output`](Command::output) pipes stdout and stderr and nulls
    /// stdin.
    fn from(std: std::process::Command) -> Command {
        Command {
            std,
            kill_on_drop: false,
            set: [false; 3],
            sigchld: false,
        }
    }
}

impl fmt::Debug for Command {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.std, f)
    }
}

/// A running (or exited, not yet awaited) child process.
///
/// Its exit is learned on the loop, with no thread per child: from a pidfd
/// registered with the reactor (Linux 5.3 and later), else from SIGCHLD,
/// after which the child is asked with `waitpid` whether it was the one.
///
/// Dropping a `Child` that has not been awaited never leaves a zombie: it
/// is killed first if [`Command::kill_on_drop`] said so, and a task of its
/// runtime waits for it and reaps it. If that runtime has shut down, or
/// shuts down before the child exits, the child is reaped then if it has
/// exited (at once, if it was killed on drop), else left to the system's
/// init process to reap once this process exits.
pub struct Child {
    /// The pipe to the child's standard input, if it was piped.
    pub stdin: Option<ChildStdin>,
    /// The pipe from the child's standard output, if it was piped.
    pub stdout: Option<ChildStdout>,
    /// The pipe from the child's standard error, if it was piped.
    pub stderr: Option<ChildStderr>,
    /// `None` once dropped.
    inner: Option<Inner>,
    kill_on_drop: bool,
}

/// What a child needs to be waited for: the `std` child (which knows its
/// pid and keeps its status once reaped), and how its exit is learned.
struct Inner {
    std: std::process::Child,
    exit: Exit,
    /// The runtime that reaps it once dropped.
    handle: Handle,
    /// `kill` was called: a reap at shutdown may wait for it.
    killed: bool,
    /// `wait` or `try_wait` has returned its status: its pid may be
    /// another process's now.
    reaped: bool,
}

/// How a child's exit reaches the loop.
enum Exit {
    /// Readable once the process has exited.
    Pidfd(AsyncFd<OwnedFd>),
    /// Every SIGCHLD the process receives, from the child or not.
    Sigchld(Signal),
}

impl Exit {
    fn new(pid: u32, sigchld: bool) -> io::Result<Exit> {
        #[cfg(any(target_os = "linux", target_os = "android"))]
        if !sigchld {
            use rustix::process::{Pid, PidfdFlags, pidfd_open};
            let pid = Pid::from_raw(pid as i32).ok_or_else(|| io::Error::other("pid 0"))?;
            match pidfd_open(pid, PidfdFlags::empty()) {
                Ok(fd) => return Ok(Exit::Pidfd(AsyncFd::new(fd)?)),
                // Before Linux 5.3: SIGCHLD, below.
                Err(rustix::io::Errno::NOSYS) => {}
                Err(err) => return Err(err.into()),
            }
        }
        let _ = (pid, sigchld);
        // Listening before the first `try_wait`: an exit between the two is
        // not missed.
        Ok(Exit::Sigchld(Signal::new(SignalKind::child())?))
    }
}

impl Inner {
    /// `Ready` with the status once the child has exited (reaping it).
    fn poll_wait(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<ExitStatus>> {
        loop {
            if let Some(status) = self.std.try_wait()? {
                self.reaped = true;
                return Poll::Ready(Ok(status));
            }
            match &mut self.exit {
                Exit::Pidfd(fd) => {
                    let event = ready!(fd.poll_read_ready(cx))?;
                    // Readiness a pidfd reports before the exit (a fresh
                    // registration's) is used up; a real exit keeps it, and
                    // an exit since the check raised a newer event, which
                    // the clear leaves.
                    fd.clear_readiness(event);
                }
                Exit::Sigchld(signal) => ready!(signal.poll_recv(cx))?,
            }
        }
    }
}

impl Child {
    fn inner(&mut self) -> &mut Inner {
        self.inner
            .as_mut()
            .expect("a Child's inner is only taken as it drops")
    }

    /// The child's process id, until [`wait`](Self::wait) or
    /// [`try_wait`](Self::try_wait) has returned its status (after which
    /// the id may belong to another process): then `None`. It never reaps.
    pub fn id(&self) -> Option<u32> {
        let inner = self.inner.as_ref()?;
        (!inner.reaped).then(|| inner.std.id())
    }

    /// Waits for the child to exit and returns its status; the child is
    /// reaped. Closes [`stdin`](Self::stdin) first, as `std` does, so a
    /// child reading it to its end can finish. Awaiting again returns the
    /// same status.
    ///
    /// # Errors
    ///
    /// Fails once the runtime has shut down.
    ///
    /// # Cancellation
    ///
    /// Cancel-safe: a dropped wait loses nothing, and the next one (or the
    /// `Child`'s drop) reaps the child.
    pub async fn wait(&mut self) -> io::Result<ExitStatus> {
        self.stdin = None;
        poll_fn(|cx| self.inner().poll_wait(cx)).await
    }

    /// The status if the child has exited (reaping it), else `None`, at
    /// once.
    ///
    /// # Errors
    ///
    /// What `waitpid` says.
    pub fn try_wait(&mut self) -> io::Result<Option<ExitStatus>> {
        let inner = self.inner();
        let status = inner.std.try_wait()?;
        inner.reaped |= status.is_some();
        Ok(status)
    }

    /// Sends SIGKILL, unless the child's exit was already awaited (then it
    /// does nothing: its id may be another process's now). Await
    /// [`wait`](Self::wait) to reap it: its status then says the signal.
    ///
    /// # Errors
    ///
    /// What `kill` says.
    pub fn kill(&mut self) -> io::Result<()> {
        let inner = self.inner();
        inner.std.kill()?;
        inner.killed = true;
        Ok(())
    }
}

impl fmt::Debug for Child {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let inner = self.inner.as_ref();
        f.debug_struct("Child")
            .field("pid", &inner.map(|i| i.std.id()))
            .field("stdin", &self.stdin)
            .field("stdout", &self.stdout)
            .field("stderr", &self.stderr)
            .field("kill_on_drop", &self.kill_on_drop)
            .finish()
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        let Some(mut inner) = self.inner.take() else {
            return;
        };
        if let Ok(Some(_)) = inner.std.try_wait() {
            return;
        }
        if self.kill_on_drop {
            match inner.std.kill() {
                Ok(()) => inner.killed = true,
                Err(err) => log::warn!("ioloop: killing child {}: {err}", inner.std.id()),
            }
        }
        let handle = inner.handle.clone();
        // A detached task reaps it; if the runtime is gone, `Reap`'s drop
        // does what it can.
        drop(handle.spawn(Reap(inner)));
    }
}

/// A dropped child's reaper, run as a task of its runtime.
struct Reap(Inner);

impl std::future::Future for Reap {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        match ready!(self.0.poll_wait(cx)) {
            Ok(status) => log::debug!("ioloop: reaped child {}: {status}", self.0.std.id()),
            Err(err) => log::warn!("ioloop: waiting for child {}: {err}", self.0.std.id()),
        }
        Poll::Ready(())
    }
}

impl Drop for Reap {
    /// Runs when the runtime shuts down with the child still running (or
    /// drops the task unpolled): a killed child is reaped now, as SIGKILL
    /// ends it at once; another is reaped if it has exited.
    fn drop(&mut self) {
        let std = &mut self.0.std;
        let reaped = match std.try_wait() {
            Ok(Some(_)) => true,
            _ if self.0.killed => std.wait().is_ok(),
            _ => false,
        };
        if !reaped {
            log::warn!(
                "ioloop: child {} still running as its runtime shut down: init reaps it \
                 once this process exits",
                std.id()
            );
        }
    }
}
