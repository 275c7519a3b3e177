//! [`UCred`]: who is at the other end of a Unix stream (`SO_PEERCRED`).

use std::io;
use std::os::fd::AsFd;

use nix::sys::socket::{getsockopt, sockopt::PeerCredentials};

/// The credentials of a Unix stream's peer process, from
/// [`UnixStream::peer_cred`](super::UnixStream::peer_cred): the user,
/// group and process that made the connection (or the pair), as the
/// kernel recorded them then. They do not change if that process later
/// changes user, and the process may have exited since.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct UCred {
    uid: u32,
    gid: u32,
    pid: Option<i32>,
}

impl UCred {
    /// The peer's effective user id.
    pub fn uid(&self) -> u32 {
        self.uid
    }

    /// The peer's effective group id.
    pub fn gid(&self) -> u32 {
        self.gid
    }

    /// The peer's process id; `None` when the kernel does not say (it
    /// reports 0 for a process outside this one's pid namespace).
    pub fn pid(&self) -> Option<i32> {
        self.pid
    }
}

/// `getsockopt(SO_PEERCRED)`, through nix's safe wrapper.
pub(crate) fn peer_cred(socket: &impl AsFd) -> io::Result<UCred> {
    let cred = getsockopt(socket, PeerCredentials)?;
    Ok(UCred {
        uid: cred.uid(),
        gid: cred.gid(),
        pid: Some(cred.pid()).filter(|&pid| pid != 0),
    })
}
