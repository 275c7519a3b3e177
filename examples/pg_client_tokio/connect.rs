//! Connecting tokio-postgres over a tokio socket: `pg_client_tokio`, and
//! `pg_client --bench --tokio-thread`, which keeps its connections on a
//! tokio runtime of their own (the workaround for a library that needs
//! tokio's reactor).

use std::io;

use tokio::net::{TcpStream, UnixStream};
use tokio::sync::mpsc;
use tokio_postgres::config::Host;
use tokio_postgres::{Client, Config, NoTls, Notification};

use crate::work;

/// Connects to the server `config` names over a tokio socket and spawns
/// the connection's task, which hands notifications to the receiver.
pub async fn connect(
    config: &Config,
) -> io::Result<(Client, mpsc::UnboundedReceiver<Notification>)> {
    let port = config.get_ports().first().copied().unwrap_or(5432);
    let (tx, rx) = mpsc::unbounded_channel();
    let client = match config.get_hosts().first() {
        Some(Host::Unix(dir)) => {
            let stream = UnixStream::connect(dir.join(format!(".s.PGSQL.{port}"))).await?;
            let (client, connection) = config
                .connect_raw(stream, NoTls)
                .await
                .map_err(io::Error::other)?;
            tokio::spawn(work::drive(connection, tx));
            client
        }
        Some(Host::Tcp(host)) => {
            let stream = TcpStream::connect((host.as_str(), port)).await?;
            stream.set_nodelay(true)?;
            let (client, connection) = config
                .connect_raw(stream, NoTls)
                .await
                .map_err(io::Error::other)?;
            tokio::spawn(work::drive(connection, tx));
            client
        }
        None => {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "no host in --conn",
            ));
        }
    };
    Ok((client, rx))
}
