//! Clients of the line echo protocol (`Hello!`, then `[echo] X` for each
//! line `X`), shared by the tests of every server that speaks it:
//! examples/line_echo, line_echo_callbacks and line_echo_tokio.
//!
//! Use with `use testkit::line_client;`.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

/// A blocking client.
pub struct Client {
    pub stream: TcpStream,
    reader: BufReader<TcpStream>,
}

impl Client {
    /// Connects and reads the greeting. `safety` bounds every read: a
    /// hang fails the test instead of stalling it.
    pub fn connect(addr: SocketAddr, safety: Duration) -> io::Result<Client> {
        let stream = TcpStream::connect(addr)?;
        stream.set_read_timeout(Some(safety))?;
        let mut client = Client {
            reader: BufReader::new(stream.try_clone()?),
            stream,
        };
        assert_eq!(client.line()?, "Hello!");
        Ok(client)
    }

    /// The next line, without its newline; the end of the stream is an
    /// `UnexpectedEof` error.
    pub fn line(&mut self) -> io::Result<String> {
        let mut line = String::new();
        if self.reader.read_line(&mut line)? == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "server closed",
            ));
        }
        assert!(line.ends_with('\n'), "unterminated reply {line:?}");
        line.pop();
        Ok(line)
    }

    pub fn send(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.stream.write_all(bytes)
    }

    /// Reads until the server closes; returns what was left.
    pub fn rest(&mut self) -> io::Result<Vec<u8>> {
        let mut rest = Vec::new();
        self.reader.read_to_end(&mut rest)?;
        Ok(rest)
    }
}

/// The protocol's echoes, each server's the same: a line, then lines
/// pipelined in one send (one ending in CRLF, one empty).
pub fn check_echoes(c: &mut Client) -> io::Result<()> {
    c.send(b"hello world\n")?;
    assert_eq!(c.line()?, "[echo] hello world");
    c.send(b"crlf line\r\n\nlast\n")?;
    assert_eq!(c.line()?, "[echo] crlf line");
    assert_eq!(c.line()?, "[echo] ");
    assert_eq!(c.line()?, "[echo] last");
    Ok(())
}

/// The line limit of a server started with `max_line` 1024, as every
/// server speaking the protocol keeps it: a line at the limit is echoed,
/// one byte over gets the `ERR` line, then the end of the stream.
pub fn check_line_limit_of_1024(c: &mut Client) -> io::Result<()> {
    let at_limit = "a".repeat(1024);
    c.send(format!("{at_limit}\n").as_bytes())?;
    assert_eq!(c.line()?, format!("[echo] {at_limit}"));
    c.send(format!("{}\n", "b".repeat(1025)).as_bytes())?;
    assert_eq!(c.line()?, "ERR line longer than 1024 bytes");
    assert!(c.rest()?.is_empty());
    Ok(())
}

/// `clients` ioloop clients at once, each doing `lines` echoes; returns
/// how many echoes came back right.
pub fn many_clients(addr: SocketAddr, clients: usize, lines: usize) -> io::Result<usize> {
    ioloop::block_on(async move {
        let tasks: Vec<_> = (0..clients)
            .map(|i| ioloop::spawn(async_client(addr, i, lines)))
            .collect();
        let mut echoed = 0;
        for task in tasks {
            echoed += task.await.expect("a client panicked")?;
        }
        Ok(echoed)
    })
}

/// One ioloop client: greeting, `lines` echoes, close, end of stream.
pub async fn async_client(addr: SocketAddr, id: usize, lines: usize) -> io::Result<usize> {
    let stream = ioloop::net::TcpStream::connect(addr).await?;
    let mut reader = ioloop::io::StreamReader::new(&stream);
    let mut writer = ioloop::io::StreamWriter::new(&stream);
    assert_eq!(reader.read_line().await?, Some(&b"Hello!"[..]));
    let mut echoed = 0;
    for n in 0..lines {
        writer.write(format!("client {id} line {n}\n").as_bytes());
        writer.drain().await?;
        let reply = reader.read_line().await?.expect("a reply");
        assert_eq!(reply, format!("[echo] client {id} line {n}").as_bytes());
        echoed += 1;
    }
    writer.close().await?;
    assert_eq!(reader.read_line().await?, None);
    Ok(echoed)
}
