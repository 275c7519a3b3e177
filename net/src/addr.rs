//! [`ToSocketAddr`]: socket addresses without name resolution.

use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6};

/// A value that names one socket address without a DNS lookup.
///
/// `std::net::ToSocketAddrs` resolves host names with a blocking
/// `getaddrinfo`, which would stall every task on the loop thread; this
/// trait accepts only what needs no resolution. Implemented for
/// [`SocketAddr`], `SocketAddrV4`, `SocketAddrV6`, `(IpAddr, u16)`,
/// `(Ipv4Addr, u16)`, `(Ipv6Addr, u16)`, `&str` and `String` (parsed as
/// `"127.0.0.1:8080"` or `"[::1]:8080"`), and references to these.
///
/// # Examples
///
/// ```
/// use ioloop::net::ToSocketAddr;
///
/// let addr = "127.0.0.1:7000".to_socket_addr().unwrap();
/// assert_eq!(addr.port(), 7000);
/// let err = "localhost:7000".to_socket_addr().unwrap_err();
/// assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput);
/// ```
pub trait ToSocketAddr {
    /// The address.
    ///
    /// # Errors
    ///
    /// `InvalidInput` if a string is not a literal `ip:port` (host names
    /// are refused rather than resolved on the loop thread).
    fn to_socket_addr(&self) -> io::Result<SocketAddr>;
}

impl ToSocketAddr for SocketAddr {
    fn to_socket_addr(&self) -> io::Result<SocketAddr> {
        Ok(*self)
    }
}

impl ToSocketAddr for SocketAddrV4 {
    fn to_socket_addr(&self) -> io::Result<SocketAddr> {
        Ok(SocketAddr::V4(*self))
    }
}

impl ToSocketAddr for SocketAddrV6 {
    fn to_socket_addr(&self) -> io::Result<SocketAddr> {
        Ok(SocketAddr::V6(*self))
    }
}

impl ToSocketAddr for (IpAddr, u16) {
    fn to_socket_addr(&self) -> io::Result<SocketAddr> {
        Ok(SocketAddr::new(self.0, self.1))
    }
}

impl ToSocketAddr for (Ipv4Addr, u16) {
    fn to_socket_addr(&self) -> io::Result<SocketAddr> {
        Ok(SocketAddr::new(IpAddr::V4(self.0), self.1))
    }
}

impl ToSocketAddr for (Ipv6Addr, u16) {
    fn to_socket_addr(&self) -> io::Result<SocketAddr> {
        Ok(SocketAddr::new(IpAddr::V6(self.0), self.1))
    }
}

impl ToSocketAddr for str {
    fn to_socket_addr(&self) -> io::Result<SocketAddr> {
        self.parse().map_err(|_| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "{self:?} is not an `ip:port` address; ioloop does not resolve host names \
                     on the loop thread (it would block every task), so resolve them first"
                ),
            )
        })
    }
}

impl ToSocketAddr for String {
    fn to_socket_addr(&self) -> io::Result<SocketAddr> {
        self.as_str().to_socket_addr()
    }
}

impl<T: ToSocketAddr + ?Sized> ToSocketAddr for &T {
    fn to_socket_addr(&self) -> io::Result<SocketAddr> {
        (**self).to_socket_addr()
    }
}
