//! [`serve`] and its [`Server`] settings: a listener, a hyper service, one
//! task per connection, and a graceful stop.

use std::cell::{Cell, RefCell};
use std::error::Error as StdError;
use std::future::{Future, poll_fn};
use std::io;
use std::pin::{Pin, pin};
use std::rc::Rc;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use hyper::body::{Body, Incoming};
use hyper::service::HttpService;
use ioloop_net::tcp::{TcpListener, TcpStream};
use ioloop_runtime::task::JoinSet;
use ioloop_runtime::time::timeout;

use super::{HyperIo, LocalExecutor, Timer};

/// The boxed error hyper's bounds ask services and bodies for.
type BoxError = Box<dyn StdError + Send + Sync>;

/// A service [`Server::serve`] and [`serve`] can run, implemented for every
/// type that is one: a hyper [`Service`](hyper::service::Service) of
/// `Request<Incoming>` answering `Response<B>` for a [`Body`] `B`, its
/// errors and the body's boxable into `Box<dyn Error + Send + Sync>`,
/// `Clone` (each connection gets a clone) and `'static`, as is its future.
/// hyper's [`service_fn`](hyper::service::service_fn) makes one.
pub trait ServeService:
    HttpService<Incoming, ResBody: Body<Error: Into<BoxError>> + 'static, Future: 'static>
    + Clone
    + 'static
{
}

impl<S> ServeService for S where
    S: HttpService<Incoming, ResBody: Body<Error: Into<BoxError>> + 'static, Future: 'static>
        + Clone
        + 'static
{
}

/// How [`Server::serve`] serves: the protocol and the grace period.
///
/// The defaults: HTTP/1.1 with keep-alive, a 30-second grace period, and
/// hyper's own defaults otherwise (with [`Timer`] for its timeouts, so an
/// HTTP/1 client gets 30 seconds to send a request's head).
///
/// # Examples
///
/// ```
/// use std::convert::Infallible;
/// use std::time::Duration;
/// use hyper::{Response, service::service_fn};
/// use ioloop::compat::hyper::Server;
/// use ioloop::net::TcpListener;
///
/// ioloop::block_on(async {
///     let listener = TcpListener::bind("127.0.0.1:0").await?;
///     let service = service_fn(|_req| async {
///         Ok::<_, Infallible>(Response::new(String::from("Hello, World!")))
///     });
///     // Stops at once here: serve with `ioloop::signal::ctrl_c()` instead.
///     let stop = std::future::ready(());
///     Server::new()
///         .http2(true)
///         .grace_period(Duration::from_secs(5))
///         .serve(listener, service, stop)
///         .await
/// })
/// .unwrap();
/// ```
#[derive(Clone, Debug)]
pub struct Server {
    http2: bool,
    keep_alive: bool,
    grace: Duration,
}

impl Default for Server {
    fn default() -> Self {
        Server::new()
    }
}

impl Server {
    /// HTTP/1.1 with keep-alive, a 30-second grace period.
    pub fn new() -> Self {
        Server {
            http2: false,
            keep_alive: true,
            grace: Duration::from_secs(30),
        }
    }

    /// Serves HTTP/2 (with prior knowledge, `h2c`) instead of HTTP/1.1.
    pub fn http2(mut self, http2: bool) -> Self {
        self.http2 = http2;
        self
    }

    /// Whether an HTTP/1 connection stays open for more requests (`true`,
    /// the default) or closes after one response.
    pub fn keep_alive(mut self, keep_alive: bool) -> Self {
        self.keep_alive = keep_alive;
        self
    }

    /// How long, once stopped, connections get to finish what they were
    /// doing before they are dropped.
    pub fn grace_period(mut self, grace: Duration) -> Self {
        self.grace = grace;
        self
    }

    /// Serves `service` on each connection `listener` accepts until
    /// `shutdown` completes, then stops gracefully.
    ///
    /// Each connection runs in a task of its own, spawned with
    /// `spawn_local` on this thread (so the service need not be `Send`, and
    /// is cloned for each connection); HTTP/2 streams are spawned the same
    /// way ([`LocalExecutor`]).
    ///
    /// When `shutdown` completes (`ioloop::signal::ctrl_c()`, say), the
    /// listener is closed, so no new connection is accepted, and each open
    /// connection is told to shut down gracefully (hyper's
    /// `graceful_shutdown`): an idle HTTP/1 connection closes at once, one
    /// in the middle of a request finishes its response first, and an
    /// HTTP/2 connection sends `GOAWAY` and finishes its open streams.
    /// Connections still open after the grace period are dropped. Then
    /// this returns.
    ///
    /// An error on one connection (a client that resets it, a malformed
    /// request, the service returning an error) ends that connection only,
    /// and so does a panic in the service: its connection's task panics
    /// and ends, and the others go on. However a connection ends,
    /// everything the server held for it is given back when it does.
    ///
    /// # Errors
    ///
    /// Only an error that leaves the listener unusable (see
    /// `TcpListener::accept`), after the open connections are dropped.
    ///
    /// # Panics
    ///
    /// Outside a task of an ioloop runtime's loop thread.
    pub async fn serve<S, F>(
        &self,
        listener: TcpListener,
        service: S,
        shutdown: F,
    ) -> io::Result<()>
    where
        S: ServeService,
        F: Future,
    {
        let stop = Rc::new(Stop::default());
        let mut connections = JoinSet::new();
        let mut shutdown = pin!(shutdown);
        let result = loop {
            let event = {
                let mut accept = pin!(listener.accept());
                poll_fn(|cx| {
                    if shutdown.as_mut().poll(cx).is_ready() {
                        return Poll::Ready(None);
                    }
                    // Reap finished connections as they go, so the set
                    // holds only open ones.
                    while let Poll::Ready(Some(_)) = connections.poll_join_next(cx) {}
                    accept.as_mut().poll(cx).map(Some)
                })
                .await
            };
            match event {
                None => break Ok(()),
                Some(Ok((stream, _peer))) => {
                    connections.spawn_local(self.connection(stream, service.clone(), stop.clone()));
                }
                Some(Err(err)) => break Err(err),
            }
        };
        // Stop accepting: the kernel refuses new connections from here on.
        drop(listener);
        stop.stop();
        let finished = timeout(self.grace, async {
            while connections.join_next().await.is_some() {}
        })
        .await;
        if finished.is_err() {
            connections.shutdown().await;
        }
        result
    }

    /// One connection's task: hyper's connection future, told to shut down
    /// gracefully once `stop` says so.
    fn connection<S>(
        &self,
        stream: TcpStream,
        service: S,
        stop: Rc<Stop>,
    ) -> impl Future<Output = ()> + 'static
    where
        S: ServeService,
    {
        // Small responses go out at once, not after the peer's delayed ACK.
        let _ = stream.set_nodelay(true);
        let io = HyperIo::new(stream);
        let http2 = self.http2;
        let keep_alive = self.keep_alive;
        async move {
            if http2 {
                let conn = hyper::server::conn::http2::Builder::new(LocalExecutor)
                    .timer(Timer)
                    .serve_connection(io, service);
                drive(conn, &stop, |c| c.graceful_shutdown()).await;
            } else {
                let conn = hyper::server::conn::http1::Builder::new()
                    .timer(Timer)
                    .keep_alive(keep_alive)
                    .serve_connection(io, service);
                drive(conn, &stop, |c| c.graceful_shutdown()).await;
            }
        }
    }
}

/// Serves `service` on `listener` with the default [`Server`] (HTTP/1.1
/// keep-alive, a 30-second grace period) until `shutdown` completes: see
/// [`Server::serve`].
///
/// # Errors
///
/// As [`Server::serve`].
///
/// # Examples
///
/// A server and a client on one loop; the server stops once the client
/// is done:
///
/// ```
/// use std::cell::Cell;
/// use std::convert::Infallible;
/// use hyper::body::Body as _;
/// use hyper::{Request, Response, StatusCode, service::service_fn};
/// use ioloop::compat::hyper::{HyperIo, serve};
/// use ioloop::net::{TcpListener, TcpStream};
///
/// ioloop::block_on(async {
///     let listener = TcpListener::bind("127.0.0.1:0").await?;
///     let addr = listener.local_addr()?;
///     let hello = service_fn(|_req| async {
///         Ok::<_, Infallible>(Response::new(String::from("Hello, World!")))
///     });
///     let answer = Cell::new(None);
///     let client = async {
///         let stream = TcpStream::connect(addr).await.unwrap();
///         let (mut sender, conn) =
///             hyper::client::conn::http1::handshake(HyperIo::new(stream)).await.unwrap();
///         ioloop::spawn_local(conn);
///         let request = Request::get("/").body(String::new()).unwrap();
///         let response = sender.send_request(request).await.unwrap();
///         answer.set(Some((response.status(), response.body().size_hint().exact())));
///     };
///     // Serves until `client` completes (`ioloop::signal::ctrl_c()` in a
///     // real server), then stops gracefully.
///     serve(listener, hello, client).await?;
///     assert_eq!(answer.get(), Some((StatusCode::OK, Some(13))));
///     Ok::<_, std::io::Error>(())
/// })
/// .unwrap();
/// ```
pub async fn serve<S, F>(listener: TcpListener, service: S, shutdown: F) -> io::Result<()>
where
    S: ServeService,
    F: Future,
{
    Server::new().serve(listener, service, shutdown).await
}

/// Polls `conn` to its end, calling `graceful` on it once `stop` fires.
async fn drive<C: Future>(conn: C, stop: &Stop, graceful: fn(Pin<&mut C>)) {
    let mut conn = pin!(conn);
    // Gives the connection's slot in `stop` back however the connection
    // ends: returning, the service panicking inside `conn`'s poll, or the
    // task aborted (its future dropped at an await).
    let mut entry = Entry { stop, slot: None };
    let mut stopping = false;
    poll_fn(|cx| {
        if !stopping && entry.stop.poll_stopped(cx, &mut entry.slot) {
            stopping = true;
            graceful(conn.as_mut());
        }
        conn.as_mut().poll(cx).map(drop)
    })
    .await;
}

/// A connection's slot in its server's [`Stop`], given back on drop.
struct Entry<'a> {
    stop: &'a Stop,
    slot: Option<usize>,
}

impl Drop for Entry<'_> {
    fn drop(&mut self) {
        self.stop.forget(self.slot.take());
    }
}

/// The stop signal the connections of one `serve` share: a flag, and the
/// waker of each connection task waiting on it (one slot each, reused).
#[derive(Default)]
struct Stop {
    stopped: Cell<bool>,
    wakers: RefCell<Vec<Option<Waker>>>,
    free: RefCell<Vec<usize>>,
}

impl Stop {
    /// Fires: every waiting connection is woken.
    fn stop(&self) {
        self.stopped.set(true);
        let wakers = std::mem::take(&mut *self.wakers.borrow_mut());
        for waker in wakers.into_iter().flatten() {
            waker.wake();
        }
    }

    /// Whether it has fired; if not, `cx`'s waker is kept in `slot`.
    fn poll_stopped(&self, cx: &mut Context<'_>, slot: &mut Option<usize>) -> bool {
        if self.stopped.get() {
            return true;
        }
        let mut wakers = self.wakers.borrow_mut();
        match *slot {
            Some(i) => match &mut wakers[i] {
                Some(w) if w.will_wake(cx.waker()) => {}
                w => *w = Some(cx.waker().clone()),
            },
            None => {
                let i = match self.free.borrow_mut().pop() {
                    Some(i) => {
                        wakers[i] = Some(cx.waker().clone());
                        i
                    }
                    None => {
                        wakers.push(Some(cx.waker().clone()));
                        wakers.len() - 1
                    }
                };
                *slot = Some(i);
            }
        }
        false
    }

    /// A connection that has ended gives its slot back.
    fn forget(&self, slot: Option<usize>) {
        if let (Some(i), false) = (slot, self.stopped.get()) {
            self.wakers.borrow_mut()[i] = None;
            self.free.borrow_mut().push(i);
        }
    }
}
