//! Deterministic simulation (issue 32): servers and clients in one seeded
//! world over the simulated network. A failing test prints the seed; run
//! it again with `IOLOOP_SIM_SEED=<seed>` to replay exactly that run.
//!
//! - `crash`: a restartable host crashed and started again: its state
//!   lost, its port bound again, its clients served.
//! - `determinism`: a seed run twice takes the same steps; a world that
//!   leaks anything else into what it does fails at the first step that
//!   differs, named.
//! - `dump`: a task dump inside a simulation reads the virtual clock.
//! - `echo`: `line_echo`'s handler under many seeds, with and without
//!   faults: every line's echo is exact, and nothing hangs.
//! - `blocking`: a host awaiting the blocking pool is waited for, not
//!   a deadlock.
//! - `callbacks`: the callback layer's `line_echo` likewise.
//! - `hyper_grace`: `compat::hyper`'s graceful stop at a seeded moment,
//!   with requests in flight, with and without faults: no finished
//!   answer lost, none wrong, no hang.
//! - `hyper_stop`: a hyper server stopped in its grace period replays
//!   from its seed (its connections' `JoinSet` aborts in one order).
//! - `kernel`: the kernel is the reference: each scenario runs on real
//!   sockets and in the simulation, and their transcripts must agree.
//! - `kv`: the key-value server likewise, its clients' SET, GET and DEL
//!   replies checked against what each set.
//! - `kv_more`: the key-value server's deep pipelines, pub/sub under
//!   faults, and a subscriber that never reads, dropped at the bound.
//! - `lines`: `read_line` under a maximum line length, with lines of the
//!   limit minus one, the limit and one more, `\r\n` endings counted.
//! - `hyper`: `compat::hyper::serve` likewise, an echo service under
//!   hyper's own client, several requests per connection.
//! - `rare`: the rare paths (issue 41): each fires where it must, the
//!   report names it, off none fires, a rate of 0 and of 1 obeyed.
//! - `shutdown`: `line_echo` told to stop at a seeded moment, mid-stream:
//!   exact echoes, and every client learns it stopped.
//! - `timers`: sleeps, moved sleeps, timeouts and intervals of every
//!   missed-tick behaviour, seeded, side by side: each wake exactly on
//!   time on the virtual clock, and expiring timeouts still yield.
//! - `trace`: the same seed gives the same trace; others, others.
//! - `udp`: no datagram lost with faults off, whatever the seed's
//!   buffers; the kernel's errors, kind and code.
//! - `world`: what the world does with sockets: names, UDP, refusals,
//!   partitions, deadlocks, panics.
//! - `workload`: a random workload as wide as the API, every byte checked
//!   against a model of what must arrive, TCP and UDP.
//! - `worlds`: where every world gets its `Sim` (the hook for what all
//!   worlds run with).

mod blocking;
mod callbacks;
#[path = "../../examples/sim_echo/client.rs"]
mod clients;
mod crash;
mod determinism;
mod dump;
mod echo;
mod hyper;
mod hyper_grace;
mod hyper_stop;
mod kernel;
mod kv;
mod kv_more;
mod lines;
mod rare;
mod retry;
mod shutdown;
mod timers;
mod tokio_io;
mod trace;
mod udp;
mod unix;
mod workload;
mod world;
mod worlds;

/// The seeds fault tests run: `IOLOOP_SIM_SEEDS` (1,000 in CI), or 200.
pub fn seeds() -> u64 {
    std::env::var("IOLOOP_SIM_SEEDS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(200)
}
