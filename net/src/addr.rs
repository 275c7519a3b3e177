//! [`ToSocketAddrs`], what every `bind` and `connect` takes, and
//! [`lookup_host`]: host names resolved on the blocking pool, literal
//! addresses at once.

use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6};

use ioloop_runtime::Handle;

use sealed::{Addrs, Prepared};

/// What the sockets' `bind` and `connect` (and
/// [`UdpSocket::send_to`](crate::UdpSocket::send_to)) take: one socket
/// address, several, or a host name and port to resolve. Everything
/// `std::net::ToSocketAddrs` accepts:
///
/// | type | example |
/// |---|---|
/// | [`SocketAddr`], [`SocketAddrV4`], [`SocketAddrV6`] | `listener.local_addr()?` |
/// | `(IpAddr, u16)`, `(Ipv4Addr, u16)`, `(Ipv6Addr, u16)` | `(Ipv4Addr::LOCALHOST, 8080)` |
/// | `(&str, u16)`, `(String, u16)`: a host or an IP, and a port | `("example.com", 443)` |
/// | `&str`, `String`: `"host:port"`, or a literal address | `"localhost:8080"`, `"[::1]:8080"` |
/// | `&[SocketAddr]` | `&[primary, fallback][..]` |
/// | `&T` for any of these | `&addr` |
///
/// # Resolution
///
/// A literal address (a `SocketAddr`, an IP and port, a string that parses
/// as one) is used as it is: no lookup, no trip to another thread, no
/// allocation. A host name is resolved with the system's resolver
/// (`getaddrinfo(3)` through `std::net::ToSocketAddrs`: `/etc/hosts`, DNS,
/// whatever `nsswitch.conf` says) on the runtime's blocking pool, never on
/// the loop thread, where its blocking would stall every task. See
/// [`lookup_host`].
///
/// Each user of the addresses says what it does with several: `connect`
/// tries them in turn, `bind` takes the first that binds, `send_to` sends
/// to the first.
///
/// # Sealed
///
/// The trait has no methods you can call and cannot be implemented outside
/// ioloop: how an address is turned into socket addresses is ioloop's to
/// change (racing the addresses of a name, say) without breaking anyone.
/// Every implementor is `Send` and `Sync`, so a generic `connect` future
/// is `Send` whenever the address is. To list the addresses of a name, call
/// [`lookup_host`].
///
/// # Examples
///
/// ```
/// use std::net::{Ipv4Addr, SocketAddr};
/// use ioloop::net::{TcpListener, TcpStream, UdpSocket};
///
/// ioloop::block_on(async {
///     let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await?;
///     let port = listener.local_addr()?.port();
///     let _by_name = TcpStream::connect(("localhost", port)).await?;
///     let _by_string = TcpStream::connect(format!("127.0.0.1:{port}")).await?;
///     let addrs: [SocketAddr; 1] = [listener.local_addr()?];
///     let _by_slice = TcpStream::connect(&addrs[..]).await?;
///     let _udp = UdpSocket::bind("127.0.0.1:0").await?;
///     Ok::<_, std::io::Error>(())
/// })
/// .unwrap();
/// ```
pub trait ToSocketAddrs: sealed::ToSocketAddrsPriv + Send + Sync {}

/// The trait's machinery, out of reach outside this crate.
pub(crate) mod sealed {
    use std::iter::Chain;
    use std::net::SocketAddr;
    use std::{io, option, vec};

    /// The hidden half of [`ToSocketAddrs`](super::ToSocketAddrs).
    pub trait ToSocketAddrsPriv {
        /// The addresses at once, or the name to resolve.
        fn prepare(&self) -> Prepared;
    }

    /// What an address value turns into before any lookup.
    #[derive(Debug)]
    pub enum Prepared {
        /// The addresses, there already.
        Ready(Addrs),
        /// A host name to resolve, and the port to pair its addresses with.
        Lookup {
            /// The host name.
            host: String,
            /// The port.
            port: u16,
        },
        /// A malformed value (a string without a port, a bad port).
        Invalid(io::Error),
    }

    /// The socket addresses of an address value, in order: a literal one,
    /// or a list (a caller's slice, copied, or what a name resolved to).
    pub type Addrs = Chain<option::IntoIter<SocketAddr>, vec::IntoIter<SocketAddr>>;
}

/// The socket addresses `addr` stands for: at once for a literal, from the
/// blocking pool for a name.
pub(crate) async fn resolve<T: ToSocketAddrs + ?Sized>(addr: &T) -> io::Result<Addrs> {
    match addr.prepare() {
        Prepared::Ready(addrs) => Ok(addrs),
        Prepared::Lookup { host, port } => lookup(host, port).await,
        Prepared::Invalid(err) => Err(err),
    }
}

/// `f` on each address `addr` stands for (a name resolved first), in
/// turn, until one succeeds: its result, or the last error (`InvalidInput`
/// if there was no address at all, as an empty slice gives).
pub(crate) async fn each_addr<T: ToSocketAddrs + ?Sized, R, F: Future<Output = io::Result<R>>>(
    addr: &T,
    mut f: impl FnMut(SocketAddr) -> F,
) -> io::Result<R> {
    let mut last = None;
    for addr in resolve(addr).await? {
        match f(addr).await {
            Ok(done) => return Ok(done),
            Err(err) => last = Some(err),
        }
    }
    Err(last.unwrap_or_else(no_addresses))
}

/// The error for an address value that stood for no address at all.
pub(crate) fn no_addresses() -> io::Error {
    let msg = "no socket address to use (an empty slice?)";
    io::Error::new(io::ErrorKind::InvalidInput, msg)
}

/// Resolves `host` on the blocking pool of the runtime running this task,
/// or, inside a simulation, among its hosts' names.
async fn lookup(host: String, port: u16) -> io::Result<Addrs> {
    if let Some(found) = crate::seam::lookup(&host) {
        let ip = found.ok_or_else(|| {
            let msg = format!("could not resolve {host:?}: no simulated host has that name");
            io::Error::new(io::ErrorKind::NotFound, msg)
        })?;
        return Ok(Some(SocketAddr::new(ip, port))
            .into_iter()
            .chain(Vec::new()));
    }
    let handle = Handle::try_current().ok_or_else(|| {
        io::Error::other(format!(
            "resolving {host:?} outside an ioloop runtime (it needs the blocking pool)"
        ))
    })?;
    let name = host.clone();
    let job = handle.spawn_blocking(move || {
        log::trace!("resolving {host:?}");
        std::net::ToSocketAddrs::to_socket_addrs(&(host.as_str(), port))
            .map(Iterator::collect::<Vec<_>>)
    });
    // std says "failed to lookup address information: Name or service not
    // known", and never which name.
    let named =
        |what, err: io::Error| io::Error::new(err.kind(), format!("{what} {name:?}: {err}"));
    let addrs = (job.await)
        .map_err(|join| named("resolving", join.into()))?
        .map_err(|err| named("could not resolve", err))?;
    if addrs.is_empty() {
        let msg = format!("{name:?} resolved to no address");
        return Err(io::Error::new(io::ErrorKind::InvalidInput, msg));
    }
    Ok(None.into_iter().chain(addrs))
}

/// Resolves `host` to its socket addresses: a host name through the system
/// resolver (`getaddrinfo(3)`), run on the runtime's blocking pool, never
/// on the loop thread; a literal address at once, without leaving the loop
/// thread. Takes any [`ToSocketAddrs`]: `"example.com:443"`,
/// `("example.com", 443)`, `"[::1]:80"`, a [`SocketAddr`]...
///
/// The addresses come in the resolver's order (RFC 6724's preferences, on
/// glibc), which is the order `connect` tries them in.
///
/// # Errors
///
/// A name that does not resolve: the resolver's error, with the name in
/// the message (`could not resolve "nosuch.invalid": failed to lookup
/// address information: Name or service not known`) and the kind std
/// gives it. `InvalidInput` for a string that is not `host:port`, or a
/// name that resolves to no address. An error if no ioloop runtime runs on
/// this thread (a name needs its blocking pool) or the runtime shuts down
/// meanwhile.
///
/// # Cancellation
///
/// Dropping the future abandons the lookup; the blocking thread finishes
/// it and drops the answer.
///
/// # Examples
///
/// ```
/// ioloop::block_on(async {
///     let mut addrs = ioloop::net::lookup_host("localhost:80").await?;
///     assert!(addrs.any(|addr| addr.ip().is_loopback() && addr.port() == 80));
///
///     let literal = ioloop::net::lookup_host("[::1]:80").await?; // no lookup
///     assert_eq!(literal.collect::<Vec<_>>(), ["[::1]:80".parse().unwrap()]);
///     Ok::<_, std::io::Error>(())
/// })
/// .unwrap();
/// ```
#[doc(alias = "getaddrinfo", alias = "resolve")]
pub async fn lookup_host(host: impl ToSocketAddrs) -> io::Result<impl Iterator<Item = SocketAddr>> {
    resolve(&host).await
}

/// A host and a port: an IP literal at once, a name for the pool.
fn host_port(host: &str, port: u16) -> Prepared {
    match host.parse::<IpAddr>() {
        Ok(ip) => one(SocketAddr::new(ip, port)),
        Err(_) => Prepared::Lookup {
            host: host.to_owned(),
            port,
        },
    }
}

fn one(addr: SocketAddr) -> Prepared {
    Prepared::Ready(Some(addr).into_iter().chain(Vec::new()))
}

/// `ToSocketAddrs` for each `$T`: its `prepare` binds the value to
/// `$value` and returns `$prepare`.
macro_rules! to_socket_addrs {
    ($($(#[$doc:meta])* $T:ty => |$value:pat_param| $prepare:expr;)+) => {$(
        $(#[$doc])*
        impl ToSocketAddrs for $T {}
        impl sealed::ToSocketAddrsPriv for $T {
            fn prepare(&self) -> Prepared {
                let $value = self;
                $prepare
            }
        }
    )+};
}

to_socket_addrs! {
    SocketAddr => |addr| one(*addr);
    SocketAddrV4 => |addr| one((*addr).into());
    SocketAddrV6 => |addr| one((*addr).into());
    (IpAddr, u16) => |addr| one((*addr).into());
    (Ipv4Addr, u16) => |addr| one((*addr).into());
    (Ipv6Addr, u16) => |addr| one((*addr).into());
    (&str, u16) => |(host, port)| host_port(host, *port);
    (String, u16) => |(host, port)| host_port(host, *port);
    String => |string| string.as_str().prepare();
    /// Each address in turn, from a copy of the slice.
    &[SocketAddr] => |addrs| Prepared::Ready(None.into_iter().chain(addrs.to_vec()));
}

/// `"ip:port"`, `"[ipv6]:port"` or `"host:port"`, split at the last colon
/// as std does.
impl ToSocketAddrs for str {}
impl sealed::ToSocketAddrsPriv for str {
    fn prepare(&self) -> Prepared {
        if let Ok(addr) = self.parse() {
            return one(addr);
        }
        let invalid = |msg| Prepared::Invalid(io::Error::new(io::ErrorKind::InvalidInput, msg));
        let Some((host, port)) = self.rsplit_once(':') else {
            return invalid(format!(
                "{self:?} is not a socket address: expected \"host:port\""
            ));
        };
        match port.parse() {
            Ok(port) => host_port(host, port),
            Err(_) => invalid(format!("{self:?}: invalid port {port:?}")),
        }
    }
}

impl<T: ToSocketAddrs + ?Sized> ToSocketAddrs for &T {}
impl<T: ToSocketAddrs + ?Sized> sealed::ToSocketAddrsPriv for &T {
    fn prepare(&self) -> Prepared {
        (**self).prepare()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn literal(addr: impl ToSocketAddrs) -> Vec<SocketAddr> {
        match addr.prepare() {
            Prepared::Ready(addrs) => addrs.collect(),
            other => panic!("not a literal: {other:?}"),
        }
    }

    fn name(addr: impl ToSocketAddrs) -> (String, u16) {
        match addr.prepare() {
            Prepared::Lookup { host, port } => (host, port),
            other => panic!("not a name: {other:?}"),
        }
    }

    fn invalid(addr: impl ToSocketAddrs) -> io::Error {
        match addr.prepare() {
            Prepared::Invalid(err) => err,
            other => panic!("not invalid: {other:?}"),
        }
    }

    #[test]
    fn literals_need_no_lookup() {
        let v4: SocketAddr = "127.0.0.1:80".parse().unwrap();
        let v6: SocketAddr = "[::1]:80".parse().unwrap();
        assert_eq!(literal(v4), [v4]);
        assert_eq!(literal("127.0.0.1:80"), [v4]);
        assert_eq!(literal(String::from("[::1]:80")), [v6]);
        assert_eq!(literal(("127.0.0.1", 80)), [v4]);
        assert_eq!(literal(("::1", 80)), [v6]);
        assert_eq!(literal((String::from("::1"), 80)), [v6]);
        assert_eq!(literal((Ipv4Addr::LOCALHOST, 80)), [v4]);
        assert_eq!(literal((Ipv6Addr::LOCALHOST, 80)), [v6]);
        assert_eq!(literal((IpAddr::V4(Ipv4Addr::LOCALHOST), 80)), [v4]);
        assert_eq!(literal(SocketAddrV4::new(Ipv4Addr::LOCALHOST, 80)), [v4]);
        assert_eq!(
            literal(SocketAddrV6::new(Ipv6Addr::LOCALHOST, 80, 0, 0)),
            [v6]
        );
        assert_eq!(literal(&[v4, v6][..]), [v4, v6]);
        let by_ref: &&SocketAddr = &&v4;
        assert_eq!(literal(by_ref), [v4]);
        assert_eq!(literal(&[][..]), []);
    }

    #[test]
    fn names_go_to_the_resolver() {
        assert_eq!(name("localhost:80"), ("localhost".into(), 80));
        assert_eq!(name(("example.com", 443)), ("example.com".into(), 443));
        assert_eq!(name((String::from("a.b"), 1)), ("a.b".into(), 1));
        assert_eq!(name(String::from("x:0")), ("x".into(), 0));
    }

    #[test]
    fn malformed_strings_are_refused_at_once() {
        let err = invalid("localhost");
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
        assert!(err.to_string().contains("localhost"), "{err}");
        let err = invalid("localhost:http");
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
        assert!(err.to_string().contains("http"), "{err}");
        assert_eq!(invalid("host:65536").kind(), io::ErrorKind::InvalidInput);
    }
}
