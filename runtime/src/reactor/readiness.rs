//! Readiness bits, and the event a registration hands to its user.
//!
//! Bit layout of an entry's readiness (a `u8`):
//!
//! | bit | name | set by | cleared by |
//! |---|---|---|---|
//! | 0 | `READABLE` | a readable event | `clear_readiness` after `WouldBlock` |
//! | 1 | `WRITABLE` | a writable event | `clear_readiness` after `WouldBlock` |
//! | 2 | `READ_CLOSED` | peer shut down its write side, or hang-up | never: a closed direction stays closed |
//! | 3 | `WRITE_CLOSED` | hang-up, or an error on a writable socket | never |
//! | 4 | `ERROR` | `EPOLLERR` | `clear_readiness` (the caller has read the error by then) |
//! | 5 | `PRIORITY` | `EPOLLPRI`: TCP urgent data is pending | `clear_readiness`, with `READABLE` |
//!
//! A reader waits for any of `READABLE | READ_CLOSED | ERROR | PRIORITY`, a
//! writer for any of `WRITABLE | WRITE_CLOSED | ERROR`; a hang-up sets both
//! closed bits and so wakes both.

use std::fmt;

pub(crate) const READABLE: u8 = 1 << 0;
pub(crate) const WRITABLE: u8 = 1 << 1;
pub(crate) const READ_CLOSED: u8 = 1 << 2;
pub(crate) const WRITE_CLOSED: u8 = 1 << 3;
pub(crate) const ERROR: u8 = 1 << 4;
pub(crate) const PRIORITY: u8 = 1 << 5;

/// The bits that satisfy a reader.
pub(crate) const READ_MASK: u8 = READABLE | READ_CLOSED | ERROR | PRIORITY;
/// The bits that satisfy a writer.
pub(crate) const WRITE_MASK: u8 = WRITABLE | WRITE_CLOSED | ERROR;
/// The bits that never clear.
pub(crate) const CLOSED: u8 = READ_CLOSED | WRITE_CLOSED;

/// The readiness bits mio reports in `event`.
pub(crate) fn from_event(event: &mio::event::Event) -> u8 {
    let mut bits = 0;
    if event.is_readable() {
        bits |= READABLE;
    }
    if event.is_writable() {
        bits |= WRITABLE;
    }
    if event.is_read_closed() {
        bits |= READ_CLOSED;
    }
    if event.is_write_closed() {
        bits |= WRITE_CLOSED;
    }
    if event.is_error() {
        bits |= ERROR;
    }
    if event.is_priority() {
        bits |= PRIORITY;
    }
    bits
}

/// Readiness seen by [`Registration::poll_read_ready`] or
/// [`poll_write_ready`], stamped with the reactor tick that reported it.
///
/// Hand it back to [`Registration::clear_readiness`] after the I/O call
/// returned `WouldBlock`: the stamp makes sure a newer event, which arrived
/// after this one was read, is not cleared with it.
///
/// [`Registration::poll_read_ready`]: crate::io::Registration::poll_read_ready
/// [`poll_write_ready`]: crate::io::Registration::poll_write_ready
/// [`Registration::clear_readiness`]: crate::io::Registration::clear_readiness
///
/// # Examples
///
/// ```
/// use std::io::Write;
/// use ioloop::io::Registration;
///
/// ioloop::block_on(async {
///     let (a, mut b) = mio::net::UnixStream::pair()?;
///     let a = Registration::new(a)?;
///     b.write_all(b"x")?;
///     let event = a.readable().await?;
///     assert!(event.is_readable());
///     Ok::<_, std::io::Error>(())
/// })
/// .unwrap();
/// ```
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct ReadyEvent {
    pub(crate) bits: u8,
    pub(crate) tick: u32,
}

impl ReadyEvent {
    /// Data (or a pending connection) may be waiting.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::io::Write;
    /// use ioloop::io::Registration;
    ///
    /// ioloop::block_on(async {
    ///     let (a, mut b) = mio::net::UnixStream::pair()?;
    ///     let a = Registration::new(a)?;
    ///     b.write_all(b"x")?;
    ///     let event = a.readable().await?;
    ///     assert!(event.is_readable());
    ///     Ok::<_, std::io::Error>(())
    /// })
    /// .unwrap();
    /// ```
    pub fn is_readable(&self) -> bool {
        self.bits & READABLE != 0
    }

    /// There may be room to write.
    ///
    /// # Examples
    ///
    /// ```
    /// use ioloop::io::Registration;
    ///
    /// ioloop::block_on(async {
    ///     let (a, _b) = mio::net::UnixStream::pair()?;
    ///     let a = Registration::new(a)?;
    ///     assert!(a.writable().await?.is_writable());
    ///     Ok::<_, std::io::Error>(())
    /// })
    /// .unwrap();
    /// ```
    pub fn is_writable(&self) -> bool {
        self.bits & WRITABLE != 0
    }

    /// The peer will send nothing more (it shut down its write side or hung
    /// up); reads return what is left, then end of file.
    ///
    /// # Examples
    ///
    /// ```
    /// use ioloop::io::Registration;
    ///
    /// ioloop::block_on(async {
    ///     let (a, b) = mio::net::UnixStream::pair()?;
    ///     let a = Registration::new(a)?;
    ///     drop(b); // the peer hangs up
    ///     // Skip the optimistic first readiness, then wait for the real event.
    ///     let first = a.readable().await?;
    ///     a.clear_readiness(first);
    ///     let event = a.readable().await?;
    ///     assert!(event.is_read_closed());
    ///     Ok::<_, std::io::Error>(())
    /// })
    /// .unwrap();
    /// ```
    pub fn is_read_closed(&self) -> bool {
        self.bits & READ_CLOSED != 0
    }

    /// Writing can no longer succeed (hang-up or a socket error).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::net::Shutdown;
    /// use ioloop::io::Registration;
    ///
    /// ioloop::block_on(async {
    ///     let (a, _b) = mio::net::UnixStream::pair()?;
    ///     let a = Registration::new(a)?;
    ///     // Skip the optimistic first readiness, then close both directions.
    ///     let first = a.writable().await?;
    ///     a.clear_readiness(first);
    ///     a.get_ref().shutdown(Shutdown::Both)?;
    ///     assert!(a.writable().await?.is_write_closed());
    ///     Ok::<_, std::io::Error>(())
    /// })
    /// .unwrap();
    /// ```
    pub fn is_write_closed(&self) -> bool {
        self.bits & WRITE_CLOSED != 0
    }

    /// The source reported an error; the next I/O call returns it.
    ///
    /// # Examples
    ///
    /// ```
    /// use ioloop::io::Registration;
    ///
    /// ioloop::block_on(async {
    ///     let (a, _b) = mio::net::UnixStream::pair()?;
    ///     let a = Registration::new(a)?;
    ///     // A healthy socket reports no error.
    ///     assert!(!a.writable().await?.is_error());
    ///     Ok::<_, std::io::Error>(())
    /// })
    /// .unwrap();
    /// ```
    pub fn is_error(&self) -> bool {
        self.bits & ERROR != 0
    }

    /// TCP urgent data is pending (`EPOLLPRI`): a read stops short at the
    /// urgent mark, so a short read does not prove the socket drained.
    ///
    /// # Examples
    ///
    /// ```
    /// use ioloop::io::Registration;
    ///
    /// ioloop::block_on(async {
    ///     let (a, _b) = mio::net::UnixStream::pair()?;
    ///     let a = Registration::new(a)?;
    ///     assert!(!a.writable().await?.is_priority());
    ///     Ok::<_, std::io::Error>(())
    /// })
    /// .unwrap();
    /// ```
    pub fn is_priority(&self) -> bool {
        self.bits & PRIORITY != 0
    }
}

impl fmt::Debug for ReadyEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReadyEvent")
            .field("readable", &self.is_readable())
            .field("writable", &self.is_writable())
            .field("read_closed", &self.is_read_closed())
            .field("write_closed", &self.is_write_closed())
            .field("error", &self.is_error())
            .field("priority", &self.is_priority())
            .field("tick", &self.tick)
            .finish()
    }
}
