//! `ioloop::compat::hyper` (the `hyper` feature) end to end over real
//! sockets on 127.0.0.1: hyper's server and client on ioloop's I/O,
//! executors and timer, and `serve` with its graceful stop; and
//! `ioloop::compat::tokio` (the `tokio-io` feature): tokio's I/O traits
//! (`tokio_io.rs`) and the libraries built on them (`tokio_libs.rs`). Every test
//! runs under a safety net (testkit's `io_run::run`), and nothing waits on
//! the wall clock: each step waits for the event it needs.

mod client;
mod graceful;
mod http1;
mod http2;
mod hyper_io;
mod tokio_io;
mod tokio_libs;
mod unix;

use std::cell::{Cell, RefCell};
use std::convert::Infallible;
use std::future::poll_fn;
use std::rc::Rc;
use std::task::{Poll, Waker};

use bytes::Bytes;
use http_body_util::Full;
use hyper::{Request, Response};

/// A one-way flag tasks on one loop can wait for.
#[derive(Clone, Default)]
pub struct Flag(Rc<FlagState>);

/// The flag and the tasks waiting for it.
#[derive(Default)]
pub struct FlagState {
    set: Cell<bool>,
    wakers: RefCell<Vec<Waker>>,
}

impl Flag {
    /// Sets the flag and wakes every waiter.
    pub fn set(&self) {
        self.0.set.set(true);
        for w in self.0.wakers.borrow_mut().drain(..) {
            w.wake();
        }
    }

    /// Waits until the flag is set.
    pub async fn wait(&self) {
        poll_fn(|cx| {
            if self.0.set.get() {
                Poll::Ready(())
            } else {
                self.0.wakers.borrow_mut().push(cx.waker().clone());
                Poll::Pending
            }
        })
        .await
    }
}

/// The body every test server answers: `hello <path>`, so each response
/// can be matched to its request.
pub fn hello_body(path: &str) -> String {
    format!("hello {path}")
}

/// A service answering `hello <path>`.
pub async fn hello<B>(req: Request<B>) -> Result<Response<Full<Bytes>>, Infallible> {
    Ok(Response::new(Full::new(Bytes::from(hello_body(
        req.uri().path(),
    )))))
}
