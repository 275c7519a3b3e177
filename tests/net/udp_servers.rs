//! The cookbook's UDP time and echo servers (examples/udp_servers), with
//! real datagrams on 127.0.0.1.

#[path = "../../examples/udp_servers/servers.rs"]
mod servers;

use std::io;
use std::time::Duration;

use ioloop::net::UdpSocket;
use ioloop::time::timeout;

/// Safety net for each round trip (UDP can drop; loopback does not, but a
/// lost datagram must fail the test, not hang it).
const SAFETY: Duration = Duration::from_secs(10);

#[test]
fn both_cookbook_servers_answer_on_one_loop() -> io::Result<()> {
    ioloop::block_on(async {
        let time = UdpSocket::bind("127.0.0.1:0").await?;
        let echo = UdpSocket::bind("127.0.0.1:0").await?;
        let (time_addr, echo_addr) = (time.local_addr()?, echo.local_addr()?);
        let time_task = ioloop::spawn(servers::time_server(time));
        let echo_task = ioloop::spawn(servers::echo_server(echo));

        let client = UdpSocket::bind("127.0.0.1:0").await?;
        let mut buf = [0u8; 128];

        // The time server: any datagram gets `time.ctime()`'s format back.
        client.send_to(b"", time_addr).await?;
        let (n, from) = timeout(SAFETY, client.recv_from(&mut buf)).await??;
        assert_eq!(from, time_addr);
        let text = std::str::from_utf8(&buf[..n]).expect("ascii");
        let fields: Vec<&str> = text.split_whitespace().collect();
        assert_eq!(fields.len(), 5, "{text:?}");
        assert!(["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"].contains(&fields[0]));
        assert_eq!(fields[3].len(), 8, "hh:mm:ss in {text:?}");

        // The echo server: each datagram back as it was, many times over.
        for i in 0..500u32 {
            let msg = format!("ping {i}");
            client.send_to(msg.as_bytes(), echo_addr).await?;
            let (n, from) = timeout(SAFETY, client.recv_from(&mut buf)).await??;
            assert_eq!((from, &buf[..n]), (echo_addr, msg.as_bytes()));
        }

        time_task.abort();
        echo_task.abort();
        Ok(())
    })
}
