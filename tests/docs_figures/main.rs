//! The figures the docs quote, computed from the code and compared with
//! the text (issue 40): code lines, `unsafe` blocks, functions and impls,
//! the sizes of types, the files on an echoed line's path; and the latest
//! benchmark run named alike in its table, chart and samples. A figure a doc
//! quotes is a claim in the table below; the test fails naming the doc,
//! the claim and the code's figure. `.ci/docs_figures.sh` runs it with the
//! echo path measured; `.ci/docs_figures.sh --print` prints every figure.

mod bench;
mod claims;
mod echo_path;
mod sizes;
mod source;

use std::path::Path;

use claims::{Figures, thousands};

/// The workspace root: this binary belongs to the testkit package.
const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");

/// The claims: a doc, and a phrase of it with `{figure}` where it gives a
/// number (see claims.rs). Figures that depend on the echo path are checked
/// only when it was measured.
const CLAIMS: &[(&str, &str)] = &[
    // The core's size, by the rule of source.rs.
    (
        "README.md",
        "the timers: {core code lines} lines of code in `runtime/src/event_loop/`",
    ),
    (
        "ARCHITECTURE.md",
        "({core code lines} code lines in {core files} files, blank, comment and test lines aside",
    ),
    (
        "ARCHITECTURE.md",
        "counts them; {core code lines with base.rs and sync/mod.rs} with `base.rs` and `sync/mod.rs` below it",
    ),
    // Where the `unsafe` is.
    (
        "README.md",
        "in the runtime, in {files with unsafe in ioloop-runtime} files: the task cell ({unsafe blocks in runtime/src/event_loop/cell.rs} blocks, {unsafe fn in runtime/src/event_loop/cell.rs} `unsafe fn`, {unsafe impl in runtime/src/event_loop/cell.rs} `unsafe impl`:",
    ),
    (
        "README.md",
        "`JoinHandle::poll` ({unsafe blocks in runtime/src/task/join.rs} block:",
    ),
    (
        "README.md",
        "the loop's wake path ({unsafe blocks in runtime/src/event_loop/core.rs} block, `with_running`",
    ),
    (
        "README.md",
        "the {unsafe blocks in ioloop-compat} calls in `ioloop-compat`",
    ),
    (
        "ARCHITECTURE.md",
        "the `unsafe` ({unsafe impl in runtime/src/event_loop/cell.rs} `unsafe impl`, {unsafe fn in runtime/src/event_loop/cell.rs} `unsafe fn`, one of them a trait's, {unsafe blocks in runtime/src/event_loop/cell.rs} blocks)",
    ),
    (
        "ARCHITECTURE.md",
        "`HyperIo` over a `Socket` (its `poll_read` holds {unsafe blocks in compat/src/hyper/io.rs} `unsafe` calls",
    ),
    (
        "ARCHITECTURE.md",
        "`TokioIo`: tokio's `AsyncRead` over a `Socket` into the `ReadBuf`'s unfilled part ({unsafe blocks in compat/src/tokio.rs} `unsafe` calls",
    ),
    (
        "ARCHITECTURE.md",
        "(the crate's {unsafe blocks in ioloop-compat} `unsafe` calls, 2 in each `poll_read`)",
    ),
    (
        "runtime/src/event_loop/cell.rs",
        "{unsafe impl in runtime/src/event_loop/cell.rs} `unsafe impl` (`Send` and `Sync` for the cell and for `Task`), {unsafe fn in runtime/src/event_loop/cell.rs} `unsafe fn` (one declared by a trait, `Runnable::poll_join`) and {unsafe blocks in runtime/src/event_loop/cell.rs} `unsafe` blocks",
    ),
    (
        "docs/guide/http.md",
        "`poll_read` in `compat/src/hyper/io.rs`, with {unsafe blocks in compat/src/hyper/io.rs} `unsafe` calls",
    ),
    // Sizes.
    (
        "ARCHITECTURE.md",
        "({bytes a small task asks for} bytes for a future that holds nothing: a {malloc chunk of a small task}-byte block",
    ),
    (
        "README.md",
        "a task is a {malloc chunk of a small task}-byte block since its join waker left it",
    ),
    (
        "ARCHITECTURE.md",
        "one thin pointer ({size_of JoinHandle} bytes in a run queue",
    ),
    (
        "ARCHITECTURE.md",
        "**The timer heap** ({size_of::<Entry>() in runtime/src/event_loop/timers.rs}-byte entries) and slot table ({size_of::<Slot>() in runtime/src/event_loop/timers.rs}-byte slots)",
    ),
    (
        "ARCHITECTURE.md",
        "(`seam::Socket`, a {size_of::<super::Socket>() in net/src/sys.rs}-byte id",
    ),
    // The echo path (measured by .ci/echo_path.sh).
    (
        "ARCHITECTURE.md",
        "The code of {files on the echo path} files runs for it: {library files on the echo path} of the library ({runtime files on the echo path} in `runtime/src/`, {net files on the echo path} in `net/src/`) and {example files on the echo path} of the example.",
    ),
    (
        "docs/guide/echoed_line.md",
        "The code of {files on the echo path} files runs for the line: {library files on the echo path} of the library and {example files on the echo path} of the example",
    ),
];

/// Every figure the code gives.
fn figures(root: &Path) -> Figures {
    let mut figures = Figures::new();
    source::figures(root, &mut figures);
    sizes::figures(root, &mut figures);
    figures
}

#[test]
fn every_figure_the_docs_quote_is_the_codes() {
    let root = Path::new(ROOT);
    let mut figures = figures(root);
    let path = echo_path::files();
    let mut wrong = bench::check(root);
    if let Some(files) = &path {
        echo_path::figures(files, &mut figures);
        wrong.extend(echo_path::check_table(root, files));
        println!("the echo path's files:");
        for f in files {
            println!("  {f}");
        }
    }
    println!("the code's figures:");
    for (name, value) in &figures {
        println!("  {name}: {}", thousands(*value));
    }
    let mut unchecked = 0;
    for (doc, phrase) in CLAIMS {
        if path.is_none() && phrase.contains("echo path}") {
            unchecked += 1;
            continue;
        }
        wrong.extend(claims::check(root, doc, phrase, &figures));
    }
    if unchecked > 0 {
        println!(
            "{unchecked} claims about the echo path not checked: .ci/docs_figures.sh measures it"
        );
    }
    assert!(
        wrong.is_empty(),
        "the docs and the code disagree:\n{}",
        wrong.join("\n")
    );
}
