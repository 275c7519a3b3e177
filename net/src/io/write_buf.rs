//! `WriteBuf`: the bytes a `StreamWriter` was given and the inner writer
//! has not taken yet (the lesson's `outbuf`).

/// Capacity kept when the buffer empties: 64 KiB.
///
/// Enough for a typical reply to reuse the allocation; more than that is
/// given back, so a connection that once sent a large burst does not keep
/// its peak memory for the rest of its life.
const KEEP: usize = 64 * 1024;

/// Storage with a send cursor: `bytes[head..]` is still to be sent.
///
/// Sending advances `head` instead of shifting the bytes, so a partial
/// write costs nothing; the sent prefix is dropped when new bytes are
/// appended and it is at least as large as what remains (each byte is then
/// moved at most once on average), or when everything has been sent.
#[derive(Debug, Default)]
pub(crate) struct WriteBuf {
    bytes: Vec<u8>,
    head: usize,
}

impl WriteBuf {
    /// The bytes still to be sent.
    pub(crate) fn unsent(&self) -> &[u8] {
        &self.bytes[self.head..]
    }

    /// How many bytes are still to be sent.
    pub(crate) fn len(&self) -> usize {
        self.bytes.len() - self.head
    }

    /// Appends `data` after the unsent bytes.
    pub(crate) fn push(&mut self, data: &[u8]) {
        if self.head > 0 && self.head >= self.len() {
            self.bytes.drain(..self.head);
            self.head = 0;
        }
        self.bytes.extend_from_slice(data);
    }

    /// Marks the first `n` unsent bytes as sent.
    pub(crate) fn advance(&mut self, n: usize) {
        self.head += n.min(self.len());
        if self.head == self.bytes.len() {
            self.head = 0;
            if self.bytes.capacity() > KEEP {
                self.bytes = Vec::new();
            } else {
                self.bytes.clear();
            }
        }
    }
}
