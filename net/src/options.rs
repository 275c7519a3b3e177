//! Socket options: the values checked before they reach `setsockopt(2)`,
//! and the macro that writes each option's setter and getter once for
//! every socket type that has it.

use std::io;
use std::time::Duration;

use ioloop_runtime::io::Registration;
use socket2::SockRef;

use crate::syscall::Simulated;

/// `value` if it is within `min..=255`, as the option `what` (`IP_TTL`
/// from 1, one-byte options from 0) must be; else `InvalidInput`. The OS
/// takes a C `int`: `u32::MAX` would arrive as -1, which Linux reads as
/// "the default" for `IP_TTL`, `IP_MULTICAST_TTL` and `IPV6_TCLASS`.
pub(crate) fn in_range(value: u32, min: u32, what: &str) -> io::Result<u32> {
    if !(min..=255).contains(&value) {
        let msg = format!("{what} must be within {min}..=255, not {value}");
        return Err(io::Error::new(io::ErrorKind::InvalidInput, msg));
    }
    Ok(value)
}

/// `SO_LINGER`'s time as the OS counts it, whole seconds of a C `int`: a
/// fraction rounded up (down, half a second would be an abortive close),
/// past `i32::MAX` seconds taken as that.
pub(crate) fn linger(linger: Option<Duration>) -> Option<Duration> {
    linger.map(|time| {
        let round_up = u64::from(time.subsec_nanos() > 0);
        Duration::from_secs(time.as_secs().saturating_add(round_up).min(i32::MAX as u64))
    })
}

/// What an option is set on: a registered socket, or a socket2 `Socket`;
/// `None` for a simulated socket, which has no options: setting one does
/// nothing, reading one is `Unsupported`.
pub(crate) trait Sock {
    fn sock(&self) -> Option<SockRef<'_>>;
}

impl<T: mio::event::Source + Simulated> Sock for Registration<T> {
    fn sock(&self) -> Option<SockRef<'_>> {
        self.get_ref().os()
    }
}

impl Sock for socket2::Socket {
    fn sock(&self) -> Option<SockRef<'_>> {
        Some(SockRef::from(self))
    }
}

/// A simulated socket's setter: the value was checked (`$arg` ran); nothing
/// is kept.
pub(crate) fn checked<T>(_: T) -> io::Result<()> {
    Ok(())
}

/// What reading an option of a simulated socket gives.
pub(crate) fn no_options() -> io::Error {
    crate::seam::not_simulated("a socket option")
}

/// Options' setters and getters, inside an `impl` of a type whose `io`
/// field is a [`Sock`], each under its `cfg` if it has one: `$set(value)`
/// calls socket2's `SockRef::$sock_set($arg)` (`$arg` may check `value`,
/// which `checks` then describes for the docs), and `$get()` returns
/// `SockRef::$sock_get()`, mapped through `$map` if given. The docs given
/// are the setter's, without its `# Errors`, which this adds. Or one of
/// the lists several types share: `@buffer_sizes`, `@tcp`, `@ip`.
macro_rules! sockopt {
    ($(
        $(#[cfg($cfg:meta)])?
        $(#[doc = $doc:expr])*
        $set:ident($value:ident: $ty:ty) => $sock_set:ident($arg:expr) $(, checks $range:literal)?;
        $get:ident -> $out:ty => $sock_get:ident $(.map($map:expr))?;
    )+) => {$(
        $(#[cfg($cfg)])?
        $(#[doc = $doc])*
        ///
        /// # Errors
        ///
        #[doc = concat!(
            $("`InvalidInput` outside ", $range, " (checked here: Linux reads a `u32::MAX`, ",
              "-1 as a C `int`, as \"the default\"); else ",)?
            "the OS's error from `setsockopt(2)`."
        )]
        pub fn $set(&self, $value: $ty) -> std::io::Result<()> {
            match $crate::options::Sock::sock(&self.io) {
                Some(sock) => sock.$sock_set($arg),
                // Simulated: checked, and kept nowhere.
                None => $crate::options::checked($arg),
            }
        }

        $(#[cfg($cfg)])?
        #[doc = concat!("The value [`", stringify!($set), "`](Self::", stringify!($set), ") sets.")]
        ///
        /// # Errors
        ///
        /// The OS's error from `getsockopt(2)`.
        pub fn $get(&self) -> std::io::Result<$out> {
            let sock = $crate::options::Sock::sock(&self.io).ok_or_else($crate::options::no_options)?;
            sock.$sock_get()$(.map($map))?
        }
    )+};

    // `SO_SNDBUF` and `SO_RCVBUF`, for every socket with an `io` field (the
    // sizes `getsockopt` returns saturated to the `u32` the setters take).
    (@buffer_sizes) => {
        $crate::options::sockopt! {
            /// Sets `SO_SNDBUF`, the size of the kernel's send buffer (on a
            /// Unix socket: how much sent from here may wait unread at the
            /// peer). Linux doubles it and clamps it to `net.core.wmem_max`,
            /// so [`send_buffer_size`](Self::send_buffer_size) rarely returns
            /// what was set.
            set_send_buffer_size(size: u32) => set_send_buffer_size(size as usize);
            send_buffer_size -> u32 => send_buffer_size.map(|size| u32::try_from(size).unwrap_or(u32::MAX));

            /// Sets `SO_RCVBUF`, the size of the kernel's receive buffer,
            /// doubled and clamped (to `net.core.rmem_max`) as `SO_SNDBUF`.
            /// A Unix socket takes it but is bounded by the sender's send
            /// buffer instead (and datagrams by `net.unix.max_dgram_qlen`).
            set_recv_buffer_size(size: u32) => set_recv_buffer_size(size as usize);
            recv_buffer_size -> u32 => recv_buffer_size.map(|size| u32::try_from(size).unwrap_or(u32::MAX));
        }
    };

    // `TCP_NODELAY`, `SO_LINGER` and `SO_KEEPALIVE`, for `TcpStream` and
    // `TcpSocket`.
    (@tcp) => {
        $crate::options::sockopt! {
            /// Sets `SO_KEEPALIVE`: with `true`, an idle connection is probed
            /// (first after two hours, by Linux's defaults), and one whose
            /// peer stops answering fails with `TimedOut`. Off by default; a
            /// `TcpSocket`'s stream keeps it.
            set_keepalive(keepalive: bool) => set_keepalive(keepalive);
            keepalive -> bool => keepalive;

            /// Sets `TCP_NODELAY`: with `true`, small writes go out at once
            /// instead of waiting (Nagle's algorithm) to be merged with later
            /// ones. Off by default.
            set_nodelay(nodelay: bool) => set_tcp_nodelay(nodelay);
            nodelay -> bool => tcp_nodelay;

            /// Sets `SO_LINGER`, what closing the stream does with unsent data.
            /// `None` (the default): the kernel sends it, then an end of file.
            /// `Some(ZERO)`: it is dropped and the connection reset, leaving no
            /// `TIME_WAIT`. A non-zero time changes nothing (the socket is
            /// non-blocking); a fraction of a second is rounded up, and past
            /// `i32::MAX` seconds taken as that.
            set_linger(linger: Option<std::time::Duration>) => set_linger($crate::options::linger(linger));
            linger -> Option<std::time::Duration> => linger;
        }
    };

    // The IP options `TcpStream`, `TcpSocket` and `UdpSocket` share:
    // `IP_TTL`, `IP_TOS`, `IPV6_TCLASS`, and the buffer sizes.
    (@ip) => {
        $crate::options::sockopt! {
            /// Sets `IP_TTL`, how many routers the IPv4 packets this socket
            /// sends may cross.
            set_ttl(ttl: u32) => set_ttl_v4($crate::options::in_range(ttl, 1, "IP_TTL")?), checks "1..=255";
            ttl -> u32 => ttl_v4;

            #[cfg(not(any(
                target_os = "fuchsia",
                target_os = "redox",
                target_os = "solaris",
                target_os = "haiku"
            )))]
            /// Sets `IP_TOS`, the type-of-service byte (DSCP and ECN bits)
            /// of the IPv4 packets this socket sends (an IPv6 one: the OS's
            /// call; Linux takes it for IPv4-mapped peers). Not on Fuchsia,
            /// Redox, Solaris or Haiku.
            set_tos(tos: u32) => set_tos_v4($crate::options::in_range(tos, 0, "IP_TOS")?), checks "0..=255";
            tos -> u32 => tos_v4;

            #[cfg(any(
                target_os = "android",
                target_os = "dragonfly",
                target_os = "freebsd",
                target_os = "fuchsia",
                target_os = "illumos",
                target_os = "linux",
                target_os = "macos",
                target_os = "netbsd",
                target_os = "openbsd",
            ))]
            /// Sets `IPV6_TCLASS`, the traffic class byte of the IPv6
            /// packets this socket sends (IPv6's `IP_TOS`). Linux, Android,
            /// the BSDs, macOS, illumos and Fuchsia.
            set_tclass_v6(tclass: u32) => set_tclass_v6($crate::options::in_range(tclass, 0, "IPV6_TCLASS")?), checks "0..=255";
            tclass_v6 -> u32 => tclass_v6;
        }

        $crate::options::sockopt!(@buffer_sizes);
    };
}
pub(crate) use sockopt;
