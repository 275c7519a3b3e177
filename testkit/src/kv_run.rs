//! The `kv_server` example in-process, and a small blocking RESP client
//! for it: shared by tests/servers/kv_server.rs (replies, limits,
//! redis-cli) and tests/churn/kv.rs (what a client's state costs the
//! server's heap).

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::Command;
use std::sync::{Arc, mpsc};
use std::time::Duration;

use crate::kv_server::{self, Config};
use crate::resp;
use crate::util::{self, parking::Signal};

/// Safety net for blocking reads and waits; never what a test measures.
pub const SAFETY: Duration = Duration::from_secs(30);

/// A kv_server on its own thread and runtime; stopped (gracefully) on
/// drop or by `stop`.
pub struct Server {
    /// Where it listens.
    pub addr: SocketAddr,
    stop: Arc<Signal>,
    thread: Option<std::thread::JoinHandle<io::Result<()>>>,
}

impl Server {
    /// A server serving at most `max_connections` clients at once.
    pub fn start(max_connections: usize) -> Server {
        let stop = util::signal();
        let (tx, rx) = mpsc::channel();
        let s = stop.clone();
        let thread = std::thread::spawn(move || {
            crate::account::runtime()?.block_on(async move {
                let listener = ioloop::net::TcpListener::bind("127.0.0.1:0").await?;
                tx.send(listener.local_addr()?).unwrap();
                let config = Config {
                    max_connections,
                    grace: Duration::from_secs(10),
                };
                kv_server::serve(listener, config, s.wait()).await
            })
        });
        let addr = rx.recv_timeout(SAFETY).expect("server started");
        Server {
            addr,
            stop,
            thread: Some(thread),
        }
    }

    /// A new connection to it.
    pub fn client(&self) -> io::Result<Client> {
        Client::connect(self.addr)
    }

    /// Stops the server and waits for `serve` to return (and its runtime
    /// to drop).
    pub fn stop(mut self) -> io::Result<()> {
        self.stop.set();
        self.thread.take().unwrap().join().unwrap()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.set();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// A blocking RESP client with a safety-net timeout on every read.
pub struct Client {
    /// The buffered reading side.
    pub reader: BufReader<TcpStream>,
    /// The writing side (the same socket).
    pub writer: TcpStream,
}

/// A reply, as the tests compare it.
#[derive(Debug, PartialEq)]
pub enum Reply {
    /// `+...`
    Simple(String),
    /// `-...`
    Error(String),
    /// `:n`
    Int(i64),
    /// `$n` and its bytes, or `$-1`.
    Bulk(Option<Vec<u8>>),
    /// `*n` and its elements.
    Array(Vec<Reply>),
}

/// The bulk reply holding `text`.
pub fn bulk(text: &str) -> Reply {
    Reply::Bulk(Some(text.as_bytes().to_vec()))
}

/// `+OK`.
pub fn ok() -> Reply {
    Reply::Simple("OK".into())
}

/// An error reply.
pub fn err(text: &str) -> Reply {
    Reply::Error(text.into())
}

/// A pub/sub message as a subscriber receives it.
pub fn message(channel: &str, text: &str) -> Reply {
    Reply::Array(vec![bulk("message"), bulk(channel), bulk(text)])
}

/// The reply to subscribing to `channel`, the `n`th subscription.
pub fn subscribed(channel: &str, n: i64) -> Reply {
    Reply::Array(vec![bulk("subscribe"), bulk(channel), Reply::Int(n)])
}

impl Client {
    /// Connects to `addr`.
    pub fn connect(addr: SocketAddr) -> io::Result<Client> {
        let stream = TcpStream::connect(addr)?;
        stream.set_read_timeout(Some(SAFETY))?;
        Ok(Client {
            reader: BufReader::new(stream.try_clone()?),
            writer: stream,
        })
    }

    /// Sends one command as an array of bulk strings.
    pub fn send(&mut self, args: &[&[u8]]) -> io::Result<()> {
        self.writer.write_all(&encode(args))
    }

    /// Sends one command and reads its reply.
    pub fn call(&mut self, args: &[&str]) -> io::Result<Reply> {
        let args: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
        self.send(&args)?;
        self.reply()
    }

    /// Reads one reply.
    pub fn reply(&mut self) -> io::Result<Reply> {
        let mut line = String::new();
        if self.reader.read_line(&mut line)? == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        let line = line
            .strip_suffix("\r\n")
            .expect("a reply line ends in CRLF");
        let (kind, rest) = line.split_at(1);
        Ok(match kind {
            "+" => Reply::Simple(rest.into()),
            "-" => Reply::Error(rest.into()),
            ":" => Reply::Int(rest.parse().unwrap()),
            "$" if rest == "-1" => Reply::Bulk(None),
            "$" => {
                let mut data = vec![0; rest.parse::<usize>().unwrap() + 2];
                self.reader.read_exact(&mut data)?;
                data.truncate(data.len() - 2);
                Reply::Bulk(Some(data))
            }
            "*" => {
                let n: usize = rest.parse().unwrap();
                Reply::Array((0..n).map(|_| self.reply()).collect::<io::Result<_>>()?)
            }
            _ => panic!("not a reply: {line:?}"),
        })
    }

    /// Whether the server has closed the connection: end of stream (or a
    /// reset) once what it sent before is read, not a read timeout.
    pub fn closed(&mut self) -> bool {
        let mut rest = Vec::new();
        match self.reader.read_to_end(&mut rest) {
            Ok(_) => rest.is_empty(),
            Err(e) => !matches!(
                e.kind(),
                io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
            ),
        }
    }
}

/// `args` as a RESP array of bulk strings.
pub fn encode(args: &[&[u8]]) -> Vec<u8> {
    let mut out = Vec::new();
    resp::array(&mut out, args.len());
    for arg in args {
        resp::bulk(&mut out, arg);
    }
    out
}

/// `redis-cli` on the PATH, or `None` (then the caller skips, saying so,
/// unless `IOLOOP_REQUIRE_REDIS_CLI` is set).
pub fn redis_cli() -> Option<&'static str> {
    let found = Command::new("redis-cli").arg("--version").output().is_ok();
    if !found {
        assert!(
            std::env::var_os("IOLOOP_REQUIRE_REDIS_CLI").is_none(),
            "redis-cli is not installed (apt-get install redis-tools)"
        );
        eprintln!("redis-cli not installed: skipped (apt-get install redis-tools)");
    }
    found.then_some("redis-cli")
}

/// Runs `redis-cli` against `addr` with `args`; its output, trimmed.
pub fn cli(addr: SocketAddr, args: &[&str]) -> io::Result<String> {
    let out = Command::new("redis-cli")
        .args(["-h", "127.0.0.1", "-p", &addr.port().to_string()])
        .args(args)
        .output()?;
    assert!(out.status.success(), "redis-cli {args:?}: {out:?}");
    Ok(String::from_utf8_lossy(&out.stdout).trim_end().to_string())
}
