//! `StreamWriter`'s water marks, and what it lets a caller see and take
//! back: the queued amount, the inner writer.

use std::fmt;

use super::writer::StreamWriter;

impl<W> StreamWriter<W> {
    /// Sets the high- and low-water marks [`drain`](StreamWriter::drain)
    /// works with, in bytes: asyncio's `set_write_buffer_limits`, with the
    /// high mark first. Both default to 0.
    ///
    /// `drain` returns at once while at most `high` bytes are queued, and
    /// otherwise sends until at most `low` are.
    ///
    /// # Panics
    ///
    /// If `low > high`, as asyncio raises `ValueError`: such limits would
    /// make `drain` return with more queued than it was called with.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut writer = ioloop::io::StreamWriter::new(Vec::new());
    /// writer.set_write_buffer_limits(64 * 1024, 16 * 1024);
    /// assert_eq!(writer.write_buffer_limits(), (65536, 16384));
    /// ```
    pub fn set_write_buffer_limits(&mut self, high: usize, low: usize) {
        assert!(
            low <= high,
            "StreamWriter::set_write_buffer_limits: low-water mark {low} is above high-water mark {high}"
        );
        self.high = high;
        self.low = low;
    }

    /// The high- and low-water marks, in bytes, high first.
    ///
    /// # Examples
    ///
    /// ```
    /// let writer = ioloop::io::StreamWriter::new(Vec::new());
    /// assert_eq!(writer.write_buffer_limits(), (0, 0));
    /// ```
    pub fn write_buffer_limits(&self) -> (usize, usize) {
        (self.high, self.low)
    }

    /// How many bytes are queued, not yet taken by the inner writer.
    ///
    /// # Examples
    ///
    /// ```
    /// let writer = ioloop::io::StreamWriter::new(Vec::new());
    /// assert_eq!(writer.buffered(), 0);
    /// ```
    #[doc(alias = "get_write_buffer_size")]
    pub fn buffered(&self) -> usize {
        self.buf.len()
    }

    /// The inner writer.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut writer = ioloop::io::StreamWriter::new(Vec::new());
    /// writer.write(b"x");
    /// assert_eq!(writer.get_ref(), b"x");
    /// ```
    pub fn get_ref(&self) -> &W {
        &self.inner
    }

    /// The inner writer, mutably. Writing to it directly goes ahead of the
    /// queued bytes.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut writer = ioloop::io::StreamWriter::new(Vec::new());
    /// writer.get_mut().extend_from_slice(b"raw");
    /// assert_eq!(writer.get_ref(), b"raw");
    /// ```
    pub fn get_mut(&mut self) -> &mut W {
        &mut self.inner
    }

    /// Unwraps the inner writer. Queued bytes are dropped: flush first.
    ///
    /// # Examples
    ///
    /// ```
    /// let writer = ioloop::io::StreamWriter::new(Vec::<u8>::new());
    /// assert!(writer.into_inner().is_empty());
    /// ```
    pub fn into_inner(self) -> W {
        self.inner
    }
}

impl<W: fmt::Debug> fmt::Debug for StreamWriter<W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StreamWriter")
            .field("inner", &self.inner)
            .field("buffered", &self.buf.len())
            .field("high", &self.high)
            .field("low", &self.low)
            .field("error", &self.error)
            .finish()
    }
}
