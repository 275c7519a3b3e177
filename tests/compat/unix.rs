//! hyper over a Unix stream pair: the server on `HyperIo<UnixStream>`, the
//! client on `FuturesIo<UnixStream>`, with the `!Send` executor's
//! connection task holding an `Rc`.

use std::cell::Cell;
use std::convert::Infallible;
use std::rc::Rc;

use bytes::Bytes;
use http_body_util::Full;
use hyper::client::conn::http1::handshake;
use hyper::rt::Executor as _;
use hyper::service::service_fn;
use hyper::{Request, Response};
use ioloop::compat::hyper::{FuturesIo, HyperIo, LocalExecutor, Timer};
use ioloop::net::UnixStream;
use testkit::io_run;

use crate::client::exchange;

#[test]
fn http1_over_a_unix_stream_with_a_service_holding_an_rc() -> std::io::Result<()> {
    io_run::run(|| async {
        let (a, b) = UnixStream::pair()?;
        let served = Rc::new(Cell::new(0usize));
        let service = service_fn({
            let served = served.clone();
            move |req: Request<hyper::body::Incoming>| {
                served.set(served.get() + 1);
                let body = crate::hello_body(req.uri().path());
                async move { Ok::<_, Infallible>(Response::new(Full::new(Bytes::from(body)))) }
            }
        });
        let conn = hyper::server::conn::http1::Builder::new()
            .timer(Timer)
            .serve_connection(HyperIo::new(a), service);
        // The connection future holds the Rc: only the local executor takes it.
        let (tx, rx) = std::sync::mpsc::channel();
        LocalExecutor.execute(async move { tx.send(conn.await.is_ok()).unwrap() });

        let (mut sender, client) = handshake(FuturesIo::new(b)).await.unwrap();
        let client = ioloop::spawn_local(client);
        exchange(&mut sender, 50).await;
        assert_eq!(served.get(), 50);
        drop(sender);
        client.await.unwrap().unwrap();
        // The client closed its end: the server's connection ends cleanly.
        while rx.try_recv().is_err() {
            ioloop::task::yield_now().await;
        }
        Ok(())
    })
}
