//! Churn with accounting: each thing a user creates and drops (tasks,
//! waiters, timers, sleeps reset from afar, connections, runtimes, guards)
//! made and dropped many times, while the process's heap, descriptors and
//! threads are checked to follow what is live, not what was ever made.
//!
//! This binary installs `testkit::account::Counting` as its allocator, and
//! its figures are the whole process's: every test holds
//! `testkit::account::serial()` while it measures.

#[global_allocator]
static ALLOC: testkit::account::Counting = testkit::account::Counting;

mod connections;
mod guards;
mod hyper;
mod kv;
mod outbox;
mod owned_write;
mod runtimes;
mod shutdown;
mod signals;
mod tasks;
mod timers;
mod waiters;
