//! Child processes, their pipes and any descriptor on the loop
//! (`ioloop::process`, `ioloop::io::AsyncFd`): what a child writes arrives
//! line by line, its exit is awaited without a thread, every failure says
//! what failed, and no child is left a zombie, whether it was awaited,
//! dropped, or running as its runtime shut down.
//!
//! Every test takes `account::serial()`, one at a time: some count
//! descriptors, threads or memory, which are the process's, and the tests
//! of a binary run in parallel.

mod child;
mod example;
mod exit;
mod fd;
mod reap;
mod stdio;
