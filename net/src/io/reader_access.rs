//! `StreamReader`'s line limit, and what it lets a caller see and take
//! back: the unread bytes, the allocation, the inner reader.

use std::fmt;

use super::reader::StreamReader;

impl<R> StreamReader<R> {
    /// Sets the maximum line length, in bytes: 64 KiB by default,
    /// `usize::MAX` for none.
    ///
    /// The limit counts every byte before the `\n` (or the
    /// [`read_until`](StreamReader::read_until) delimiter), a `\r` before it
    /// included: it bounds what the peer may make the reader hold. A line of
    /// exactly `max` bytes is accepted; one byte more is an
    /// [`InvalidData`](std::io::ErrorKind::InvalidData) error. The buffer then
    /// never grows past `max` plus one 8 KiB read.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::io::ErrorKind;
    /// use ioloop::io::StreamReader;
    ///
    /// ioloop::block_on(async {
    ///     let mut reader = StreamReader::new(&b"1234\n12345\nok\n"[..]);
    ///     reader.set_max_line_length(4);
    ///     assert_eq!(reader.read_line().await?, Some(&b"1234"[..]));
    ///     let err = reader.read_line().await.unwrap_err();
    ///     assert_eq!(err.kind(), ErrorKind::InvalidData);
    ///     assert!(err.to_string().contains("4 bytes"));
    ///     assert_eq!(reader.read_line().await?, Some(&b"ok"[..]));
    ///     Ok::<_, std::io::Error>(())
    /// })
    /// .unwrap();
    /// ```
    #[doc(alias = "limit")]
    pub fn set_max_line_length(&mut self, max: usize) {
        self.max_line = max;
    }

    /// The maximum line length, in bytes.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut reader = ioloop::io::StreamReader::new(&b""[..]);
    /// reader.set_max_line_length(80);
    /// assert_eq!(reader.max_line_length(), 80);
    /// ```
    pub fn max_line_length(&self) -> usize {
        self.max_line
    }

    /// The bytes read from the inner reader and not yet returned.
    ///
    /// # Examples
    ///
    /// ```
    /// use ioloop::io::StreamReader;
    ///
    /// ioloop::block_on(async {
    ///     let mut reader = StreamReader::new(&b"one\ntwo\n"[..]);
    ///     reader.read_line().await?;
    ///     assert_eq!(reader.buffer(), b"two\n");
    ///     Ok::<_, std::io::Error>(())
    /// })
    /// .unwrap();
    /// ```
    pub fn buffer(&self) -> &[u8] {
        self.buf.unread()
    }

    /// The bytes allocated for the buffer: what the reader costs in memory.
    ///
    /// # Examples
    ///
    /// ```
    /// use ioloop::io::StreamReader;
    ///
    /// ioloop::block_on(async {
    ///     let mut reader = StreamReader::new(&b"hi\n"[..]);
    ///     assert_eq!(reader.capacity(), 0);
    ///     reader.read_line().await?;
    ///     assert!(reader.capacity() <= reader.max_line_length() + 8192);
    ///     Ok::<_, std::io::Error>(())
    /// })
    /// .unwrap();
    /// ```
    pub fn capacity(&self) -> usize {
        self.buf.capacity()
    }

    /// The inner reader.
    ///
    /// # Examples
    ///
    /// ```
    /// let reader = ioloop::io::StreamReader::new(&b"abc"[..]);
    /// assert_eq!(*reader.get_ref(), b"abc");
    /// ```
    pub fn get_ref(&self) -> &R {
        &self.inner
    }

    /// The inner reader, mutably. Reading from it directly skips the
    /// buffered bytes.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut reader = ioloop::io::StreamReader::new(&b"abc"[..]);
    /// *reader.get_mut() = &b"xyz"[..];
    /// assert_eq!(*reader.get_ref(), b"xyz");
    /// ```
    pub fn get_mut(&mut self) -> &mut R {
        &mut self.inner
    }

    /// Unwraps the inner reader. Bytes still buffered are dropped: take
    /// them from [`buffer`](Self::buffer) first if they matter.
    ///
    /// # Examples
    ///
    /// ```
    /// let reader = ioloop::io::StreamReader::new(&b"abc"[..]);
    /// assert_eq!(reader.into_inner(), b"abc");
    /// ```
    pub fn into_inner(self) -> R {
        self.inner
    }
}

impl<R: fmt::Debug> fmt::Debug for StreamReader<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StreamReader")
            .field("inner", &self.inner)
            .field("buffered", &self.buf.len())
            .field("max_line_length", &self.max_line)
            .finish()
    }
}
