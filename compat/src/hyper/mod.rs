//! hyper 1.x on ioloop: I/O, executors, a timer, and a `serve` helper.
//!
//! - [`HyperIo`]: [`hyper::rt::Read`] and [`hyper::rt::Write`] over an
//!   ioloop `TcpStream` or `UnixStream`, reading straight into hyper's
//!   uninitialized buffer; [`FuturesIo`] over any futures-io stream (a TLS
//!   stream, say).
//! - [`Executor`] (over `ioloop::spawn`, for `Send` futures) and
//!   [`LocalExecutor`] (over `ioloop::spawn_local`, for `!Send` ones): where
//!   hyper spawns HTTP/2 streams and client connections.
//! - [`Timer`] and [`Sleep`]: hyper's timeouts on ioloop's timer heap.
//! - [`serve`] and [`Server`]: a `TcpListener` and a service, one task per
//!   connection, HTTP/1.1 keep-alive or HTTP/2, and a graceful stop.
//!
//! # Examples
//!
//! A server and a client on one loop; the server stops once the client
//! is done:
//!
//! ```
//! use std::cell::Cell;
//! use std::convert::Infallible;
//! use hyper::body::Body as _;
//! use hyper::{Request, Response, StatusCode, service::service_fn};
//! use ioloop::compat::hyper::{HyperIo, serve};
//! use ioloop::net::{TcpListener, TcpStream};
//!
//! ioloop::block_on(async {
//!     let listener = TcpListener::bind("127.0.0.1:0").await?;
//!     let addr = listener.local_addr()?;
//!     let hello = service_fn(|_req| async {
//!         Ok::<_, Infallible>(Response::new(String::from("Hello, World!")))
//!     });
//!     let answer = Cell::new(None);
//!     let client = async {
//!         let stream = TcpStream::connect(addr).await.unwrap();
//!         let (mut sender, conn) =
//!             hyper::client::conn::http1::handshake(HyperIo::new(stream)).await.unwrap();
//!         ioloop::spawn_local(conn);
//!         let request = Request::get("/").body(String::new()).unwrap();
//!         let response = sender.send_request(request).await.unwrap();
//!         answer.set(Some((response.status(), response.body().size_hint().exact())));
//!     };
//!     // Serves until `client` completes (`ioloop::signal::ctrl_c()` in a
//!     // real server), then stops gracefully.
//!     serve(listener, hello, client).await?;
//!     assert_eq!(answer.get(), Some((StatusCode::OK, Some(13))));
//!     Ok::<_, std::io::Error>(())
//! })
//! .unwrap();
//! ```

mod exec;
mod io;
mod serve;
mod timer;

pub use exec::{Executor, LocalExecutor};
pub use io::{FuturesIo, HyperIo, Socket};
pub use serve::{ServeService, Server, serve};
pub use timer::{Sleep, Timer};
