//! `SignalKind`: which signal a [`Signal`](super::Signal) listens for.

use std::ffi::c_int;
use std::fmt;

use signal_hook::consts::signal as sig;

/// A signal number, named: which signal to listen for. The constructors
/// name the signals a server usually handles; [`from_raw`](Self::from_raw)
/// takes any other number, which [`Signal::new`](super::Signal::new) checks.
///
/// # Examples
///
/// ```
/// use ioloop::signal::SignalKind;
///
/// assert_eq!(SignalKind::terminate(), SignalKind::from_raw(15));
/// assert_eq!(format!("{:?}", SignalKind::interrupt()), "SignalKind(SIGINT)");
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct SignalKind(c_int);

impl SignalKind {
    /// SIGINT: the terminal's interrupt key, Ctrl-C.
    #[doc(alias = "SIGINT")]
    pub const fn interrupt() -> Self {
        SignalKind(sig::SIGINT)
    }

    /// SIGTERM: the polite request to stop (`kill`, systemd, Kubernetes),
    /// the usual cue for a graceful shutdown.
    #[doc(alias = "SIGTERM")]
    pub const fn terminate() -> Self {
        SignalKind(sig::SIGTERM)
    }

    /// SIGHUP: the terminal hung up; daemons take it as "reload your
    /// configuration".
    #[doc(alias = "SIGHUP")]
    pub const fn hangup() -> Self {
        SignalKind(sig::SIGHUP)
    }

    /// SIGQUIT: the terminal's quit key, Ctrl-\\.
    #[doc(alias = "SIGQUIT")]
    pub const fn quit() -> Self {
        SignalKind(sig::SIGQUIT)
    }

    /// SIGCHLD: a child process stopped or exited (how `ioloop::process`
    /// learns a child's exit where the kernel has no pidfd).
    #[doc(alias = "SIGCHLD")]
    pub const fn child() -> Self {
        SignalKind(sig::SIGCHLD)
    }

    /// SIGUSR1: for the application to give a meaning to.
    #[doc(alias = "SIGUSR1")]
    pub const fn user_defined1() -> Self {
        SignalKind(sig::SIGUSR1)
    }

    /// SIGUSR2: for the application to give a meaning to.
    #[doc(alias = "SIGUSR2")]
    pub const fn user_defined2() -> Self {
        SignalKind(sig::SIGUSR2)
    }

    /// The signal with number `signum`, such as `libc::SIGWINCH` or a
    /// real-time signal; any number, checked by [`Signal::new`](super::Signal::new).
    pub const fn from_raw(signum: c_int) -> Self {
        SignalKind(signum)
    }

    /// The signal's number.
    pub const fn as_raw(self) -> c_int {
        self.0
    }
}

impl From<c_int> for SignalKind {
    fn from(signum: c_int) -> Self {
        SignalKind(signum)
    }
}

impl fmt::Debug for SignalKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match signal_hook::low_level::signal_name(self.0) {
            Some(name) => write!(f, "SignalKind({name})"),
            None => write!(f, "SignalKind({})", self.0),
        }
    }
}
