//! hyper's HTTP/1 client on ioloop sockets, against the ioloop server:
//! over `HyperIo` (reads into uninitialized memory) and over `FuturesIo`
//! (any futures-io stream).

use http_body_util::{BodyExt, Empty};
use hyper::body::Bytes;
use hyper::client::conn::http1::{SendRequest, handshake};
use hyper::rt::{Read, Write};
use hyper::service::service_fn;
use hyper::{Request, StatusCode};
use ioloop::compat::hyper::{FuturesIo, HyperIo, serve};
use ioloop::net::{TcpListener, TcpStream};
use testkit::io_run;

use crate::{Flag, hello, hello_body};

/// Sends `n` requests one after another on one connection, checking each
/// answer.
pub async fn exchange(sender: &mut SendRequest<Empty<Bytes>>, n: usize) {
    for i in 0..n {
        sender.ready().await.unwrap();
        let req = Request::get(format!("/c{i}"))
            .header("host", "test")
            .body(Empty::new())
            .unwrap();
        let res = sender.send_request(req).await.unwrap();
        assert_eq!(res.status(), StatusCode::OK);
        let body = res.into_body().collect().await.unwrap().to_bytes();
        assert_eq!(body, hello_body(&format!("/c{i}")).as_bytes());
    }
}

async fn against_server<I>(wrap: impl FnOnce(TcpStream) -> I) -> std::io::Result<()>
where
    I: Read + Write + Unpin + 'static,
{
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let stop = Flag::default();
    let server = ioloop::spawn_local({
        let stop = stop.clone();
        async move { serve(listener, service_fn(hello), stop.wait()).await }
    });
    let stream = TcpStream::connect(addr).await?;
    let (mut sender, conn) = handshake(wrap(stream)).await.unwrap();
    let conn = ioloop::spawn_local(conn);
    exchange(&mut sender, 100).await;
    stop.set();
    // The server closes the idle connection; the client's ends cleanly.
    conn.await.unwrap().unwrap();
    server.await.unwrap()
}

#[test]
fn the_http1_client_over_hyper_io_keeps_one_connection_alive() -> std::io::Result<()> {
    io_run::run(|| against_server(HyperIo::new))
}

#[test]
fn the_http1_client_over_futures_io_keeps_one_connection_alive() -> std::io::Result<()> {
    io_run::run(|| against_server(FuturesIo::new))
}
