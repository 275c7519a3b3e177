//! Child processes on the loop, as asyncio's docs show them: run a command,
//! read its output line by line as it comes, wait for its exit; then a
//! pipeline of two children joined by a pipe, and a command whose output is
//! collected whole.
//!
//! ```sh
//! cargo run --example subprocess                 # seq 1 100000, summed
//! cargo run --example subprocess -- --count 10
//! ```
//!
//! asyncio's version:
//!
//! ```python
//! proc = await asyncio.create_subprocess_exec(
//!     "seq", "1", "100000", stdout=asyncio.subprocess.PIPE)
//! total = 0
//! while line := await proc.stdout.readline():
//!     total += int(line)
//! await proc.wait()
//! ```
//!
//! No thread waits for a child: its exit arrives through a pidfd the
//! reactor watches (or SIGCHLD on kernels without one), like a socket's
//! readiness.

#[path = "../common/args.rs"]
mod args;
mod children;

use std::io;

use ioloop::process::Command;

const USAGE: &str = "usage: subprocess [--count 100000]";

#[ioloop::main]
async fn main() -> io::Result<()> {
    let count: u64 = args::Args::parse(USAGE).get("count", 100_000);
    let total = children::sum_of_seq(count).await?;
    println!("seq 1 {count}: {count} lines, summing to {total}");
    assert_eq!(total, count * (count + 1) / 2);
    println!(
        "seq 1 {count} | wc -l: {}",
        children::pipeline(count).await?
    );
    let uname = Command::new("uname").arg("-sr").output().await?;
    print!("uname -sr: {}", String::from_utf8_lossy(&uname.stdout));
    Ok(())
}
