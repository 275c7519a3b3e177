//! The server side over HTTP/1.1 keep-alive, checked byte by byte from a
//! plain ioloop socket: many requests on one connection, then a pipelined
//! burst.

use futures_util::{AsyncReadExt, AsyncWriteExt};
use hyper::service::service_fn;
use ioloop::compat::hyper::serve;
use ioloop::net::{TcpListener, TcpStream};
use testkit::io_run;

use crate::{Flag, hello, hello_body};

/// Reads one response off `stream` (bytes left over stay in `pending`) and
/// returns its head and body.
async fn read_response(stream: &mut TcpStream, pending: &mut Vec<u8>) -> (String, String) {
    loop {
        if let Some(end) = pending.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8(pending[..end].to_vec()).unwrap();
            let len: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length: "))
                .expect("content-length")
                .parse()
                .unwrap();
            let start = end + 4;
            if pending.len() >= start + len {
                let body = String::from_utf8(pending[start..start + len].to_vec()).unwrap();
                pending.drain(..start + len);
                return (head, body);
            }
        }
        let mut buf = [0u8; 4096];
        let n = stream.read(&mut buf).await.unwrap();
        assert!(n > 0, "the server closed the connection mid-response");
        pending.extend_from_slice(&buf[..n]);
    }
}

#[test]
fn many_requests_on_one_keep_alive_connection() -> std::io::Result<()> {
    io_run::run(|| async {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let stop = Flag::default();
        let server = ioloop::spawn_local({
            let stop = stop.clone();
            async move { serve(listener, service_fn(hello), stop.wait()).await }
        });

        let mut stream = TcpStream::connect(addr).await?;
        let mut pending = Vec::new();
        // One at a time: 200 requests, each answered before the next.
        for i in 0..200 {
            let req = format!("GET /{i} HTTP/1.1\r\nhost: test\r\n\r\n");
            stream.write_all(req.as_bytes()).await?;
            let (head, body) = read_response(&mut stream, &mut pending).await;
            assert!(head.starts_with("HTTP/1.1 200 OK\r\n"), "{head}");
            assert!(!head.contains("connection: close"), "{head}");
            assert_eq!(body, hello_body(&format!("/{i}")));
        }
        // Pipelined: 50 requests in one write, answered in order.
        let burst: String = (0..50)
            .map(|i| format!("GET /p{i} HTTP/1.1\r\nhost: test\r\n\r\n"))
            .collect();
        stream.write_all(burst.as_bytes()).await?;
        for i in 0..50 {
            let (_, body) = read_response(&mut stream, &mut pending).await;
            assert_eq!(body, hello_body(&format!("/p{i}")));
        }
        assert!(pending.is_empty());

        stop.set();
        // The idle keep-alive connection is closed by the graceful stop.
        let mut rest = Vec::new();
        stream.read_to_end(&mut rest).await?;
        assert!(rest.is_empty());
        server.await.unwrap()
    })
}
