//! hyper's executors: its background tasks (HTTP/2 streams, client
//! connections) spawned on the ioloop runtime of the calling thread.

use std::future::Future;

/// [`hyper::rt::Executor`] over [`ioloop::spawn`](ioloop_runtime::spawn),
/// for `Send` futures, as hyper's HTTP/2 hands it with a `Send` service.
///
/// # Panics
///
/// Outside an ioloop runtime, as `ioloop::spawn` does (hyper calls it
/// while a connection is polled, inside a task).
#[derive(Clone, Copy, Debug, Default)]
pub struct Executor;

impl<F> hyper::rt::Executor<F> for Executor
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    fn execute(&self, future: F) {
        drop(ioloop_runtime::spawn(future));
    }
}

/// [`hyper::rt::Executor`] over
/// [`ioloop::spawn_local`](ioloop_runtime::spawn_local), for `!Send`
/// futures, such as the HTTP/2 streams of a service that holds an `Rc`.
///
/// # Panics
///
/// Off the thread running the loop, as `spawn_local` does (hyper calls it
/// from inside the connection's task).
#[derive(Clone, Copy, Debug, Default)]
pub struct LocalExecutor;

impl<F> hyper::rt::Executor<F> for LocalExecutor
where
    F: Future + 'static,
{
    fn execute(&self, future: F) {
        drop(ioloop_runtime::spawn_local(future));
    }
}
