//! Whole servers, end to end over real sockets: the line echo server on
//! ioloop, on the callback layer and on tokio, the callback layer itself,
//! the chat room (examples/chat), the HTTP hello-world twins with their parser, the key-value server
//! against well-behaved and hostile clients, and the raw mio loop the
//! benchmarks compare with (each of its modes doing its ioloop twin's work).

// examples/common/http.rs: at the crate root because the examples' HTTP
// servers name it `crate::http`.
#[path = "../../examples/common/http.rs"]
mod http;

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
mod tls_echo;
mod ws_echo;
