//! Signals: waiting for Ctrl-C, SIGTERM and friends as ordinary I/O, asyncio's
//! `loop.add_signal_handler`.
//!
//! - [`ctrl_c`]: wait once for SIGINT.
//! - [`Signal`], [`SignalKind`]: a listener for any catchable signal,
//!   received again and again.
//!
//! # How a signal reaches the loop
//!
//! A signal handler may run on any thread, at any instruction, and may call
//! almost nothing (no locks, no allocation, no waker). So the handler does
//! one thing: it writes a byte to a non-blocking pipe (the self-pipe
//! trick). The pipe's read end is registered with the reactor like a
//! socket, so a loop asleep in `epoll_wait` wakes for it like for any other
//! readable source, and the task that waits in [`Signal::recv`] drains the
//! pipe and completes. Installing the handler is left to
//! [signal-hook](https://docs.rs/signal-hook), which gets `sigaction`,
//! chaining to earlier handlers and async-signal safety right.
//!
//! Each [`Signal`] has its own pipe (two file descriptors) and its own
//! handler action, so every listener for a signal, in any runtime of the
//! process, sees every delivery.
//!
//! # Coalescing
//!
//! Deliveries are not counted. Several deliveries between two calls to
//! [`Signal::recv`] complete the next call once; the OS already merges a
//! pending signal with a new one of the same kind, and the pipe does the
//! same (when it is full the handler's write is dropped, and the pipe is
//! still readable). A listener therefore learns "at least one signal came
//! since I last looked", never how many.
//!
//! # The default action is not restored
//!
//! The first listener for a signal installs signal-hook's handler for it,
//! process-wide, and that handler stays installed until the process exits.
//! Dropping a listener only removes its own action from the handler.
//! signal-hook does not put the previous disposition back when the last
//! action goes, so from the first listener on:
//!
//! - a signal whose default action terminates the process (SIGINT,
//!   SIGTERM, SIGHUP, SIGUSR1, ...) no longer does so, even after every
//!   listener is gone: once the future returned by [`ctrl_c`] completes or
//!   is dropped, Ctrl-C is silently ignored. To let a second Ctrl-C stop a
//!   program that is shutting down, listen again and exit on it (for
//!   example with `std::process::exit`);
//! - a signal the process had been told to ignore (SIG_IGN, as `nohup`
//!   does for SIGHUP) is delivered to listeners while they exist, and is
//!   ignored again afterwards;
//! - a handler installed earlier by other code (not SIG_DFL or SIG_IGN)
//!   keeps running: signal-hook calls it before the listeners' actions.
//!
//! Restoring the default when the last listener goes (signal-hook's
//! `flag::register_conditional_default`) was considered and left out: it
//! would also terminate a process that had inherited SIG_IGN, and one whose
//! other code had registered its own signal-hook action for that signal,
//! since neither is visible from here without hand-written `sigaction`
//! calls. Tokio makes the same choice.

mod ctrl_c;
mod kind;
mod listener;

pub use ctrl_c::ctrl_c;
pub use kind::SignalKind;
pub use listener::Signal;
