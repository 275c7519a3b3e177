//! [`ToUnixAddr`]: what names a Unix socket, a path or an address.

use std::ffi::{OsStr, OsString};
use std::io;
use std::os::unix::net::SocketAddr;
use std::path::{Path, PathBuf};

use super::sys::addr_from_path;

/// A value that names a Unix socket: a path, or a
/// [`SocketAddr`](std::os::unix::net::SocketAddr).
///
/// Implemented for paths, strings, `SocketAddr` and references to these.
/// On Linux and Android, a path whose first byte is NUL (`"\0name"`)
/// names `name` in the abstract namespace, as in tokio and Python: no
/// file, gone with the last socket bound to it.
///
/// # Examples
///
/// ```
/// use ioloop::net::unix::ToUnixAddr;
///
/// let file = "/run/app.sock".to_unix_addr().unwrap();
/// assert_eq!(file.as_pathname(), Some(std::path::Path::new("/run/app.sock")));
/// # #[cfg(target_os = "linux")] {
/// use std::os::linux::net::SocketAddrExt;
/// let abstract_name = "\0app".to_unix_addr().unwrap();
/// assert_eq!(abstract_name.as_abstract_name(), Some(&b"app"[..]));
/// # }
/// ```
pub trait ToUnixAddr {
    /// The address.
    ///
    /// # Errors
    ///
    /// `InvalidInput` if the path is too long for a Unix socket address
    /// (108 bytes on Linux) or has a NUL byte past the first.
    fn to_unix_addr(&self) -> io::Result<SocketAddr>;
}

impl ToUnixAddr for SocketAddr {
    fn to_unix_addr(&self) -> io::Result<SocketAddr> {
        Ok(self.clone())
    }
}

/// `ToUnixAddr` for the types a path is held in: the path types and the
/// strings.
macro_rules! to_unix_addr_as_path {
    ($($path:ty),*) => {
        $(
            impl ToUnixAddr for $path {
                fn to_unix_addr(&self) -> io::Result<SocketAddr> {
                    addr_from_path(Path::new(self))
                }
            }
        )*
    };
}

to_unix_addr_as_path!(Path, PathBuf, str, String, OsStr, OsString);

impl<T: ToUnixAddr + ?Sized> ToUnixAddr for &T {
    fn to_unix_addr(&self) -> io::Result<SocketAddr> {
        (**self).to_unix_addr()
    }
}
