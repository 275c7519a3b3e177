//! A child's exit, awaited on the loop: codes and signals, `try_wait`,
//! `kill`, `id`, a wait raced by other tasks, and no thread per child, over
//! a pidfd and over SIGCHLD alike.

use std::io;
use std::os::unix::process::ExitStatusExt;
use std::time::Duration;

use ioloop::process::{Command, Stdio};
use ioloop::time::{sleep, timeout};
use testkit::account;

use crate::child::run;

/// The two ways a child's exit reaches the loop.
fn command(program: &str, sigchld: bool) -> Command {
    let mut command = Command::new(program);
    command.wait_with_sigchld(sigchld);
    command
}

fn a_child_killed_by_a_signal_reports_it(sigchld: bool) -> io::Result<()> {
    run(async move || {
        let mut child = command("sleep", sigchld).arg("100").spawn()?;
        let pid = child.id().expect("running");
        assert!(child.try_wait()?.is_none());
        // A wait that has to wait, cancelled: it loses nothing.
        assert!(
            timeout(Duration::from_millis(20), child.wait())
                .await
                .is_err()
        );
        child.kill()?;
        let status = child.wait().await?;
        assert_eq!(status.signal(), Some(libc::SIGKILL), "{status}");
        assert_eq!(status.code(), None);
        // Once awaited: the same status again, no id, and a kill that does
        // nothing (the pid may be another process's by now).
        assert_eq!(child.wait().await?, status);
        assert_eq!(child.try_wait()?, Some(status));
        assert_eq!(child.id(), None);
        child.kill()?;
        // An exit seen by `try_wait` alone takes the id away too.
        let mut quick = command("true", sigchld).spawn()?;
        assert!(quick.id().is_some());
        let status = loop {
            match quick.try_wait()? {
                Some(status) => break status,
                None => sleep(Duration::from_millis(1)).await,
            }
        };
        assert!(status.success());
        assert_eq!(quick.id(), None);
        // Killed from outside: SIGTERM from the shell itself.
        let status = command("sh", sigchld)
            .args(["-c", "kill -TERM $$"])
            .status()
            .await?;
        assert_eq!(status.signal(), Some(libc::SIGTERM));
        assert!(std::fs::metadata(format!("/proc/{pid}")).is_err(), "reaped");
        Ok(())
    })
}

#[test]
fn a_child_killed_by_a_signal_reports_it_pidfd() -> io::Result<()> {
    a_child_killed_by_a_signal_reports_it(false)
}

#[test]
fn a_child_killed_by_a_signal_reports_it_sigchld() -> io::Result<()> {
    a_child_killed_by_a_signal_reports_it(true)
}

fn exit_codes_arrive_for_children_exiting_in_any_order(sigchld: bool) -> io::Result<()> {
    run(async move || {
        // Children exit in the reverse of the order they are awaited in,
        // and some before anyone waits.
        let mut waits = Vec::new();
        for code in 0..20 {
            let delay = format!("sleep 0.{:02}; exit {code}", 40 - 2 * code);
            let mut child = command("sh", sigchld).args(["-c", &delay]).spawn()?;
            waits.push(ioloop::spawn(async move { child.wait().await }));
        }
        sleep(Duration::from_millis(50)).await;
        for (code, wait) in waits.into_iter().enumerate() {
            let status = wait.await.expect("the waiting task")?;
            assert_eq!(status.code(), Some(code as i32));
        }
        Ok(())
    })
}

#[test]
fn exit_codes_arrive_for_children_exiting_in_any_order_pidfd() -> io::Result<()> {
    exit_codes_arrive_for_children_exiting_in_any_order(false)
}

#[test]
fn exit_codes_arrive_for_children_exiting_in_any_order_sigchld() -> io::Result<()> {
    exit_codes_arrive_for_children_exiting_in_any_order(true)
}

/// 1,000 children waited for at once: the runtime starts no thread for
/// them (the pool's threads are counted), and every exit arrives.
#[test]
fn waiting_for_1000_children_at_once_takes_no_thread() -> io::Result<()> {
    run(async || {
        let before = pool_threads();
        let mut children = Vec::new();
        for _ in 0..1000 {
            let child = Command::new("sleep")
                .arg("0.5")
                .stdin(Stdio::null())
                .spawn()?;
            children.push(child);
        }
        let waits: Vec<_> = children
            .into_iter()
            .map(|mut child| ioloop::spawn(async move { child.wait().await }))
            .collect();
        // Every child is being waited for now.
        sleep(Duration::from_millis(100)).await;
        let during = pool_threads();
        for wait in waits {
            assert!(wait.await.expect("the waiting task")?.success());
        }
        eprintln!("1,000 children waited for: {before} pool threads before, {during} during");
        assert_eq!(during, before, "{:?}", account::runtime_thread_names());
        Ok(())
    })
}

/// The runtime's threads, less the tests' watchdogs (`util::within`).
pub(crate) fn pool_threads() -> usize {
    account::runtime_thread_names()
        .iter()
        .filter(|name| *name != "ioloop-watchdog")
        .count()
}
