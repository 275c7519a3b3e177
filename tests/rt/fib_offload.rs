//! The cookbook's fib server (examples/fib_offload): slow requests run on
//! the blocking pool while the same loop keeps echoing without delay.

#[path = "../../examples/fib_offload/servers.rs"]
mod servers;

use std::io;
use std::time::{Duration, Instant};

use futures_util::io::{AsyncReadExt, AsyncWriteExt};
use ioloop::net::{TcpListener, TcpStream, UdpSocket};
use ioloop::time::timeout;

const SAFETY: Duration = Duration::from_secs(60);

#[test]
fn a_slow_fib_does_not_delay_the_echo_port() -> io::Result<()> {
    ioloop::block_on(async {
        let fib = UdpSocket::bind("127.0.0.1:0").await?;
        let echo = TcpListener::bind("127.0.0.1:0").await?;
        let (fib_addr, echo_addr) = (fib.local_addr()?, echo.local_addr()?);
        let fib_task = ioloop::spawn(servers::fib_server(fib));
        let echo_task = ioloop::spawn(servers::echo_server(echo));

        // A slow request (seconds in a debug build), and a bad one.
        let client = UdpSocket::bind("127.0.0.1:0").await?;
        client.send_to(b"38", fib_addr).await?;
        client.send_to(b"nonsense", fib_addr).await?;
        let mut buf = [0u8; 64];
        // The bad request is answered first: it never waited for the slow one.
        let (n, _) = timeout(SAFETY, client.recv_from(&mut buf)).await??;
        assert!(buf[..n].starts_with(b"error:"));

        // Echo round trips while fib(38) computes.
        let mut stream = TcpStream::connect(echo_addr).await?;
        let mut worst = Duration::ZERO;
        let mut answered = None;
        for i in 0..1000u32 {
            let sent = Instant::now();
            stream.write_all(format!("{i:08}").as_bytes()).await?;
            let mut back = [0u8; 8];
            stream.read_exact(&mut back).await?;
            worst = worst.max(sent.elapsed());
            assert_eq!(back, format!("{i:08}").as_bytes());
            // Stop once the fib answer has arrived.
            if let Ok(got) = timeout(Duration::from_millis(1), client.recv_from(&mut buf)).await {
                answered = Some(got?.0);
                break;
            }
        }
        let n = match answered {
            Some(n) => n,
            None => timeout(SAFETY, client.recv_from(&mut buf)).await??.0,
        };
        assert_eq!(&buf[..n], servers::fib(38).to_string().as_bytes());
        // Generous: a loop blocked by the computation would take seconds.
        assert!(worst < Duration::from_millis(500), "worst echo {worst:?}");
        fib_task.abort();
        echo_task.abort();
        Ok(())
    })
}
