//! `ws_echo` (examples/ws_echo): async-tungstenite on ioloop's sockets
//! with no glue. Client and server in one process, on one loop: 1,000 text
//! round trips and a 1 MB binary frame, each checked, then a clean close.

#[path = "../../examples/ws_echo/serve.rs"]
mod serve;

use std::io;
use std::sync::mpsc;
use std::time::Duration;

use async_tungstenite::tungstenite::Message;
use futures_util::StreamExt;
use ioloop::net::{TcpListener, TcpStream};
use ioloop::time::timeout;

/// Safety net against a hang; never what the test measures.
const SAFETY: Duration = Duration::from_secs(60);
const ROUND_TRIPS: usize = 1000;

#[test]
fn text_and_a_megabyte_frame_echo_byte_for_byte() -> io::Result<()> {
    let (ends_tx, ends) = mpsc::channel();
    ioloop::block_on(timeout(SAFETY, async {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let on_end = move |_, end: &serve::End| {
            let _ = ends_tx.send(end.to_string());
        };
        drop(ioloop::spawn_local(serve::serve(listener, on_end)));

        let tcp = TcpStream::connect(addr).await?;
        tcp.set_nodelay(true)?;
        let (mut ws, _) = async_tungstenite::client_async(format!("ws://{addr}/"), tcp)
            .await
            .map_err(io::Error::other)?;
        for i in 0..ROUND_TRIPS {
            let text = format!("message {i}");
            ws.send(Message::text(text.clone()))
                .await
                .map_err(io::Error::other)?;
            let echoed = ws
                .next()
                .await
                .expect("an echo")
                .map_err(io::Error::other)?;
            assert_eq!(echoed, Message::text(text));
        }
        let big: Vec<u8> = (0..1_000_000u32).map(|i| (i * 31 % 251) as u8).collect();
        ws.send(Message::binary(big.clone()))
            .await
            .map_err(io::Error::other)?;
        let echoed = ws
            .next()
            .await
            .expect("an echo")
            .map_err(io::Error::other)?;
        assert_eq!(echoed.into_data().as_ref(), &big[..]);
        ws.close(None).await.map_err(io::Error::other)?;
        // The server's close reply, then the end of the stream.
        while let Some(message) = ws.next().await {
            assert!(matches!(message, Ok(Message::Close(_))), "{message:?}");
        }
        Ok::<_, io::Error>(())
    }))
    .expect("the WebSocket conversation hung")?;
    let end = ends
        .recv_timeout(SAFETY)
        .expect("the server reported the end");
    assert_eq!(end, format!("closed after {} message(s)", ROUND_TRIPS + 1));
    Ok(())
}
