//! A throwaway PostgreSQL server per test (benches/postgres.sh: Debian's
//! `postgresql`, installed if missing; a new cluster in a temporary
//! directory, on a Unix socket there and a free TCP port), stopped and
//! removed when the [`Postgres`] is dropped.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The script that starts, stops and kills a server.
fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../benches/postgres.sh")
}

/// A running server of the test's own.
#[derive(Debug)]
pub struct Postgres {
    dir: PathBuf,
    port: u16,
}

impl Postgres {
    /// Starts a server, or `None` if there is none to be had here (the
    /// caller then skips, saying so). With `IOLOOP_REQUIRE_POSTGRES` set,
    /// as CI sets it, that is a failure instead.
    pub fn start() -> Option<Postgres> {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "ioloop-pg-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let out = Command::new("bash")
            .arg(script())
            .args(["start".as_ref(), dir.as_os_str()])
            .output()
            .expect("bash runs");
        let said = String::from_utf8_lossy(&out.stdout);
        let port = said
            .trim()
            .rsplit_once(" port=")
            .and_then(|(_, rest)| rest.split(' ').next()?.parse().ok());
        match port {
            Some(port) if out.status.success() => Some(Postgres { dir, port }),
            _ => {
                let why = String::from_utf8_lossy(&out.stderr);
                let _ = Command::new("bash")
                    .arg(script())
                    .arg("stop")
                    .arg(&dir)
                    .status();
                assert!(
                    std::env::var_os("IOLOOP_REQUIRE_POSTGRES").is_none(),
                    "no PostgreSQL server (IOLOOP_REQUIRE_POSTGRES is set): {why}"
                );
                eprintln!("no PostgreSQL server: skipped ({})", why.trim());
                None
            }
        }
    }

    /// Connection settings for its Unix socket (in its directory).
    pub fn unix_conn(&self) -> String {
        format!(
            "host={} port={} user=postgres",
            self.dir.display(),
            self.port
        )
    }

    /// Connection settings for its TCP port on 127.0.0.1.
    pub fn tcp_conn(&self) -> String {
        format!("host=127.0.0.1 port={} user=postgres", self.port)
    }

    /// An immediate shutdown: every backend killed at once, mid-query or
    /// not, as a crash would. Blocks until the server is gone.
    pub fn kill(&self) {
        let status = Command::new("bash")
            .arg(script())
            .arg("kill")
            .arg(&self.dir)
            .status()
            .expect("bash runs");
        assert!(status.success(), "the server could not be killed");
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        let _ = Command::new("bash")
            .arg(script())
            .arg("stop")
            .arg(&self.dir)
            .status();
    }
}
