//! `StreamReader`: lines, delimited records and exact-size frames out of a
//! byte stream, with the bytes kept in the reader (the lesson's `inbuf`).

use std::future::poll_fn;
use std::io;

use futures_io::AsyncRead;

use super::framing::Unterminated;
use super::read_buf::ReadBuf;

/// The default maximum line length of a [`StreamReader`]: 64 KiB, as
/// asyncio's default `limit`.
///
/// # Examples
///
/// ```
/// use ioloop::io::{DEFAULT_MAX_LINE_LENGTH, StreamReader};
///
/// let reader = StreamReader::new(&b""[..]);
/// assert_eq!(reader.max_line_length(), DEFAULT_MAX_LINE_LENGTH);
/// ```
pub const DEFAULT_MAX_LINE_LENGTH: usize = 64 * 1024;

/// A buffered reader that frames a byte stream into lines, delimited
/// records or exact-size frames: asyncio's `StreamReader`, the lesson's
/// `inbuf`.
///
/// The reader owns its buffer. Each method returns a slice borrowed from
/// it (no copy), valid until the next call on the reader. Bytes that were
/// read but not yet returned stay in the buffer, which is what makes every
/// method cancel-safe: dropping a future half-way loses nothing.
///
/// # Memory
///
/// The buffer is allocated on the first read, 8 KiB at a time, and grows
/// only while a line needs it, up to the [maximum line
/// length](Self::set_max_line_length) plus 8 KiB (about 72 KiB by
/// default), whatever the peer sends. Only [`read_exact`](Self::read_exact)
/// goes beyond that, to the `n` its caller asked for; that memory is given
/// back once those bytes are consumed.
///
/// # Combinators
///
/// `StreamReader` implements [`AsyncRead`] and
/// [`AsyncBufRead`](futures_io::AsyncBufRead), reading from the same
/// buffer, so futures-util's combinators work on it and can be mixed with
/// `read_line`. The inherent `read_line`, `read_until` and `read_exact`
/// shadow the extension-trait methods of the same names; call those as
/// `AsyncBufReadExt::read_line(&mut reader, &mut s)`.
///
/// # Examples
///
/// ```
/// use ioloop::io::StreamReader;
///
/// ioloop::block_on(async {
///     let mut reader = StreamReader::new(&b"Hello!\r\n[echo] hi\nbye"[..]);
///     assert_eq!(reader.read_line().await?, Some(&b"Hello!"[..]));
///     assert_eq!(reader.read_line().await?, Some(&b"[echo] hi"[..]));
///     assert_eq!(reader.read_line().await?, Some(&b"bye"[..]));
///     assert_eq!(reader.read_line().await?, None);
///     Ok::<_, std::io::Error>(())
/// })
/// .unwrap();
/// ```
pub struct StreamReader<R> {
    pub(super) inner: R,
    pub(super) buf: ReadBuf,
    pub(super) max_line: usize,
    /// How many unread bytes were already searched for `scan_for` and found
    /// not to contain it: the next search starts there, so a line arriving
    /// one byte at a time costs O(n), not O(n²).
    pub(super) scanned: usize,
    pub(super) scan_for: u8,
    /// Set after an overlong line was reported before its end arrived: the
    /// rest of it, up to and including this delimiter, is skipped by the
    /// next read of any kind.
    pub(super) skip_until: Option<u8>,
}

impl<R: AsyncRead + Unpin> StreamReader<R> {
    /// Wraps `inner`, with an empty buffer (nothing is allocated until the
    /// first read) and a maximum line length of 64 KiB.
    ///
    /// # Examples
    ///
    /// ```
    /// use ioloop::io::StreamReader;
    ///
    /// let reader = StreamReader::new(&b"ping\n"[..]);
    /// assert!(reader.buffer().is_empty());
    /// assert_eq!(reader.max_line_length(), 65536);
    /// ```
    pub fn new(inner: R) -> Self {
        StreamReader {
            inner,
            buf: ReadBuf::default(),
            max_line: DEFAULT_MAX_LINE_LENGTH,
            scanned: 0,
            scan_for: b'\n',
            skip_until: None,
        }
    }

    /// Reads the next line, without its line ending (`\n` or `\r\n`).
    ///
    /// Returns `Ok(None)` at a clean end of stream (no bytes pending). A
    /// last line that the stream ends without a `\n` is returned as a line,
    /// as it is.
    ///
    /// # Errors
    ///
    /// - [`InvalidData`](io::ErrorKind::InvalidData) if the line is longer
    ///   than the [maximum line length](Self::set_max_line_length). The
    ///   error comes as soon as the limit is passed, without waiting for the
    ///   end of the line. The reader stays usable: the overlong line is
    ///   dropped (the part still to come is skipped by the next read), and
    ///   the next call returns the line after it.
    /// - Any error of the inner reader, once the lines already buffered
    ///   are returned: asyncio raises it at once, but lines the peer sent
    ///   before a reset are data too. A partial line stays buffered, and a
    ///   later call may go on.
    ///
    /// # Cancellation
    ///
    /// Cancel-safe. The bytes of a partial line live in the reader, not in
    /// the future, so dropping the future (say, under
    /// [`timeout`](ioloop_runtime::time::timeout)) loses nothing, and the
    /// next call returns the whole line.
    ///
    /// # Examples
    ///
    /// ```
    /// use ioloop::io::StreamReader;
    ///
    /// ioloop::block_on(async {
    ///     let mut reader = StreamReader::new(&b"GET / HTTP/1.0\r\n\r\n"[..]);
    ///     assert_eq!(reader.read_line().await?, Some(&b"GET / HTTP/1.0"[..]));
    ///     assert_eq!(reader.read_line().await?, Some(&b""[..]));
    ///     assert_eq!(reader.read_line().await?, None);
    ///     Ok::<_, std::io::Error>(())
    /// })
    /// .unwrap();
    /// ```
    #[doc(alias = "readline")]
    pub async fn read_line(&mut self) -> io::Result<Option<&[u8]>> {
        let record = poll_fn(|cx| self.poll_record(cx, b'\n', Unterminated::Record));
        let Some(range) = record.await? else {
            return Ok(None);
        };
        let mut line = self.buf.get(range);
        if let Some(rest) = line.strip_suffix(b"\n") {
            line = rest.strip_suffix(b"\r").unwrap_or(rest);
        }
        Ok(Some(line))
    }

    /// Reads up to and including the next `delimiter`.
    ///
    /// Returns `Ok(None)` at a clean end of stream (no bytes pending).
    ///
    /// # Errors
    ///
    /// - [`UnexpectedEof`](io::ErrorKind::UnexpectedEof) if the stream ends
    ///   before the delimiter, as asyncio's `IncompleteReadError`. The bytes
    ///   that did arrive stay in the [buffer](Self::buffer).
    /// - [`InvalidData`](io::ErrorKind::InvalidData) if the bytes before
    ///   the delimiter pass the [maximum line length](Self::set_max_line_length).
    ///   The record is dropped, as `read_line` and asyncio's `readline` drop
    ///   an overlong line, and the next call returns the one after it.
    ///   asyncio's `readuntil` keeps it buffered, failing every later call
    ///   until the caller drains it by hand; dropping it keeps memory bounded
    ///   and the reader usable without knowing how much to drain.
    /// - Any error of the inner reader, as for `read_line`: once the
    ///   records already buffered are returned.
    ///
    /// # Cancellation
    ///
    /// Cancel-safe, as [`read_line`](Self::read_line).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::io::ErrorKind;
    /// use ioloop::io::StreamReader;
    ///
    /// ioloop::block_on(async {
    ///     let mut reader = StreamReader::new(&b"a\0bc\0d"[..]);
    ///     assert_eq!(reader.read_until(0).await?, Some(&b"a\0"[..]));
    ///     assert_eq!(reader.read_until(0).await?, Some(&b"bc\0"[..]));
    ///     let err = reader.read_until(0).await.unwrap_err();
    ///     assert_eq!(err.kind(), ErrorKind::UnexpectedEof);
    ///     assert_eq!(reader.buffer(), b"d");
    ///     Ok::<_, std::io::Error>(())
    /// })
    /// .unwrap();
    /// ```
    #[doc(alias = "readuntil")]
    pub async fn read_until(&mut self, delimiter: u8) -> io::Result<Option<&[u8]>> {
        let record = poll_fn(|cx| self.poll_record(cx, delimiter, Unterminated::Error)).await?;
        Ok(record.map(|range| self.buf.get(range)))
    }

    /// Reads exactly `n` bytes.
    ///
    /// The buffer grows to `n` if it must: the caller asked for them. The
    /// line limit does not apply.
    ///
    /// # Errors
    ///
    /// - [`UnexpectedEof`](io::ErrorKind::UnexpectedEof) if the stream ends
    ///   first. The bytes that did arrive stay in the buffer (see
    ///   [`buffer`](Self::buffer)); nothing is lost.
    /// - Any error of the inner reader, with the bytes read so far kept.
    ///
    /// # Cancellation
    ///
    /// Cancel-safe: the bytes gathered so far stay in the reader, and the
    /// next call picks them up.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::io::ErrorKind;
    /// use ioloop::io::StreamReader;
    ///
    /// ioloop::block_on(async {
    ///     let mut reader = StreamReader::new(&b"\x00\x05hello\x00\x09wor"[..]);
    ///     let len = reader.read_exact(2).await?;
    ///     let len = usize::from(u16::from_be_bytes([len[0], len[1]]));
    ///     assert_eq!(reader.read_exact(len).await?, b"hello");
    ///     reader.read_exact(2).await?;
    ///     let err = reader.read_exact(9).await.unwrap_err();
    ///     assert_eq!(err.kind(), ErrorKind::UnexpectedEof);
    ///     assert_eq!(reader.buffer(), b"wor");
    ///     Ok::<_, std::io::Error>(())
    /// })
    /// .unwrap();
    /// ```
    #[doc(alias = "readexactly")]
    pub async fn read_exact(&mut self, n: usize) -> io::Result<&[u8]> {
        let range = poll_fn(|cx| self.poll_exact(cx, n)).await?;
        Ok(self.buf.get(range))
    }
}
