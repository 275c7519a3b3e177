//! Connecting tokio-postgres over an ioloop socket (`pg_client` and
//! tests/servers/pg_client.rs): a TCP or Unix stream wrapped in
//! `TokioIo`, handed to `Config::connect_raw`, and the connection's task
//! spawned on ioloop.

use std::io;

use ioloop::compat::tokio::TokioIo;
use ioloop::net::{TcpStream, UnixStream};
use tokio::sync::mpsc;
use tokio_postgres::config::Host;
use tokio_postgres::{Client, Config, Error, NoTls, Notification};

use crate::work;

/// What [`connect`] gives: the client, the notifications its connection
/// receives, and the connection's task (it ends when the connection does).
pub type Connected = (
    Client,
    mpsc::UnboundedReceiver<Notification>,
    ioloop::JoinHandle<Result<(), Error>>,
);

/// Connects to the server `config` names over an ioloop socket and spawns
/// the connection's task, which hands notifications to the receiver.
pub async fn connect(config: &Config) -> io::Result<Connected> {
    let port = config.get_ports().first().copied().unwrap_or(5432);
    let (tx, rx) = mpsc::unbounded_channel();
    let (client, task) = match config.get_hosts().first() {
        Some(Host::Unix(dir)) => {
            let stream = UnixStream::connect(dir.join(format!(".s.PGSQL.{port}"))).await?;
            let (client, connection) = config
                .connect_raw(TokioIo::new(stream), NoTls)
                .await
                .map_err(io::Error::other)?;
            (client, ioloop::spawn(work::drive(connection, tx)))
        }
        Some(Host::Tcp(host)) => {
            let stream = TcpStream::connect((host.as_str(), port)).await?;
            stream.set_nodelay(true)?;
            let (client, connection) = config
                .connect_raw(TokioIo::new(stream), NoTls)
                .await
                .map_err(io::Error::other)?;
            (client, ioloop::spawn(work::drive(connection, tx)))
        }
        None => {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "no host in --conn",
            ));
        }
    };
    Ok((client, rx, task))
}
