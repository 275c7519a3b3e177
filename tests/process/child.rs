//! `Command` and `Child`: lines read as they come, both pipes collected at
//! once, input written and closed, and each failure's error.

use std::io::{self, ErrorKind};
use std::time::Duration;

use ioloop::io::{AsyncReadExt, AsyncWriteExt, StreamReader, StreamWriter};
use ioloop::process::{Command, Stdio};
use testkit::{account, util};

const LIMIT: Duration = Duration::from_secs(30);

/// Runs `f` on a fresh runtime, failing the test if it hangs, one test
/// at a time (see main.rs).
pub(crate) fn run(f: impl AsyncFnOnce() -> io::Result<()> + Send + 'static) -> io::Result<()> {
    let _serial = account::serial();
    util::within(LIMIT, || ioloop::block_on(async { f().await }))
}

#[test]
fn the_lines_of_seq_1_100000_are_read_as_they_come_and_add_up() -> io::Result<()> {
    run(async || {
        let mut child = Command::new("seq")
            .args(["1", "100000"])
            .stdout(Stdio::piped())
            .spawn()?;
        let mut lines = StreamReader::new(child.stdout.take().unwrap());
        let (mut count, mut sum) = (0u64, 0u64);
        while let Some(line) = lines.read_line().await? {
            let line = std::str::from_utf8(line).expect("seq writes ASCII");
            sum += line.trim_end().parse::<u64>().expect("a number a line");
            count += 1;
        }
        assert_eq!((count, sum), (100_000, 100_000 * 100_001 / 2));
        let status = child.wait().await?;
        assert!(status.success(), "{status}");
        Ok(())
    })
}

#[test]
fn output_collects_10_mb_on_each_pipe_even_when_stderr_fills_first() -> io::Result<()> {
    run(async || {
        // stderr first: a reader that took stdout to its end before
        // touching stderr would wait forever on a child blocked on a full
        // stderr pipe.
        let script = "head -c 10000000 /dev/zero >&2; head -c 10000000 /dev/zero; \
                      head -c 1 /dev/zero >&2; exit 7";
        let out = Command::new("sh").args(["-c", script]).output().await?;
        assert_eq!(out.stdout.len(), 10_000_000);
        assert_eq!(out.stderr.len(), 10_000_001);
        assert!(out.stdout.iter().chain(&out.stderr).all(|&b| b == 0));
        assert_eq!(out.status.code(), Some(7));
        Ok(())
    })
}

/// The read syscalls this process has made (`syscr` in /proc/self/io).
fn reads_made() -> u64 {
    let io = std::fs::read_to_string("/proc/self/io").expect("/proc/self/io");
    io.lines()
        .find_map(|l| l.strip_prefix("syscr: "))
        .and_then(|n| n.parse().ok())
        .expect("a syscr line")
}

/// `output` reads a pipe 16 KiB at a time: 1 MiB takes about 64 reads (a
/// pipe hands out what it holds, up to the chunk), not one per kilobyte.
#[test]
fn output_reads_a_pipe_16_kib_at_a_time() -> io::Result<()> {
    run(async || {
        let before = reads_made();
        let out = Command::new("head")
            .args(["-c", "1048576", "/dev/zero"])
            .output()
            .await?;
        let reads = reads_made() - before;
        assert_eq!(out.stdout.len(), 1 << 20);
        assert!(out.status.success());
        // 64 at least; a few more for short reads, the stderr pipe's end,
        // and the loop's own; 1 KiB chunks would take over 1,000.
        assert!((64..400).contains(&reads), "{reads} reads for 1 MiB");
        Ok(())
    })
}

/// `output` waits for both pipes to end, whichever ends first: one closed
/// at once and the other written 200 ms later is still collected whole.
#[test]
fn output_waits_for_the_pipe_that_ends_last() -> io::Result<()> {
    run(async || {
        for (first, last) in [(1, 2), (2, 1)] {
            let script = format!("exec {first}>&-; sleep 0.2; echo late >&{last}");
            let out = Command::new("sh").args(["-c", &script]).output().await?;
            assert!(out.status.success(), "{script}: {}", out.status);
            let (closed, late) = if first == 1 {
                (&out.stdout, &out.stderr)
            } else {
                (&out.stderr, &out.stdout)
            };
            assert!(closed.is_empty(), "{script}");
            assert_eq!(late, b"late\n", "{script}");
        }
        Ok(())
    })
}

#[test]
fn output_leaves_the_streams_the_caller_set_and_nulls_stdin() -> io::Result<()> {
    run(async || {
        // stdin null: `cat` reads end of file at once and exits.
        let out = Command::new("cat").output().await?;
        assert!(out.status.success());
        assert!(out.stdout.is_empty() && out.stderr.is_empty());
        // stdout set to null by the caller: nothing collected.
        let out = Command::new("echo")
            .arg("hi")
            .stdout(Stdio::null())
            .output()
            .await?;
        assert!(out.stdout.is_empty());
        let out = Command::new("echo").arg("hi").output().await?;
        assert_eq!(out.stdout, b"hi\n");
        Ok(())
    })
}

#[test]
fn status_runs_the_child_and_returns_its_exit() -> io::Result<()> {
    run(async || {
        let status = Command::new("sh").args(["-c", "exit 3"]).status().await?;
        assert_eq!(status.code(), Some(3));
        assert!(Command::new("true").status().await?.success());
        Ok(())
    })
}

#[test]
fn lines_written_to_cat_come_back_and_closing_stdin_ends_it() -> io::Result<()> {
    run(async || {
        let mut child = Command::new("cat")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()?;
        let mut writer = StreamWriter::new(child.stdin.take().unwrap());
        let mut reader = StreamReader::new(child.stdout.take().unwrap());
        for i in 0..1000 {
            writer.write(format!("line {i}\n").as_bytes());
            writer.drain().await?;
            let line = reader.read_line().await?.expect("cat echoes each line");
            assert_eq!(line, format!("line {i}").as_bytes());
        }
        // A large write that cannot fit the pipe at once: drained as cat reads.
        let big = vec![b'x'; 1 << 20];
        writer.write(&big);
        writer.write(b"\n");
        let read = ioloop::spawn(async move {
            reader.set_max_line_length(2 << 20);
            let line = reader.read_line().await?.unwrap();
            assert_eq!(line.len(), 1 << 20);
            Ok::<_, io::Error>(reader)
        });
        writer.drain().await?;
        let mut reader = read.await.expect("the reading task")?;
        writer.close().await?;
        let mut rest = Vec::new();
        reader.read_to_end(&mut rest).await?;
        assert!(rest.is_empty());
        assert!(child.wait().await?.success());
        Ok(())
    })
}

#[test]
fn a_missing_program_is_not_found_and_named() -> io::Result<()> {
    run(async || {
        let err = Command::new("ioloop-no-such-program").spawn().unwrap_err();
        assert_eq!(err.kind(), ErrorKind::NotFound);
        assert!(err.to_string().contains("ioloop-no-such-program"), "{err}");
        let err = Command::new("true")
            .current_dir("/ioloop/no/such/dir")
            .spawn()
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::NotFound);
        assert!(err.to_string().contains("true"), "{err}");
        Ok(())
    })
}

#[test]
fn spawning_outside_a_runtime_is_an_error() {
    let _serial = account::serial();
    let err = Command::new("true").spawn().unwrap_err();
    assert!(
        err.to_string().contains("outside an ioloop runtime"),
        "{err}"
    );
}

#[test]
fn writing_to_a_child_that_exited_is_a_broken_pipe() -> io::Result<()> {
    run(async || {
        let mut child = Command::new("true").stdin(Stdio::piped()).spawn()?;
        let mut stdin = child.stdin.take().unwrap();
        assert!(child.wait().await?.success());
        let err = stdin.write_all(b"anyone?").await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::BrokenPipe);
        Ok(())
    })
}

#[test]
fn a_closed_stdin_refuses_writes_and_closes_again_quietly() -> io::Result<()> {
    run(async || {
        let mut child = Command::new("cat")
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .spawn()?;
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(b"").await?;
        stdin.flush().await?;
        stdin.close().await?;
        stdin.close().await?;
        for err in [
            stdin.write_all(b"x").await.unwrap_err(),
            stdin.write(b"").await.unwrap_err(),
            stdin.flush().await.unwrap_err(),
        ] {
            assert_eq!(err.kind(), ErrorKind::BrokenPipe);
        }
        assert!(stdin.into_stdio().is_err());
        // cat read end of file and exited.
        assert!(child.wait().await?.success());
        Ok(())
    })
}

#[test]
fn a_pipeline_of_two_children_joined_by_a_pipe() -> io::Result<()> {
    run(async || {
        let mut seq = Command::new("seq")
            .arg("1000")
            .stdout(Stdio::piped())
            .spawn()?;
        let pipe = seq.stdout.take().unwrap().into_stdio()?;
        let out = Command::new("wc").arg("-l").stdin(pipe).output().await?;
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "1000");
        assert!(seq.wait().await?.success());
        // And the other way round: a child's stdin handed to another.
        let mut cat = Command::new("cat")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()?;
        let stdin = cat.stdin.take().unwrap().into_stdio()?;
        assert!(
            Command::new("echo")
                .arg("through")
                .stdout(stdin)
                .status()
                .await?
                .success()
        );
        let mut got = String::new();
        cat.stdout.take().unwrap().read_to_string(&mut got).await?;
        assert_eq!(got, "through\n");
        assert!(cat.wait().await?.success());
        Ok(())
    })
}

#[test]
fn environment_directory_and_arguments_reach_the_child() -> io::Result<()> {
    run(async || {
        let out = Command::new("sh")
            .args(["-c", "echo \"$A $B $HOME\"; pwd"])
            .env_clear()
            .env("A", "1")
            .envs([("B", "2"), ("HOME", "h")])
            .env_remove("HOME")
            .current_dir("/")
            .output()
            .await?;
        assert_eq!(String::from_utf8_lossy(&out.stdout), "1 2 \n/\n");
        let mut std = std::process::Command::new("echo");
        std.arg("from std");
        let mut cmd = Command::from(std);
        cmd.as_std_mut().arg("too");
        assert!(format!("{cmd:?}").contains("from std"));
        assert_eq!(cmd.output().await?.stdout, b"from std too\n");
        Ok(())
    })
}
