//! `serve`'s graceful stop: a request in flight when the stop comes
//! completes, and only then does `serve` return; one that outlives the
//! grace period is dropped, and `serve` returns all the same.

use std::convert::Infallible;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Empty, Full};
use hyper::client::conn::http1::handshake;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use ioloop::compat::hyper::{HyperIo, Server};
use ioloop::net::{TcpListener, TcpStream};
use testkit::io_run;

use crate::Flag;

#[test]
fn an_in_flight_request_completes_then_serve_returns() -> std::io::Result<()> {
    io_run::run(|| async {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let (entered, gate) = (Flag::default(), Flag::default());
        let service = service_fn({
            let (entered, gate) = (entered.clone(), gate.clone());
            move |_req: Request<hyper::body::Incoming>| {
                let (entered, gate) = (entered.clone(), gate.clone());
                async move {
                    entered.set();
                    gate.wait().await;
                    Ok::<_, Infallible>(Response::new(Full::new(Bytes::from_static(b"late"))))
                }
            }
        });
        let stop = Flag::default();
        let returned = Flag::default();
        let server = ioloop::spawn_local({
            let (stop, returned) = (stop.clone(), returned.clone());
            async move {
                let result = Server::new()
                    .grace_period(Duration::from_secs(3600))
                    .serve(listener, service, stop.wait())
                    .await;
                returned.set();
                result
            }
        });

        let stream = TcpStream::connect(addr).await?;
        let (mut sender, conn) = handshake(HyperIo::new(stream)).await.unwrap();
        let conn = ioloop::spawn_local(conn);
        let request = Request::get("/")
            .header("host", "test")
            .body(Empty::<Bytes>::new())
            .unwrap();
        let response = ioloop::spawn_local(sender.send_request(request));

        // The request is inside the service: stop now.
        entered.wait().await;
        stop.set();
        // Let serve see the stop and close its listener; it must not
        // return while the request is in flight.
        for _ in 0..10 {
            ioloop::task::yield_now().await;
        }
        assert!(
            !server.is_finished(),
            "serve returned with a request in flight"
        );
        let refused = TcpStream::connect(addr).await.unwrap_err();
        assert_eq!(refused.kind(), std::io::ErrorKind::ConnectionRefused);

        gate.set();
        let response = response.await.unwrap().unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        assert!(
            response
                .headers()
                .get("connection")
                .is_some_and(|v| v == "close")
        );
        let body = response.into_body().collect().await.unwrap().to_bytes();
        assert_eq!(&body[..], b"late");
        conn.await.unwrap().unwrap();
        returned.wait().await;
        server.await.unwrap()
    })
}

#[test]
fn a_request_that_outlives_the_grace_period_is_dropped() -> std::io::Result<()> {
    io_run::run(|| async {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let entered = Flag::default();
        let service = service_fn({
            let entered = entered.clone();
            move |_req: Request<hyper::body::Incoming>| {
                let entered = entered.clone();
                async move {
                    entered.set();
                    std::future::pending::<()>().await;
                    Ok::<_, Infallible>(Response::new(Empty::<Bytes>::new()))
                }
            }
        });
        let stop = Flag::default();
        let server = ioloop::spawn_local({
            let stop = stop.clone();
            async move {
                Server::new()
                    .grace_period(Duration::from_millis(50))
                    .serve(listener, service, stop.wait())
                    .await
            }
        });
        let stream = TcpStream::connect(addr).await?;
        let (mut sender, conn) = handshake(HyperIo::new(stream)).await.unwrap();
        let conn = ioloop::spawn_local(conn);
        let request = Request::get("/")
            .header("host", "test")
            .body(Empty::<Bytes>::new())
            .unwrap();
        let response = ioloop::spawn_local(sender.send_request(request));
        entered.wait().await;
        stop.set();
        server.await.unwrap()?;
        // The connection was dropped: the client sees it end, no response.
        assert!(response.await.unwrap().is_err());
        let _ = conn.await.unwrap();
        Ok(())
    })
}

/// `Server::keep_alive`: on (the default), a connection serves a second
/// request; off, the one response says `connection: close` and the server
/// closes the connection after it.
#[test]
fn keep_alive_off_closes_a_connection_after_its_one_response() -> std::io::Result<()> {
    io_run::run(|| async {
        for keep_alive in [true, false] {
            let listener = TcpListener::bind("127.0.0.1:0").await?;
            let addr = listener.local_addr()?;
            let service = service_fn(|_req: Request<hyper::body::Incoming>| async {
                Ok::<_, Infallible>(Response::new(Full::new(Bytes::from_static(b"hi"))))
            });
            let stop = Flag::default();
            let server = ioloop::spawn_local({
                let stop = stop.clone();
                async move {
                    Server::new()
                        .keep_alive(keep_alive)
                        .serve(listener, service, stop.wait())
                        .await
                }
            });
            let stream = TcpStream::connect(addr).await?;
            let (mut sender, conn) = handshake(HyperIo::new(stream)).await.unwrap();
            let conn = ioloop::spawn_local(conn);
            let get = || {
                Request::get("/")
                    .header("host", "test")
                    .body(Empty::<Bytes>::new())
                    .unwrap()
            };
            let response = sender.send_request(get()).await.unwrap();
            let closing = response
                .headers()
                .get("connection")
                .is_some_and(|v| v == "close");
            assert_eq!(closing, !keep_alive, "keep_alive({keep_alive})");
            let body = response.into_body().collect().await.unwrap().to_bytes();
            assert_eq!(&body[..], b"hi");
            if keep_alive {
                let again = sender.send_request(get()).await.unwrap();
                assert_eq!(again.status(), StatusCode::OK);
                again.into_body().collect().await.unwrap();
                drop(sender);
            }
            // Off, the server's close ends the client's connection.
            conn.await.unwrap().unwrap();
            stop.set();
            server.await.unwrap()?;
        }
        Ok(())
    })
}
