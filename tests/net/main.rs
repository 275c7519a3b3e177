//! Sockets: TCP accept, half-close, reset, split, combinators, EMFILE and
//! SIGPIPE; host names and the other address forms; `TcpSocket`'s options
//! before bind, listen and connect, and the options of connected sockets;
//! UDP round trips and the cookbook's UDP servers; Unix streams and
//! datagrams, with their own EMFILE and SIGPIPE scenarios; several tasks
//! waiting on one socket; every waiter path past its eviction limit
//! (`waiters`); every shareable object with one task waiting and another
//! calling every other method (`two_users`); the outbox's bugs of issue
//! 40 (`outbox`).
//!
//! `tcp_emfile`, `tcp_sigpipe`, `unix_emfile` and `unix_sigpipe` run their
//! scenario in a child process (this binary again, selected by an
//! environment variable, running only that test), so the lowered descriptor limit and the default SIGPIPE
//! action are the child's alone. The descriptor count of
//! 10,000 connect/close cycles watches the whole process, so it runs in
//! tests/stress/ (`tcp_fd_count`).

mod datagram_forms;
mod descriptors;
mod extremes;
mod gather;
mod names;
mod options;
mod outbox;
mod shared_sockets;
mod tcp_accept;
mod tcp_combinators;
mod tcp_emfile;
mod tcp_half_close;
mod tcp_reset;
mod tcp_sigpipe;
mod tcp_socket;
mod tcp_split;
mod try_io;
mod two_users;
mod udp_round_trip;
mod udp_servers;
mod unix_datagram;
mod unix_emfile;
mod unix_sigpipe;
mod unix_stream;
mod vectored;
mod waiters;
