//! `io::stdin()`, `stdout()`, `stderr()`: read and written on the loop
//! when the descriptor allows (a pipe, a terminal), on the blocking pool
//! otherwise (a regular file, `/dev/null`, a socket); a read with nothing
//! to read is cancelled by a timeout and by the runtime's shutdown, in
//! under 100 ms, on a pipe, a pseudo terminal and the pool alike.
//!
//! Each case runs this test binary again as a child
//! (`stdio::child_case`, which does nothing unless `IOLOOP_STDIO_CASE`
//! names a case), with the standard stream under test set up by the
//! parent; the child reports on stderr between `<<` and `>>`.

use std::fs::File;
use std::io::{self, Read, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use ioloop::io::{AsyncWriteExt, StreamReader, StreamWriter};
use ioloop::time::timeout;
use testkit::account;

/// What the child does, by `IOLOOP_STDIO_CASE`.
#[test]
fn child_case() -> io::Result<()> {
    let Ok(case) = std::env::var("IOLOOP_STDIO_CASE") else {
        return Ok(());
    };
    let report = match case.as_str() {
        "timeout" => ioloop::block_on(async {
            let mut stdin = ioloop::io::stdin()?;
            let mode = format!("{stdin:?}");
            let start = Instant::now();
            let mut buf = [0; 16];
            let read = timeout(
                Duration::from_millis(20),
                ioloop::io::AsyncReadExt::read(&mut stdin, &mut buf),
            )
            .await;
            assert!(read.is_err(), "read {read:?}");
            // The read can be tried again: nothing was lost or broken.
            let again = timeout(
                Duration::from_millis(20),
                ioloop::io::AsyncReadExt::read(&mut stdin, &mut buf),
            )
            .await;
            assert!(again.is_err());
            Ok::<_, io::Error>(format!(
                "{} {}",
                mode_of(&mode),
                start.elapsed().as_millis()
            ))
        })?,
        // The grace period (10 ms) passes with the read still pending;
        // then the runtime drops the task that holds the stream, which
        // ends the read, and on the pool its thread's job.
        "shutdown" | "drop" => {
            let rt = ioloop::Runtime::new()?;
            let mode = rt.block_on(async {
                let mut stdin = ioloop::io::stdin()?;
                let mode = format!("{stdin:?}");
                drop(ioloop::spawn(async move {
                    let mut buf = [0; 16];
                    let _ = ioloop::io::AsyncReadExt::read(&mut stdin, &mut buf).await;
                    unreachable!("nothing is ever sent");
                }));
                ioloop::time::sleep(Duration::from_millis(20)).await;
                Ok::<_, io::Error>(mode)
            })?;
            let start = Instant::now();
            if case == "drop" {
                drop(rt);
            } else {
                let report = rt.shutdown_timeout(Duration::from_millis(10));
                assert_eq!(report.cancelled_tasks, 1);
            }
            let stopped = start.elapsed().as_millis();
            // No thread left behind: a pool read's thread returns too.
            while account::runtime_thread_names()
                .iter()
                .any(|t| t.starts_with("ioloop-blocking"))
            {
                assert!(
                    start.elapsed() < Duration::from_secs(5),
                    "a pool thread stays"
                );
                std::thread::sleep(Duration::from_millis(1));
            }
            format!(
                "{} {stopped} {}",
                mode_of(&mode),
                start.elapsed().as_millis()
            )
        }
        "lines" => ioloop::block_on(async {
            let stdin = ioloop::io::stdin()?;
            let mode = format!("{stdin:?}");
            let mut lines = StreamReader::new(stdin);
            let mut out = StreamWriter::new(ioloop::io::stdout()?);
            let (mut count, mut sum) = (0u64, 0u64);
            out.write(b"<<");
            while let Some(line) = lines.read_line().await? {
                sum += std::str::from_utf8(line)
                    .unwrap()
                    .trim()
                    .parse::<u64>()
                    .unwrap();
                count += 1;
                out.write(line);
                out.write(b"\n");
                out.drain().await?;
            }
            out.write(b">>");
            out.flush().await?;
            let mut err = ioloop::io::stderr()?;
            err.write_all(b"to stderr").await?;
            err.flush().await?;
            err.close().await?;
            Ok::<_, io::Error>(format!("{} {count} {sum}", mode_of(&mode)))
        })?,
        // One write of each size to a stdout on the pool: what each
        // call takes (64 KiB at most), as the report.
        "write_sizes" => ioloop::block_on(async {
            let mut out = ioloop::io::stdout()?;
            let mode = format!("{out:?}");
            let mut taken = Vec::new();
            for size in [65_535, 65_536, 65_537] {
                taken.push(out.write(&vec![b'w'; size]).await?.to_string());
            }
            out.flush().await?;
            Ok::<_, io::Error>(format!("{} {}", mode_of(&mode), taken.join(" ")))
        })?,
        // One read with a 1 MiB buffer from a stdin on the pool, then the
        // rest: the first read's count (64 KiB at most), and the total.
        "read_sizes" => ioloop::block_on(async {
            let mut stdin = ioloop::io::stdin()?;
            let mode = format!("{stdin:?}");
            let mut buf = vec![0; 1 << 20];
            let first = ioloop::io::AsyncReadExt::read(&mut stdin, &mut buf).await?;
            let mut rest = Vec::new();
            ioloop::io::AsyncReadExt::read_to_end(&mut stdin, &mut rest).await?;
            Ok::<_, io::Error>(format!("{} {first} {}", mode_of(&mode), first + rest.len()))
        })?,
        // A read that fails (stdin a directory: `EISDIR`) returns its
        // error, on the pool, and is not tried again forever.
        "read_error" => ioloop::block_on(async {
            let mut stdin = ioloop::io::stdin()?;
            let mode = format!("{stdin:?}");
            let mut buf = [0; 16];
            let read = timeout(
                Duration::from_secs(5),
                ioloop::io::AsyncReadExt::read(&mut stdin, &mut buf),
            )
            .await?;
            let err = read.expect_err("a directory cannot be read");
            Ok::<_, io::Error>(format!(
                "{} {}",
                mode_of(&mode),
                err.raw_os_error().unwrap_or(0)
            ))
        })?,
        // A write on the pool is reported taken at once; its error (stdout
        // a file opened read-only: EBADF) comes with the flush.
        "write_error" => ioloop::block_on(async {
            let mut out = ioloop::io::stdout()?;
            let mode = format!("{out:?}");
            assert_eq!(out.write(b"x").await?, 1);
            let err = out.flush().await.expect_err("the write failed");
            Ok::<_, io::Error>(format!(
                "{} {}",
                mode_of(&mode),
                err.raw_os_error().unwrap_or(0)
            ))
        })?,
        // A byte at a time: every byte, in order, from a stdin on the pool.
        "bytes" => ioloop::block_on(async {
            let mut stdin = ioloop::io::stdin()?;
            let mode = format!("{stdin:?}");
            let (mut count, mut sum) = (0u64, 0u64);
            let mut byte = [0; 1];
            while ioloop::io::AsyncReadExt::read(&mut stdin, &mut byte).await? == 1 {
                sum = sum.wrapping_mul(31).wrapping_add(u64::from(byte[0]));
                count += 1;
            }
            Ok::<_, io::Error>(format!("{} {count} {sum}", mode_of(&mode)))
        })?,
        other => panic!("no case {other}"),
    };
    eprint!("<<{report}>>");
    Ok(())
}

fn mode_of(debug: &str) -> &'static str {
    if debug.contains("Loop") {
        "loop"
    } else {
        "pool"
    }
}

/// Runs `case` in a child whose stdin and stdout are `stdin` and `stdout`;
/// returns its report and its standard output (its standard error is
/// the harness's and the report's).
fn child(case: &str, stdin: Stdio, stdout: Stdio) -> io::Result<(String, Vec<u8>)> {
    let out = Command::new(std::env::current_exe()?)
        .args([
            "--exact",
            "stdio::child_case",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("IOLOOP_STDIO_CASE", case)
        .stdin(stdin)
        .stdout(stdout)
        .stderr(Stdio::piped())
        .output()?;
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{case}: {}\n{err}", out.status);
    let report = between(&err, "<<", ">>").unwrap_or_else(|| panic!("{case}: no report in {err}"));
    if case == "lines" {
        assert!(err.contains("to stderr"), "{err}");
    }
    eprintln!("{case}: {report}");
    Ok((report.to_string(), out.stdout))
}

fn between<'a>(text: &'a str, open: &str, close: &str) -> Option<&'a str> {
    let start = text.find(open)? + open.len();
    let end = start + text[start..].find(close)?;
    Some(&text[start..end])
}

/// Asserts a report of `mode` and times under 100 ms.
fn quick(report: &str, mode: &str) {
    let mut words = report.split(' ');
    assert_eq!(words.next(), Some(mode), "{report}");
    for ms in words {
        let ms: u128 = ms.parse().unwrap();
        assert!(ms < 100, "took {ms} ms: {report}");
    }
}

/// A pipe whose write end the parent holds and never writes to.
fn silent_pipe() -> io::Result<(Stdio, io::PipeWriter)> {
    let (reader, writer) = io::pipe()?;
    Ok((Stdio::from(reader), writer))
}

/// A pseudo terminal: the child gets its terminal end, the parent keeps
/// the controlling end, and never types.
fn pty() -> io::Result<(File, File)> {
    // SAFETY: plain libc calls on a descriptor this function owns;
    // `ptsname_r` writes at most `name.len()` bytes into `name`.
    unsafe {
        let master = libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY);
        if master < 0 || libc::grantpt(master) != 0 || libc::unlockpt(master) != 0 {
            return Err(io::Error::last_os_error());
        }
        let mut name = [0 as libc::c_char; 128];
        if libc::ptsname_r(master, name.as_mut_ptr(), name.len()) != 0 {
            return Err(io::Error::last_os_error());
        }
        let path = std::ffi::CStr::from_ptr(name.as_ptr())
            .to_str()
            .unwrap()
            .to_owned();
        let master = <File as std::os::fd::FromRawFd>::from_raw_fd(master);
        let slave = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)?;
        Ok((master, slave))
    }
}

#[test]
fn a_read_of_a_silent_pipe_is_cancelled_by_a_timeout_and_by_shutdown() -> io::Result<()> {
    let _serial = account::serial();
    for case in ["timeout", "shutdown", "drop"] {
        let (stdin, _writer) = silent_pipe()?;
        let (report, _) = child(case, stdin, Stdio::null())?;
        quick(&report, "loop");
    }
    Ok(())
}

#[test]
fn a_read_of_a_silent_terminal_is_cancelled_by_a_timeout_and_by_shutdown() -> io::Result<()> {
    let _serial = account::serial();
    for case in ["timeout", "shutdown", "drop"] {
        let (_master, slave) = pty()?;
        let (report, _) = child(case, Stdio::from(slave), Stdio::null())?;
        quick(&report, "loop");
    }
    Ok(())
}

/// A socket cannot be opened again through `/proc`: it is read on the
/// blocking pool, where a read waits in `poll` for the socket or the
/// cancel pipe.
#[test]
fn a_read_on_the_pool_is_cancelled_by_a_timeout_and_by_shutdown() -> io::Result<()> {
    let _serial = account::serial();
    for case in ["timeout", "shutdown", "drop"] {
        let (ours, theirs) = std::os::unix::net::UnixStream::pair()?;
        let (report, _) = child(
            case,
            Stdio::from(std::os::fd::OwnedFd::from(theirs)),
            Stdio::null(),
        )?;
        quick(&report, "pool");
        drop(ours);
    }
    Ok(())
}

/// Lines in through stdin and back out through stdout, from a pipe (on
/// the loop), a regular file and `/dev/null` (on the pool).
#[test]
fn lines_come_in_through_stdin_and_out_through_stdout_from_each_kind_of_source() -> io::Result<()> {
    let _serial = account::serial();
    let numbers: String = (1..=20_000).map(|i| format!("{i}\n")).collect();
    let payload = |out: &[u8]| {
        let out = String::from_utf8_lossy(out).into_owned();
        between(&out, "<<", ">>").map(str::to_owned)
    };
    // A pipe, written by a thread as the child reads.
    let (reader, mut writer) = io::pipe()?;
    let feed = std::thread::spawn({
        let numbers = numbers.clone();
        move || writer.write_all(numbers.as_bytes())
    });
    let (report, out) = child("lines", Stdio::from(reader), Stdio::piped())?;
    feed.join().unwrap()?;
    assert_eq!(report, "loop 20000 200010000");
    assert!(
        payload(&out).as_deref() == Some(numbers.as_str()),
        "stdout differs"
    );
    // A regular file.
    let path = std::env::temp_dir().join(format!("ioloop-stdin-{}", std::process::id()));
    std::fs::write(&path, &numbers)?;
    let (report, out) = child("lines", Stdio::from(File::open(&path)?), Stdio::piped())?;
    std::fs::remove_file(&path)?;
    assert_eq!(report, "pool 20000 200010000");
    assert!(
        payload(&out).as_deref() == Some(numbers.as_str()),
        "stdout differs"
    );
    // Nothing at all; stdout a regular file (the pool writes it).
    let path = std::env::temp_dir().join(format!("ioloop-stdout-{}", std::process::id()));
    let (report, _) = child("lines", Stdio::null(), Stdio::from(File::create(&path)?))?;
    let mut written = String::new();
    File::open(&path)?.read_to_string(&mut written)?;
    std::fs::remove_file(&path)?;
    assert_eq!(report, "pool 0 0");
    assert_eq!(payload(written.as_bytes()).as_deref(), Some(""));
    Ok(())
}

#[test]
fn outside_a_runtime_each_stream_is_an_error() {
    for err in [
        ioloop::io::stdin().map(drop).unwrap_err(),
        ioloop::io::stdout().map(drop).unwrap_err(),
        ioloop::io::stderr().map(drop).unwrap_err(),
    ] {
        assert!(
            err.to_string().contains("outside an ioloop runtime"),
            "{err}"
        );
    }
}

/// The pool's 64 KiB a call, at its edge: a write of 65,535 or 65,536
/// bytes is taken whole, one of 65,537 in part; a read returns at most
/// 65,536 of a file of 65,537, and whole files of 65,535 and 65,536.
#[test]
fn the_pools_64_kib_a_call_at_its_edge() -> io::Result<()> {
    let _serial = account::serial();
    let path = std::env::temp_dir().join(format!("ioloop-sizes-{}", std::process::id()));
    let (report, _) = child(
        "write_sizes",
        Stdio::null(),
        Stdio::from(File::create(&path)?),
    )?;
    assert_eq!(report, "pool 65535 65536 65536");
    // Beside the test harness's own lines, which go to stdout too.
    let written = std::fs::read(&path)?;
    assert_eq!(
        written.iter().filter(|&&b| b == b'w').count(),
        65_535 + 65_536 + 65_536
    );
    for (size, first) in [(65_535, 65_535), (65_536, 65_536), (65_537, 65_536)] {
        std::fs::write(&path, vec![b'r'; size])?;
        let (report, _) = child("read_sizes", Stdio::from(File::open(&path)?), Stdio::null())?;
        assert_eq!(report, format!("pool {first} {size}"));
    }
    // The largest, a byte at a time.
    let data: Vec<u8> = (0..65_537u32).map(|i| (i % 251) as u8).collect();
    std::fs::write(&path, &data)?;
    let sum = data.iter().fold(0u64, |sum, &b| {
        sum.wrapping_mul(31).wrapping_add(u64::from(b))
    });
    let (report, _) = child("bytes", Stdio::from(File::open(&path)?), Stdio::null())?;
    assert_eq!(report, format!("pool 65537 {sum}"));
    std::fs::remove_file(&path)?;
    Ok(())
}

#[test]
fn a_failed_read_on_the_pool_returns_its_error() -> io::Result<()> {
    let _serial = account::serial();
    let (report, _) = child("read_error", Stdio::from(File::open("/")?), Stdio::null())?;
    assert_eq!(report, format!("pool {}", libc::EISDIR));
    Ok(())
}

#[test]
fn a_failed_write_on_the_pool_is_returned_by_the_flush() -> io::Result<()> {
    let _serial = account::serial();
    let path = std::env::temp_dir().join(format!("ioloop-readonly-{}", std::process::id()));
    std::fs::write(&path, b"")?;
    let stdout = Stdio::from(File::open(&path)?);
    let result = child("write_error", Stdio::null(), stdout);
    std::fs::remove_file(&path)?;
    assert_eq!(result?.0, format!("pool {}", libc::EBADF));
    Ok(())
}
