//! The runtime: spawning, joining, waking, yielding, shutting down, the
//! blocking pool, and what each of them allocates.
//!
//! `alloc` installs this binary's global allocator, which counts
//! allocations per thread: the other tests run through it undisturbed, and
//! their allocations never reach its counts. Two runtime tests that watch
//! the whole process are binaries of their own: tests/rt_idle.rs (the
//! process's CPU time) and tests/rt_blocking_threads.rs (its threads).

mod alloc;
mod block_on;
mod budget;
mod dump;
mod ecosystem;
mod fib_offload;
mod from_tokio;
mod handle;
mod join_set;
mod order;
mod panic;
mod seed;
mod shared;
mod shutdown;
mod sim_backend;
mod spawn;
mod spawn_blocking;
mod spawn_local;
mod stall;
mod wake;
mod yield_now;
