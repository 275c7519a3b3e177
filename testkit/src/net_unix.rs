//! Names for the Unix socket tests: a private temporary directory for
//! socket files, removed when dropped, and unique abstract names.
//!
//! Use with `use testkit::net_unix;`.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

static NEXT: AtomicUsize = AtomicUsize::new(0);

/// A number no other call in this process returns.
fn unique() -> usize {
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// A fresh directory under the system's temporary directory, named after
/// this process and a counter; removed, with what is in it, on drop.
pub struct TempDir(PathBuf);

impl TempDir {
    /// Creates the directory. Its name is short: a socket path must fit
    /// in 108 bytes.
    pub fn new() -> io::Result<TempDir> {
        let dir =
            std::env::temp_dir().join(format!("ioloop-unix-{}-{}", std::process::id(), unique()));
        std::fs::create_dir_all(&dir)?;
        Ok(TempDir(dir))
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.0
    }

    /// A path in the directory.
    pub fn join(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A name in the abstract namespace (Linux) that no other test uses,
/// without its leading NUL byte.
pub fn abstract_name(what: &str) -> String {
    format!("ioloop-test-{}-{}-{what}", std::process::id(), unique())
}
