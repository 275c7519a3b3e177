//! HTTP/2: 100 streams open at once on one connection. The service holds
//! an `Rc` (so `serve` runs it with the `!Send` executor) and answers no
//! request until all 100 have arrived, so the streams are concurrent by
//! construction, not by timing. The client spawns its connection with the
//! `Send` executor.

use std::cell::Cell;
use std::convert::Infallible;
use std::rc::Rc;

use bytes::Bytes;
use http_body_util::{BodyExt, Empty, Full};
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use ioloop::compat::hyper::{Executor, HyperIo, Server};
use ioloop::net::{TcpListener, TcpStream};
use ioloop::task::JoinSet;
use testkit::io_run;

use crate::{Flag, hello_body};

const STREAMS: usize = 100;

#[test]
fn one_hundred_concurrent_streams_on_one_connection() -> std::io::Result<()> {
    io_run::run(|| async {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let arrived = Rc::new(Cell::new(0usize));
        let all_in = Flag::default();
        let service = service_fn({
            let (arrived, all_in) = (arrived.clone(), all_in.clone());
            move |req: Request<hyper::body::Incoming>| {
                let (arrived, all_in) = (arrived.clone(), all_in.clone());
                async move {
                    arrived.set(arrived.get() + 1);
                    if arrived.get() == STREAMS {
                        all_in.set();
                    }
                    all_in.wait().await;
                    let body = Full::new(Bytes::from(hello_body(req.uri().path())));
                    Ok::<_, Infallible>(Response::new(body))
                }
            }
        });
        let stop = Flag::default();
        let server = ioloop::spawn_local({
            let stop = stop.clone();
            async move {
                Server::new()
                    .http2(true)
                    .serve(listener, service, stop.wait())
                    .await
            }
        });

        let stream = TcpStream::connect(addr).await?;
        let (sender, conn) = hyper::client::conn::http2::handshake(Executor, HyperIo::new(stream))
            .await
            .unwrap();
        let conn = ioloop::spawn(conn);
        let mut requests = JoinSet::new();
        for i in 0..STREAMS {
            let mut sender = sender.clone();
            requests.spawn_local(async move {
                let req = Request::get(format!("http://test/s{i}"))
                    .body(Empty::<Bytes>::new())
                    .unwrap();
                let res = sender.send_request(req).await.unwrap();
                assert_eq!(res.status(), StatusCode::OK);
                let body = res.into_body().collect().await.unwrap().to_bytes();
                assert_eq!(body, hello_body(&format!("/s{i}")).as_bytes());
            });
        }
        let mut done = 0;
        while let Some(result) = requests.join_next().await {
            result.unwrap();
            done += 1;
        }
        assert_eq!(done, STREAMS);
        assert_eq!(arrived.get(), STREAMS);

        drop(sender);
        stop.set();
        conn.await.unwrap().unwrap();
        server.await.unwrap()
    })
}
