//! Child processes, their pipes, and any file descriptor, on ioloop's
//! reactor: asyncio's `create_subprocess_exec` and `connect_read_pipe`,
//! tokio's `process` and `AsyncFd`.
//!
//! - [`AsyncFd`] registers any nonblocking descriptor with the reactor.
//! - [`stdin`], [`stdout`] and [`stderr`] are the process's standard
//!   streams as futures-io streams, on the loop where the descriptor
//!   allows, else on the blocking pool, and cancellable either way.
//! - [`Command`] mirrors `std::process::Command`; its [`Child`]'s pipes are
//!   futures-io streams ([`ChildStdin`], [`ChildStdout`], [`ChildStderr`])
//!   that `StreamReader` and `StreamWriter` take as they take a socket, and
//!   its exit is learned on the loop, with no thread per child (see
//!   [`Child`]).
#![cfg(unix)]

mod child;
mod fd;
mod pipe;
mod stdio;

pub use child::{Child, Command};
pub use fd::AsyncFd;
pub use pipe::{ChildStderr, ChildStdin, ChildStdout};
pub use std::process::{ExitStatus, Output, Stdio};
pub use stdio::{Stderr, Stdin, Stdout, stderr, stdin, stdout};
