//! What the socket types share, written once as macros. Each expands, for
//! the type it is given, to methods or trait impls that use its `io` field
//! (the socket's `Registration`, or for a stream the outbox, `Sock`, that
//! holds it; the socket is mio's, or for TCP and UDP `sys.rs`'s enum of an
//! OS socket or a simulated one).

/// `readable`, `writable`, `poll_read_ready` and `poll_write_ready`, for
/// every socket type.
macro_rules! readiness {
    ($T:ident) => {
        impl $T {
            /// Waits until the socket is readable (or the peer has hung
            /// up, or an error is pending), without reading. Any number of
            /// tasks may wait. A new socket starts out ready: the first
            /// wait returns at once, and a `try_` read then says
            /// `WouldBlock` if nothing is there (clearing the readiness).
            ///
            /// # Errors
            ///
            /// Fails once the runtime has shut down.
            pub async fn readable(&self) -> std::io::Result<()> {
                self.io.readable().await.map(drop)
            }

            /// Waits until the socket is writable (or closed, or in error).
            ///
            /// # Errors
            ///
            /// Fails once the runtime has shut down.
            pub async fn writable(&self) -> std::io::Result<()> {
                self.io.writable().await.map(drop)
            }

            /// Polls for read readiness, registering `cx` to be woken by
            /// it. A poll function has no place of its own among the
            /// waiters: per direction, the wakers of the latest 65 distinct
            /// tasks are kept (see
            /// [`Registration`](ioloop_runtime::io::Registration)).
            ///
            /// # Errors
            ///
            /// Fails once the runtime has shut down.
            pub fn poll_read_ready(
                &self,
                cx: &mut std::task::Context<'_>,
            ) -> std::task::Poll<std::io::Result<()>> {
                self.io.poll_read_ready(cx).map_ok(drop)
            }

            /// Polls for write readiness, as
            /// [`poll_read_ready`](Self::poll_read_ready).
            ///
            /// # Errors
            ///
            /// Fails once the runtime has shut down.
            pub fn poll_write_ready(
                &self,
                cx: &mut std::task::Context<'_>,
            ) -> std::task::Poll<std::io::Result<()>> {
                self.io.poll_write_ready(cx).map_ok(drop)
            }
        }
    };
}
pub(crate) use readiness;

/// `local_addr`, and `peer_addr` when named, returning `$Addr`.
macro_rules! addresses {
    ($T:ident: $Addr:ty $(, $peer_addr:ident)?) => {
        impl $T {
            /// The address this socket is bound to; a Unix socket that is
            /// not (a client, either end of a `pair`) has an unnamed one.
            ///
            /// # Errors
            ///
            /// The OS's error from `getsockname(2)` (rare).
            pub fn local_addr(&self) -> std::io::Result<$Addr> {
                self.io.get_ref().local_addr()
            }

            $(
                /// The address of the peer this socket is connected to
                /// (unnamed for a Unix client that did not bind).
                ///
                /// # Errors
                ///
                    /// `NotConnected` if it is not connected, or no longer.
                pub fn $peer_addr(&self) -> std::io::Result<$Addr> {
                    self.io.get_ref().peer_addr()
                }
            )?
        }
    };
}
pub(crate) use addresses;

/// `Debug` showing the named address methods' results, and `AsFd` and
/// `AsRawFd` on Unix, of the socket `$fd` names (the registered one unless
/// given).
macro_rules! debug_and_fd {
    ($T:ident: $($addr:ident),+) => {
        $crate::impls::debug_and_fd!($T: $($addr),+; |this| this.io.get_ref());
    };
    ($T:ident: $($addr:ident),+; |$this:ident| $fd:expr) => {
        impl std::fmt::Debug for $T {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_struct(stringify!($T))
                    $(.field(stringify!($addr), &self.$addr().ok()))+
                    .finish()
            }
        }

        #[cfg(unix)]
        impl std::os::fd::AsFd for $T {
            fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
                let $this = self;
                std::os::fd::AsFd::as_fd($fd)
            }
        }

        #[cfg(unix)]
        impl std::os::fd::AsRawFd for $T {
            fn as_raw_fd(&self) -> std::os::fd::RawFd {
                let $this = self;
                std::os::fd::AsRawFd::as_raw_fd($fd)
            }
        }
    };
}
pub(crate) use debug_and_fd;

/// What `TcpStream` and `UnixStream` share, given their address type,
/// whether a short read clears readiness (see `@read` below) and their
/// peek (their writes go through their outbox, `outbox.rs`): reads,
/// `shutdown`, the `try_*` calls, the `futures_io` traits on the stream and
/// on a reference to it, the halves (`halves!`) and the `shutdown` they
/// need ([`Stream`](crate::halves::Stream)); addresses, readiness, `Debug`
/// and the descriptor traits.
macro_rules! stream {
    ($T:ident: $Addr:ty; short_reads_drain: $drain:literal, peek: $peek:path) => {
        impl $T {
            /// Waits for data and copies it into `buf` without taking it
            /// from the stream: the next read returns the same bytes.
            ///
            /// # Errors
            ///
            /// Any error of `recv`; fails once the runtime has shut down.
            ///
            /// # Cancellation
            ///
            /// Cancel-safe: nothing is consumed.
            pub async fn peek(&self, buf: &mut [u8]) -> std::io::Result<usize> {
                self.io.read_io(|socket| $peek(socket, buf)).await
            }

            /// Reads into `buf`, which need not be initialized (hyper's
            /// `ReadBufCursor`), waiting for data: one `recv(2)`, readiness
            /// handled as in `AsyncRead`. `Ok(n)`: the first `n` bytes of
            /// `buf` are initialized; `Ok(0)` is the end of the stream (or
            /// an empty `buf`).
            ///
            /// # Errors
            ///
            /// Any error of `recv`; fails once the runtime has shut down.
            pub fn poll_read_uninit(
                &self,
                cx: &mut std::task::Context<'_>,
                buf: &mut [std::mem::MaybeUninit<u8>],
            ) -> std::task::Poll<std::io::Result<usize>> {
                $crate::impls::stream!(@read $drain, self, cx, buf, $crate::syscall::recv_uninit)
            }

            /// Shuts down one or both directions: `Shutdown::Write` is a
            /// half-close (the peer reads end of file once it has read what
            /// was sent, and this side can still read).
            ///
            /// # Errors
            ///
            /// The OS's error from `shutdown(2)`. A connection already
            /// gone (reset) is not one: it is shut, and this returns `Ok`.
            pub fn shutdown(&self, how: std::net::Shutdown) -> std::io::Result<()> {
                self.io.shutdown(how)
            }

            /// Reads what is there now into `buf`, without waiting: `Ok(0)`
            /// is the end of the stream.
            ///
            /// # Errors
            ///
            /// `WouldBlock` if nothing can be read now; any error of `recv`.
            pub fn try_read(&self, buf: &mut [u8]) -> std::io::Result<usize> {
                self.io.try_read_io(|socket| $crate::syscall::recv(socket, buf))
            }

            /// [`try_read`](Self::try_read) into several buffers, in one
            /// `readv`.
            ///
            /// # Errors
            ///
            /// As [`try_read`](Self::try_read).
            pub fn try_read_vectored(
                &self,
                bufs: &mut [std::io::IoSliceMut<'_>],
            ) -> std::io::Result<usize> {
                self.io
                    .try_read_io(|mut socket| std::io::Read::read_vectored(&mut socket, bufs))
            }

            /// Writes what the kernel takes now from `buf`, without waiting.
            ///
            /// # Errors
            ///
            /// `WouldBlock` if the send buffer is full; any error of `send`.
            pub fn try_write(&self, buf: &[u8]) -> std::io::Result<usize> {
                self.io.try_write(&[std::io::IoSlice::new(buf)])
            }

            /// [`try_write`](Self::try_write) from several buffers, in one
            /// `sendmsg`: at most the first `IOV_MAX` (1,024), as std's
            /// `write_vectored` (so do `poll_write_vectored` and the
            /// halves'), never `EMSGSIZE`.
            ///
            /// # Errors
            ///
            /// As [`try_write`](Self::try_write).
            pub fn try_write_vectored(
                &self,
                bufs: &[std::io::IoSlice<'_>],
            ) -> std::io::Result<usize> {
                self.io.try_write(bufs)
            }
        }

        $crate::impls::addresses!($T: $Addr, peer_addr);
        $crate::impls::readiness!($T);
        $crate::impls::debug_and_fd!($T: local_addr, peer_addr);
        $crate::halves::halves!($T);
        $crate::impls::stream!(@futures_io $T; $drain);
        $crate::impls::stream!(@futures_io &$T; $drain);

        impl $crate::halves::Stream for $T {
            fn shutdown(&self, how: std::net::Shutdown) -> std::io::Result<()> {
                $T::shutdown(self, how)
            }
        }
    };

    // One read into `$buf` with `$recv`, waiting for data; an empty `$buf`
    // returns `Ok(0)` at once, without a syscall. `short_reads_drain: true`:
    // a short read clears readiness too, since on a TCP stream the receive
    // buffer is then empty, and the next read waits for an edge instead of
    // spending a `recv` on `EAGAIN` (one `recv` and one `send` per echoed
    // message). `false`: only `WouldBlock` clears readiness (the length
    // given is 0, which no read is shorter than), since a Unix stream also
    // stops short at a message that carried descriptors or credentials,
    // with bytes still queued and no new edge coming.
    (@read $drain:literal, $this:expr, $cx:expr, $buf:ident, $recv:path) => {{
        if $buf.is_empty() {
            return std::task::Poll::Ready(Ok(0));
        }
        let len = if $drain { $buf.len() } else { 0 };
        $this.io.poll_read_stream($cx, len, |socket| $recv(socket, $buf))
    }};

    // `AsyncRead` and `AsyncWrite` on `$S` (the stream, or `&` it), where
    // its reads and writes wait (its halves come here too): writes go
    // through the outbox, `poll_flush` sends it, `poll_close` sends it and
    // shuts the write side down.
    (@futures_io $S:ty; $drain:literal) => {
        impl futures_io::AsyncRead for $S {
            #[inline]
            fn poll_read(
                self: std::pin::Pin<&mut Self>,
                cx: &mut std::task::Context<'_>,
                buf: &mut [u8],
            ) -> std::task::Poll<std::io::Result<usize>> {
                $crate::impls::stream!(@read $drain, self, cx, buf, $crate::syscall::recv)
            }
        }

        impl futures_io::AsyncWrite for $S {
            fn poll_write(
                self: std::pin::Pin<&mut Self>,
                cx: &mut std::task::Context<'_>,
                buf: &[u8],
            ) -> std::task::Poll<std::io::Result<usize>> {
                self.io.poll_write_one(cx, buf)
            }

            fn poll_write_vectored(
                self: std::pin::Pin<&mut Self>,
                cx: &mut std::task::Context<'_>,
                bufs: &[std::io::IoSlice<'_>],
            ) -> std::task::Poll<std::io::Result<usize>> {
                self.io.poll_write(cx, bufs)
            }

            fn poll_flush(
                self: std::pin::Pin<&mut Self>,
                cx: &mut std::task::Context<'_>,
            ) -> std::task::Poll<std::io::Result<()>> {
                self.io.poll_flush(cx)
            }

            fn poll_close(
                self: std::pin::Pin<&mut Self>,
                cx: &mut std::task::Context<'_>,
            ) -> std::task::Poll<std::io::Result<()>> {
                std::task::ready!(self.io.poll_flush(cx))?;
                std::task::Poll::Ready(self.shutdown(std::net::Shutdown::Write))
            }
        }
    };
}
pub(crate) use stream;

/// What `UdpSocket` and `UnixDatagram` share, given the calls on their mio
/// socket: receiving (from anyone, or the connected peer; into a slice, or
/// appended to a `Vec`), peeking, and sending to the connected peer. Each
/// writes its own `send_to` forms.
macro_rules! datagram {
    ($T:ident: $Addr:ty; recv: $recv:path, recv_from: $recv_from:path, peek_from: $peek_from:path, send: $send:path) => {
        impl $T {
            /// Receives one datagram into `buf`, waiting for one; returns
            /// its length (at most `buf.len()`: the rest of a longer one is
            /// discarded) and its sender (unnamed for an unbound Unix one).
            ///
            /// # Errors
            ///
            /// The OS's error; on a connected UDP socket,
            /// `ConnectionRefused` after an earlier datagram found no one
            /// listening at the peer.
            ///
            /// # Cancellation
            ///
            /// Cancel-safe: a datagram is either returned or left queued.
            #[doc(alias = "recvfrom")]
            pub async fn recv_from(&self, buf: &mut [u8]) -> std::io::Result<(usize, $Addr)> {
                self.io.read_io(|socket| $recv_from(socket, buf)).await
            }

            /// [`recv_from`](Self::recv_from) as a poll function, which
            /// keeps its waker as [`poll_read_ready`](Self::poll_read_ready)
            /// does.
            ///
            /// # Errors
            ///
            /// As [`recv_from`](Self::recv_from).
            pub fn poll_recv_from(
                &self,
                cx: &mut std::task::Context<'_>,
                buf: &mut [u8],
            ) -> std::task::Poll<std::io::Result<(usize, $Addr)>> {
                self.io.poll_read_io(cx, |socket| $recv_from(socket, buf))
            }

            /// [`recv_from`](Self::recv_from) without waiting.
            ///
            /// # Errors
            ///
            /// `WouldBlock` if no datagram is queued; as `recv_from`.
            pub fn try_recv_from(&self, buf: &mut [u8]) -> std::io::Result<(usize, $Addr)> {
                self.io.try_read_io(|socket| $recv_from(socket, buf))
            }

            /// Receives one datagram from the connected peer; a longer one
            /// is truncated, as in [`recv_from`](Self::recv_from).
            ///
            /// # Errors
            ///
            /// As [`send`](Self::send).
            ///
            /// # Cancellation
            ///
            /// Cancel-safe: a datagram is either returned or left queued.
            pub async fn recv(&self, buf: &mut [u8]) -> std::io::Result<usize> {
                self.io.read_io(|socket| $recv(socket, buf)).await
            }

            /// [`recv`](Self::recv) as a poll function (see
            /// [`poll_recv_from`](Self::poll_recv_from)).
            ///
            /// # Errors
            ///
            /// As [`recv`](Self::recv).
            pub fn poll_recv(
                &self,
                cx: &mut std::task::Context<'_>,
                buf: &mut [u8],
            ) -> std::task::Poll<std::io::Result<usize>> {
                self.io.poll_read_io(cx, |socket| $recv(socket, buf))
            }

            /// [`recv`](Self::recv) appending to `buf`, into its spare
            /// capacity (64 bytes reserved first if it has none): a longer
            /// datagram is truncated to it.
            ///
            /// # Errors
            ///
            /// As [`recv`](Self::recv).
            ///
            /// # Cancellation
            ///
            /// Cancel-safe: `buf` gets one datagram, or is left unchanged.
            pub async fn recv_buf(&self, buf: &mut Vec<u8>) -> std::io::Result<usize> {
                let recv = |socket: &_| {
                    $crate::impls::recv_into_spare(buf, |b| $recv(socket, b).map(|n| (n, ())))
                };
                self.io.read_io(recv).await.map(|(n, ())| n)
            }

            /// [`recv_buf`](Self::recv_buf) without waiting.
            ///
            /// # Errors
            ///
            /// `WouldBlock` if no datagram is queued; as `recv`.
            pub fn try_recv_buf(&self, buf: &mut Vec<u8>) -> std::io::Result<usize> {
                let recv = |socket: &_| {
                    $crate::impls::recv_into_spare(buf, |b| $recv(socket, b).map(|n| (n, ())))
                };
                self.io.try_read_io(recv).map(|(n, ())| n)
            }

            /// [`recv_from`](Self::recv_from) appending to `buf`, as
            /// [`recv_buf`](Self::recv_buf) (and as cancel-safe).
            ///
            /// # Errors
            ///
            /// As [`recv_from`](Self::recv_from).
            pub async fn recv_buf_from(
                &self,
                buf: &mut Vec<u8>,
            ) -> std::io::Result<(usize, $Addr)> {
                let recv = |socket: &_| $crate::impls::recv_into_spare(buf, |b| $recv_from(socket, b));
                self.io.read_io(recv).await
            }

            /// [`recv_buf_from`](Self::recv_buf_from) without waiting.
            ///
            /// # Errors
            ///
            /// `WouldBlock` if no datagram is queued; as `recv_from`.
            pub fn try_recv_buf_from(
                &self,
                buf: &mut Vec<u8>,
            ) -> std::io::Result<(usize, $Addr)> {
                let recv = |socket: &_| $crate::impls::recv_into_spare(buf, |b| $recv_from(socket, b));
                self.io.try_read_io(recv)
            }

            /// [`recv`](Self::recv) without waiting.
            ///
            /// # Errors
            ///
            /// `WouldBlock` if no datagram is queued; as `recv`.
            pub fn try_recv(&self, buf: &mut [u8]) -> std::io::Result<usize> {
                self.io.try_read_io(|socket| $recv(socket, buf))
            }

            /// Sends one datagram to the connected peer, waiting for room.
            ///
            /// # Errors
            ///
            /// `NotConnected` before [`connect`](Self::connect);
            /// `ConnectionRefused` once no one receives at the peer; on a
            /// Unix socket, `BrokenPipe` after `shutdown`; the OS's error.
            ///
            /// # Cancellation
            ///
            /// Cancel-safe: the datagram is sent whole or not at all.
            pub async fn send(&self, buf: &[u8]) -> std::io::Result<usize> {
                self.io.write_io(|socket| $send(socket, buf)).await
            }

            /// [`send`](Self::send) as a poll function, woken by write
            /// readiness.
            ///
            /// # Errors
            ///
            /// As [`send`](Self::send).
            pub fn poll_send(
                &self,
                cx: &mut std::task::Context<'_>,
                buf: &[u8],
            ) -> std::task::Poll<std::io::Result<usize>> {
                self.io.poll_write_io(cx, |socket| $send(socket, buf))
            }

            /// [`send`](Self::send) without waiting.
            ///
            /// # Errors
            ///
            /// `WouldBlock` if there is no room now (in the send buffer, or
            /// in a Unix peer's queue); as `send`.
            pub fn try_send(&self, buf: &[u8]) -> std::io::Result<usize> {
                self.io.try_write_io(|socket| $send(socket, buf))
            }

            /// Waits for a datagram and copies it into `buf` without taking
            /// it off the queue: the next receive returns it again.
            ///
            /// # Errors
            ///
            /// As [`recv_from`](Self::recv_from).
            ///
            /// # Cancellation
            ///
            /// Cancel-safe: nothing is consumed.
            pub async fn peek_from(&self, buf: &mut [u8]) -> std::io::Result<(usize, $Addr)> {
                self.io.read_io(|socket| $peek_from(socket, buf)).await
            }
        }

        $crate::impls::addresses!($T: $Addr, peer_addr);
        $crate::impls::readiness!($T);
    };
}
pub(crate) use datagram;

/// Runs `recv` on the spare capacity of `buf` (64 bytes reserved if it has
/// none, as tokio's `BufMut` for `Vec`) and keeps the `n` bytes it reports,
/// through [`fill_spare`].
pub(crate) fn recv_into_spare<R>(
    buf: &mut Vec<u8>,
    recv: impl FnOnce(&mut [u8]) -> std::io::Result<(usize, R)>,
) -> std::io::Result<(usize, R)> {
    if buf.len() == buf.capacity() {
        buf.reserve(64);
    }
    let offer = buf.capacity() - buf.len();
    fill_spare(buf, offer, recv, |received| {
        received.as_ref().map_or(0, |&(n, _)| n)
    })
}

/// Appends to `buf` what `fill` writes into `offer` bytes past its end:
/// they are zeroed for it, and cut back to the count `filled` reads from
/// its result (at most `offer`) before this returns, so a `Vec` is never
/// left with zeros however `fill` ends. With no `await` in between, the
/// reads built on it are cancel-safe without `unsafe`.
pub(crate) fn fill_spare<T>(
    buf: &mut Vec<u8>,
    offer: usize,
    fill: impl FnOnce(&mut [u8]) -> T,
    filled: impl FnOnce(&T) -> usize,
) -> T {
    let len = buf.len();
    buf.resize(len + offer, 0);
    let out = fill(&mut buf[len..]);
    // `min`: a reader claiming more than it was given breaks the contract.
    buf.truncate(len + filled(&out).min(offer));
    out
}
