//! Whole servers, end to end over real sockets: the line echo server on
//! ioloop, on the callback layer and on tokio, the callback layer itself,
//! the chat room (examples/chat), the HTTP hello-world twins with their parser, the key-value server
//! against well-behaved and hostile clients, tokio-postgres against a
//! real PostgreSQL server, and the raw mio loop the
//! benchmarks compare with (each of its modes doing its ioloop twin's work).

// examples/common/http.rs: at the crate root because the examples' HTTP
// servers name it `crate::http`.
#[path = "../../examples/common/http.rs"]
mod http;
// examples/pg_client's connection and its runtime-neutral work: at the
// crate root because the example's files name each other so
// (`crate::work`).
#[path = "../../examples/pg_client/connect.rs"]
mod connect;
#[path = "../../examples/pg_client/work.rs"]
mod work;

mod callbacks_layer;
mod chat;
mod http_hello;
mod http_parser;
mod kv_hostile;
mod kv_limits;
mod kv_server;
mod line_echo;
mod line_echo_callbacks;
mod line_echo_tokio;
mod loops;
mod mio_reference;
mod pg_client;
mod tls_echo;
mod ws_echo;
