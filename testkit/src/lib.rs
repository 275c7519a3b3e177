//! Helpers shared by ioloop's integration tests.
//!
//! The tests are grouped by area into a few binaries (`tests/rt/main.rs`,
//! `tests/net/main.rs`, ...), and each binary uses a different subset of
//! these helpers. As `pub` items of a library they are compiled once and
//! never warn when a binary leaves one unused, so no test needs a
//! `dead_code` allowance. A dev-dependency of the root package only;
//! never published.

pub mod account;
pub mod io_reader;
pub mod io_run;
pub mod io_unix;
pub mod io_writer;
pub mod kv_run;
pub mod line_client;
pub mod log_capture;
pub mod net_proc;
pub mod net_run;
pub mod net_unix;
pub mod pg;
pub mod signal_raise;
pub mod stress_echo_child;
pub mod stress_proc;
pub mod stress_rng;
pub mod time_poll;
pub mod util;

// The examples' server code the tests run, compiled here once. At the
// crate root, under these names, because the files name each other so
// (`crate::handler`, `crate::loops`).

/// examples/line_echo/handler.rs: the line echo protocol on ioloop.
#[path = "../../examples/line_echo/handler.rs"]
pub mod handler;
/// examples/common/kv_pubsub.rs: the key-value server's pub/sub.
#[path = "../../examples/common/kv_pubsub.rs"]
pub mod kv_pubsub;
/// examples/kv_server/server.rs: the key-value server on ioloop.
#[path = "../../examples/kv_server/server.rs"]
pub mod kv_server;
/// examples/common/kv_store.rs: the key-value server's commands and store.
#[path = "../../examples/common/kv_store.rs"]
pub mod kv_store;
/// examples/common/loops.rs: `--loops N`, one listener per loop on one port.
#[path = "../../examples/common/loops.rs"]
pub mod loops;
/// examples/common/resp.rs: the Redis protocol.
#[path = "../../examples/common/resp.rs"]
pub mod resp;
/// examples/line_echo/server.rs: the line echo server as `main` runs it.
#[path = "../../examples/line_echo/server.rs"]
pub mod server;
/// The stop notice of the line echo server (in its handler.rs), under the
/// name the tests use.
pub mod stop {
    pub use crate::handler::{Listener, Stop};
}
/// examples/line_echo_tokio/handler.rs: the line echo protocol on tokio.
#[path = "../../examples/line_echo_tokio/handler.rs"]
pub mod tokio_handler;
