//! White-box scenarios, each one a bug another runtime shipped: the
//! reactor, the scheduler, tasks, timers and UDP at their edges; and the
//! reactor through `Registration`, waiter by waiter.
//!
//! The edge scenarios that watch the whole process (its eventfds, its
//! resident memory) run one at a time in tests/stress/.

mod extremes;
mod reactor;
mod readiness;
mod sched;
mod task;
mod timers;
mod udp;
