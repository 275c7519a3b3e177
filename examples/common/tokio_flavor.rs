//! `--flavor current_thread|multi_thread`: which tokio runtime a tokio twin
//! runs on (issue 5 compares ioloop with both). Shared by the `*_tokio`
//! examples, included with `#[path]`.
//!
//! The runtime is built by hand rather than with `#[tokio::main]`, whose
//! flavor is fixed at compile time.

use std::io;

use tokio::runtime::{Builder, Runtime};

use crate::args::Args;

/// The runtime `--flavor` names (default `current_thread`), with I/O and
/// time enabled; exits with `usage` on an unknown flavor.
pub fn runtime(args: &Args, usage: &str) -> io::Result<Runtime> {
    let mut builder = match args.get("flavor", String::from("current_thread")).as_str() {
        "current_thread" => Builder::new_current_thread(),
        // One worker per core, tokio's default.
        "multi_thread" => Builder::new_multi_thread(),
        other => {
            eprintln!("unknown --flavor {other:?}\n\n{usage}");
            std::process::exit(2);
        }
    };
    builder.enable_all().build()
}
