//! Unix streams in a simulation: the names. A path (or on Linux an
//! abstract name) names a listener of its host, as a socket file would;
//! the connections are the network's, made at once within the host
//! ([`Network::connect_local`](super::network::Network::connect_local)).
//!
//! The simulation has no file system: a path is taken while its listener
//! is open and free once it closes, as if the program removed the file
//! (the usual `remove_file` before a `bind` touches the real one, not
//! this), and a `connect` to a free path is `ENOENT`, as to a missing
//! file.

use std::collections::BTreeMap;
use std::io;
#[cfg(any(target_os = "linux", target_os = "android"))]
use std::os::linux::net::SocketAddrExt;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::net::SocketAddr;

use super::errno::{EADDRINUSE, EINVAL, ENOENT, ENOTCONN, os};
use super::network::{HostId, SockId};

/// Who is named what.
#[derive(Default)]
pub(crate) struct Names {
    /// The listener at each host's path or abstract name.
    listeners: BTreeMap<(HostId, Vec<u8>), SockId>,
    /// Each Unix socket's own address and its peer's, unnamed where the
    /// kernel's are: a connecting stream's own, an accepted one's peer,
    /// both of a pair's.
    addrs: BTreeMap<SockId, [SocketAddr; 2]>,
    /// Abstract names given to listeners bound to the unnamed address.
    autobound: u32,
}

/// The key of `addr`: its path's bytes, or a NUL byte and its abstract
/// name; `EINVAL` for the unnamed address, which names no one.
fn key(addr: &SocketAddr) -> io::Result<Vec<u8>> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    if let Some(name) = addr.as_abstract_name() {
        return Ok([&[0], name].concat());
    }
    let path = addr.as_pathname().ok_or_else(|| os(EINVAL))?;
    Ok(path.as_os_str().as_bytes().to_vec())
}

/// The unnamed address.
fn unnamed() -> SocketAddr {
    SocketAddr::from_pathname("").expect("the empty path is the unnamed address")
}

impl Names {
    /// Names `listener` (bound by `bind` if `addr` is free) `addr` on
    /// `host`, or an abstract name for the unnamed address; `EADDRINUSE`
    /// if another listener has it.
    pub(crate) fn listen(
        &mut self,
        host: HostId,
        addr: &SocketAddr,
        bind: impl FnOnce() -> io::Result<SockId>,
    ) -> io::Result<SockId> {
        // The unnamed address is Linux's autobind: an abstract name of
        // five hex digits.
        #[cfg(any(target_os = "linux", target_os = "android"))]
        let addr = &if addr.is_unnamed() {
            self.autobound += 1;
            SocketAddr::from_abstract_name(format!("{:05x}", self.autobound))?
        } else {
            addr.clone()
        };
        let key = (host, key(addr)?);
        if self.listeners.contains_key(&key) {
            return Err(os(EADDRINUSE));
        }
        let listener = bind()?;
        self.listeners.insert(key, listener);
        self.addrs.insert(listener, [addr.clone(), unnamed()]);
        Ok(listener)
    }

    /// The listener at `addr` on `host`; `ENOENT` if none.
    pub(crate) fn listener(&self, host: HostId, addr: &SocketAddr) -> io::Result<SockId> {
        let key = (host, key(addr)?);
        self.listeners.get(&key).copied().ok_or_else(|| os(ENOENT))
    }

    /// A connection made: `client` to the listener `at` (`None`: a
    /// pair), `server` queued on it.
    pub(crate) fn connected(&mut self, client: SockId, server: SockId, at: Option<SockId>) {
        let name = at
            .and_then(|l| self.addrs.get(&l))
            .map_or_else(unnamed, |a| a[0].clone());
        self.addrs.insert(client, [unnamed(), name.clone()]);
        self.addrs.insert(server, [name, unnamed()]);
    }

    /// `id`'s own address, or with `peer` its peer's (no one asks a
    /// listener for its peer's).
    pub(crate) fn addr(&self, id: SockId, peer: bool) -> io::Result<SocketAddr> {
        let addrs = self.addrs.get(&id).ok_or_else(|| os(ENOTCONN))?;
        Ok(addrs[usize::from(peer)].clone())
    }

    /// `id` closed: its names go, and a listener's path is free.
    pub(crate) fn close(&mut self, id: SockId) {
        if self.addrs.remove(&id).is_some() {
            self.listeners.retain(|_, l| *l != id);
        }
    }
}
