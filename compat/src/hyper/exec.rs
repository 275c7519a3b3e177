//! The executors: hyper's background tasks (HTTP/2 streams, client
//! connections) spawned on the ioloop runtime of the calling thread.

use std::future::Future;

/// [`hyper::rt::Executor`] over [`ioloop::spawn`](ioloop_runtime::spawn):
/// for `Send` futures, as hyper's HTTP/2 server and client hand it when
/// the service is `Send`.
///
/// Spawns on the runtime of the thread hyper calls it on, and panics if
/// there is none (as `ioloop::spawn` does): hyper calls it while a
/// connection is polled, inside a task.
///
/// # Examples
///
/// ```
/// use hyper::rt::Executor as _;
/// use ioloop::compat::hyper::Executor;
///
/// ioloop::block_on(async {
///     let (tx, rx) = std::sync::mpsc::channel();
///     Executor.execute(async move { tx.send(42).unwrap() });
///     ioloop::task::yield_now().await;
///     assert_eq!(rx.try_recv(), Ok(42));
/// });
/// ```
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
/// [`ioloop::spawn_local`](ioloop_runtime::spawn_local): for `!Send`
/// futures, such as the HTTP/2 streams of a service that holds an `Rc`.
///
/// Must be called on the thread running the loop (hyper does, from inside
/// the connection's task); panics elsewhere, as `spawn_local` does.
///
/// # Examples
///
/// ```
/// use std::cell::Cell;
/// use std::rc::Rc;
/// use hyper::rt::Executor as _;
/// use ioloop::compat::hyper::LocalExecutor;
///
/// ioloop::block_on(async {
///     let hits = Rc::new(Cell::new(0));
///     let h = hits.clone();
///     LocalExecutor.execute(async move { h.set(h.get() + 1) });
///     ioloop::task::yield_now().await;
///     assert_eq!(hits.get(), 1);
/// });
/// ```
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
