//! The blocking pool: threads that run closures the loop must not run.
//!
//! The cookbook's `ThreadPoolHandler` hands work to threads and learns of
//! results through a socket pair the loop watches. Here a job is a task
//! (the same single allocation as a spawned future), a pool thread runs
//! it, and completing it wakes whoever awaits its `JoinHandle`: the loop's
//! poller waker plays the socket pair's part.
//!
//! Threads start on demand, up to `max_threads`, and an idle thread exits
//! after `keep_alive`. A job that finds every thread busy and the pool at
//! its maximum waits in the queue for the next free thread.
//!
//! # Shutdown
//!
//! When the runtime shuts down, the pool refuses new jobs (their handles
//! report a cancellation at once), but every job it accepted before runs to
//! completion, the queued ones included: a thread takes queued jobs until
//! the queue is empty, then exits. Nothing spawned is silently dropped, and
//! no thread outlives the last job (tokio runs blocking tasks spawned
//! before its shutdown too).
//!
//! # Wake-up accounting
//!
//! `idle` counts threads waiting on the condition variable; `wakeups`
//! counts notifications sent and not yet consumed. A new job notifies only
//! if `idle > wakeups`, so two jobs in a row wake two threads rather than
//! one thread twice; a thread leaving its wait for any reason (notified or
//! timed out) consumes a pending wake-up if there is one, so a notification
//! racing with a time-out is never lost: that thread stays and works.

use std::collections::VecDeque;
use std::io;
use std::sync::Arc;
use std::task::Waker;
use std::time::Duration;

use parking_lot::{Condvar, Mutex};

use crate::base::JoinError;
use crate::event_loop::cell::Task;
use crate::event_loop::core::BlockingPool;

/// The pool's settings, from the runtime builder.
#[derive(Clone, Debug)]
pub(crate) struct Config {
    pub(crate) max_threads: usize,
    pub(crate) keep_alive: Duration,
    pub(crate) stack_size: Option<usize>,
}

#[derive(Default)]
struct State {
    queue: VecDeque<Task>,
    threads: usize,
    idle: usize,
    wakeups: usize,
    shutdown: bool,
    /// The jobs threads are running now, to count those unfinished
    /// exactly (`unfinished`): a job is finished once its handle has its
    /// output, a moment before its thread comes back for the lock.
    running: Vec<Task>,
    next_thread: usize,
    /// Woken each time the pool goes quiet (no job queued or running),
    /// while the runtime's clock is paused: the loop waits for that before
    /// it moves the clock (`time/pause.rs`).
    on_quiet: Option<Waker>,
}

/// A runtime's blocking pool.
pub(crate) struct Pool {
    state: Mutex<State>,
    work: Condvar,
    config: Config,
}

impl Pool {
    pub(crate) fn new(config: Config) -> Arc<Pool> {
        Arc::new(Pool {
            state: Mutex::new(State::default()),
            work: Condvar::new(),
            config,
        })
    }

    /// A thread could not be started. If no thread is left to run the
    /// queue, nothing ever will: fail every queued job with the OS error,
    /// so their handles report it instead of waiting forever.
    fn thread_failed(&self, err: io::Error) {
        let mut state = self.state.lock();
        state.threads -= 1;
        if state.threads > 0 {
            log::warn!("blocking pool: could not start another thread ({err}); jobs will wait");
            return;
        }
        let orphans: Vec<Task> = state.queue.drain(..).collect();
        drop(state);
        log::error!(
            "blocking pool: could not start a thread ({err}); failing {} job(s)",
            orphans.len()
        );
        for job in orphans {
            let err = io::Error::new(err.kind(), err.to_string());
            job.cancel(JoinError::no_thread(err));
        }
    }

    /// A pool thread: run jobs until there are none for `keep_alive`, or
    /// the pool shuts down.
    fn work_loop(&self) {
        let mut state = self.state.lock();
        loop {
            if let Some(job) = state.queue.pop_front() {
                state.running.push(job.clone());
                drop(state);
                job.clone().run_blocking();
                state = self.state.lock();
                if let Some(at) = state
                    .running
                    .iter()
                    .position(|t| t.as_ptr() == job.as_ptr())
                {
                    state.running.swap_remove(at);
                }
                continue;
            }
            if state.shutdown {
                break;
            }
            state.idle += 1;
            if state.idle == state.threads
                && let Some(waker) = state.on_quiet.clone()
            {
                // Woken with the lock let go (no wake under a lock); a job
                // or a shutdown that came meanwhile is seen below, before
                // waiting.
                drop(state);
                waker.wake();
                state = self.state.lock();
            }
            let timed_out = state.wakeups == 0
                && !state.shutdown
                && self
                    .work
                    .wait_for(&mut state, self.config.keep_alive)
                    .timed_out();
            state.idle -= 1;
            if state.wakeups > 0 {
                state.wakeups -= 1;
            } else if timed_out && state.queue.is_empty() {
                break;
            }
        }
        state.threads -= 1;
    }
}

impl BlockingPool for Pool {
    /// Queues `job` and makes sure a thread will run it: an idle one if
    /// there is one, else a new one if the pool may grow.
    fn spawn(self: Arc<Self>, job: Task) {
        let mut state = self.state.lock();
        if state.shutdown {
            drop(state);
            job.cancel(JoinError::cancelled());
            return;
        }
        state.queue.push_back(job);
        if state.idle > state.wakeups {
            state.wakeups += 1;
            self.work.notify_one();
            return;
        }
        if state.threads >= self.config.max_threads {
            return; // a busy thread takes it when it is done
        }
        state.threads += 1;
        let id = state.next_thread;
        state.next_thread += 1;
        drop(state);
        let mut builder = std::thread::Builder::new().name(format!("ioloop-blocking-{id}"));
        if let Some(size) = self.config.stack_size {
            builder = builder.stack_size(size);
        }
        let pool = self.clone();
        if let Err(err) = builder.spawn(move || pool.work_loop()) {
            self.thread_failed(err);
        }
    }

    /// Refuses new jobs (they are cancelled on the spot) and tells idle
    /// threads to exit. Jobs already accepted, queued or running, run to
    /// completion: the threads take the queued ones until the queue is
    /// empty, then exit. Calling it again does nothing more.
    fn shutdown(&self) {
        let on_quiet = {
            let mut state = self.state.lock();
            state.shutdown = true;
            state.on_quiet.take()
        };
        drop(on_quiet);
        self.work.notify_all();
    }

    /// Jobs not finished now: queued, or running and without their output
    /// yet. A job whose handle already has its output is not counted, even
    /// if its thread has not yet come back for the next one.
    fn unfinished(&self) -> usize {
        let state = self.state.lock();
        state
            .queue
            .iter()
            .chain(&state.running)
            .filter(|job| !job.is_complete())
            .count()
    }

    /// Whether no job is queued or running. A thread that has finished its
    /// job counts as running until it waits for the next, by which time the
    /// job's output is stored and its waiter woken.
    fn is_quiet(&self) -> bool {
        let state = self.state.lock();
        state.queue.is_empty() && state.idle == state.threads
    }

    /// Sets (or with `None`, removes) the waker woken whenever the pool
    /// goes quiet.
    fn set_on_quiet(&self, waker: Option<Waker>) {
        let old = std::mem::replace(&mut self.state.lock().on_quiet, waker);
        drop(old);
    }

    /// Threads, idle threads and queued jobs.
    fn stats(&self) -> [usize; 3] {
        let state = self.state.lock();
        [state.threads, state.idle, state.queue.len()]
    }
}
