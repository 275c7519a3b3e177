//! Helpers for the socket tests that watch a process: child processes that
//! re-run one test of this binary in another role, another process's CPU
//! time, and this process's open file descriptors.
//!
//! Use with `use testkit::net_proc;`.

use std::io::{self, BufRead, BufReader, Lines};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::time::Duration;

/// The name the test harness knows a test by, for `--exact`: the path of
/// the module that declares it (pass `module_path!()`) without its first
/// segment, the test binary's crate, then the function's name. Test `t` of
/// tests/net/tcp_emfile.rs is `tcp_emfile::t`.
pub fn test_name(module_path: &str, function: &str) -> String {
    match module_path.split_once("::") {
        Some((_binary, module)) => format!("{module}::{function}"),
        None => function.to_string(),
    }
}

/// Starts this test binary again, running only `test` (its full name, see
/// [`test_name`]; it must find `role_var` set and act as the child), with
/// piped stdin and stdout.
pub fn spawn_child(test: &str, role_var: &str) -> io::Result<Child> {
    Command::new(std::env::current_exe()?)
        .args(["--exact", test, "--nocapture", "--test-threads=1"])
        .env(role_var, "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
}

/// Returns `true` in the child started by [`spawn_child`].
pub fn is_child(role_var: &str) -> bool {
    std::env::var_os(role_var).is_some()
}

/// The child's stdout, line by line.
pub fn child_lines(child: &mut Child) -> Lines<BufReader<ChildStdout>> {
    BufReader::new(child.stdout.take().expect("stdout is piped")).lines()
}

/// Reads lines until one contains `tag`, and returns what follows it.
/// Other lines (the test harness's own output) are skipped.
///
/// # Errors
///
/// `UnexpectedEof` if the child's stdout ends first (it died).
pub fn expect_line(lines: &mut Lines<BufReader<ChildStdout>>, tag: &str) -> io::Result<String> {
    for line in lines {
        let line = line?;
        // Not necessarily at the start: the harness prints "test NAME ... "
        // without a newline before the test's first output.
        if let Some(at) = line.find(tag) {
            return Ok(line[at + tag.len()..].trim().to_string());
        }
    }
    Err(io::Error::new(
        io::ErrorKind::UnexpectedEof,
        format!("the child exited before printing {tag:?}"),
    ))
}

/// CPU time (user + system) that process `pid` has used, from
/// `/proc/<pid>/stat`, in clock ticks of 10 ms.
pub fn cpu_time_of(pid: u32) -> io::Result<Duration> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
    // The command name (field 2) may contain spaces: count fields after
    // its closing parenthesis. utime and stime are fields 14 and 15.
    let after_name = &stat[stat.rfind(')').expect("comm field") + 2..];
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    Ok(Duration::from_millis(ticks * 10))
}

/// The numbers of this process's open file descriptors, not counting the
/// one used to list them.
pub fn open_fds() -> io::Result<Vec<i32>> {
    let mut fds = Vec::new();
    for entry in std::fs::read_dir("/proc/self/fd")? {
        let name = entry?.file_name();
        fds.push(name.to_string_lossy().parse::<i32>().expect("fd number"));
    }
    // The listing's own descriptor is in it, and is closed by now: it is
    // the only one that no longer exists.
    fds.retain(|fd| std::fs::symlink_metadata(format!("/proc/self/fd/{fd}")).is_ok());
    fds.sort_unstable();
    Ok(fds)
}

/// Sets this process's soft RLIMIT_NOFILE to `soft` (at most the hard
/// limit): a child lowers it to run out of descriptors on purpose.
pub fn set_fd_limit(soft: u64) -> io::Result<()> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `limit` is a valid, writable rlimit for the call's duration.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        return Err(io::Error::last_os_error());
    }
    limit.rlim_cur = soft.min(limit.rlim_max);
    // SAFETY: `limit` is a valid rlimit; lowering the soft limit affects
    // only this (child) process.
    if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &limit) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}
