//! Size parameters at their extremes on sockets: empty buffers, empty
//! writes, empty datagrams, kernel buffer sizes of 0 and `u32::MAX`.

use std::io::{self, IoSlice, IoSliceMut};
use std::net::TcpStream as StdStream;

use futures_util::{AsyncReadExt, AsyncWriteExt};
use ioloop::net::{TcpStream, UdpSocket, UnixDatagram, UnixStream};
use testkit::net_run::run;

async fn tcp_pair() -> io::Result<(TcpStream, StdStream)> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    let ours = TcpStream::connect(listener.local_addr()?).await?;
    let (peer, _) = listener.accept()?;
    Ok((ours, peer))
}

/// Reads and writes of nothing return 0 at once, on TCP and Unix streams,
/// whether anything is queued or not, and consume nothing.
#[test]
fn empty_reads_and_writes_on_streams_return_zero_at_once() -> io::Result<()> {
    run(|| async {
        let (mut tcp, _peer) = tcp_pair().await?;
        let (mut unix, mut unix_peer) = UnixStream::pair()?;
        // Nothing queued: a real read would wait forever.
        assert_eq!(tcp.read(&mut []).await?, 0);
        assert_eq!(tcp.write(&[]).await?, 0);
        assert_eq!(tcp.write_vectored(&[]).await?, 0);
        assert_eq!(tcp.write_vectored(&[IoSlice::new(&[])]).await?, 0);
        assert_eq!(tcp.read_vectored(&mut []).await?, 0);
        assert_eq!(tcp.try_write(&[])?, 0);
        assert_eq!(tcp.try_write_vectored(&[])?, 0);
        assert_eq!(unix.read(&mut []).await?, 0);
        assert_eq!(unix.write(&[]).await?, 0);
        assert_eq!(unix.write_vectored(&[]).await?, 0);
        assert_eq!(unix.try_write(&[])?, 0);
        assert_eq!(unix.try_write_vectored(&[])?, 0);
        // Something queued: an empty read leaves it there.
        unix_peer.write_all(b"kept").await?;
        assert_eq!(unix.read(&mut []).await?, 0);
        let mut empty: [IoSliceMut<'_>; 0] = [];
        assert_eq!(unix.read_vectored(&mut empty).await?, 0);
        let mut buf = [0u8; 4];
        unix.read_exact(&mut buf).await?;
        assert_eq!(&buf, b"kept");
        Ok(())
    })
}

/// An empty datagram is a datagram: sent, it arrives as one of length 0.
/// A receive into an empty buffer takes the next datagram whole and
/// returns 0 and its sender (the bytes are cut, as any datagram longer than
/// the buffer is); the one after is still there.
#[test]
fn empty_datagrams_and_receives_into_empty_buffers() -> io::Result<()> {
    run(|| async {
        let a = UdpSocket::bind("127.0.0.1:0").await?;
        let b = UdpSocket::bind("127.0.0.1:0").await?;
        let to = b.local_addr()?;
        assert_eq!(a.send_to(&[], to).await?, 0);
        assert_eq!(a.send_to(b"cut", to).await?, 3);
        assert_eq!(a.send_to(b"next", to).await?, 4);
        let mut buf = [0u8; 8];
        assert_eq!(b.recv_from(&mut buf).await?, (0, a.local_addr()?));
        assert_eq!(b.recv_from(&mut []).await?, (0, a.local_addr()?));
        assert_eq!(b.recv_from(&mut buf).await?, (4, a.local_addr()?));
        assert_eq!(&buf[..4], b"next");

        let (c, d) = UnixDatagram::pair()?;
        assert_eq!(c.send(&[]).await?, 0);
        assert_eq!(c.send(b"cut").await?, 3);
        assert_eq!(d.recv(&mut buf).await?, 0);
        assert_eq!(d.recv(&mut []).await?, 0);
        assert_eq!(c.send(b"next").await?, 4);
        assert_eq!(d.recv(&mut buf).await?, 4);
        Ok(())
    })
}

/// Kernel buffer sizes of 0 and `u32::MAX` are accepted (the kernel raises
/// the one to its minimum and cuts the other to its maximum), and the
/// stream still carries bytes.
#[test]
fn kernel_buffer_sizes_of_zero_and_u32_max_are_clamped() -> io::Result<()> {
    run(|| async {
        let (mut tcp, mut peer) = tcp_pair().await?;
        let (mut unix, mut unix_peer) = UnixStream::pair()?;
        for size in [0, u32::MAX] {
            tcp.set_send_buffer_size(size)?;
            tcp.set_recv_buffer_size(size)?;
            assert!(tcp.send_buffer_size()? > 0);
            assert!(tcp.recv_buffer_size()? > 0);
            unix.set_send_buffer_size(size)?;
            unix.set_recv_buffer_size(size)?;
            assert!(unix.send_buffer_size()? > 0);
            assert!(unix.recv_buffer_size()? > 0);
        }
        tcp.write_all(b"still").await?;
        let mut buf = [0u8; 5];
        std::io::Read::read_exact(&mut peer, &mut buf)?;
        assert_eq!(&buf, b"still");
        unix.write_all(b"still").await?;
        unix_peer.read_exact(&mut buf).await?;
        assert_eq!(&buf, b"still");
        Ok(())
    })
}
