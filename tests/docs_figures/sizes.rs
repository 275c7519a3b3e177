//! The sizes of types the docs quote.
//!
//! A public type's size is `size_of` here, and a task's allocation is what
//! `spawn` asks the allocator for (this binary's allocator records it). A
//! private type's size is what a unit test beside the type asserts with
//! `assert_eq!(size_of::<T>(), N)` (the crate's tests hold the type to N;
//! this reads N from that test's source).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::path::Path;

use crate::claims::Figures;

/// The system allocator, recording the sizes one thread asks for while
/// it says so.
struct Recording;

thread_local! {
    static RECORD: Cell<bool> = const { Cell::new(false) };
    static ASKED: Cell<[usize; 8]> = const { Cell::new([0; 8]) };
    static COUNT: Cell<usize> = const { Cell::new(0) };
}

// SAFETY: every call is passed to `System` unchanged; recording touches
// only const-initialised thread-locals, which never allocate.
unsafe impl GlobalAlloc for Recording {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if RECORD.with(Cell::get) {
            let n = COUNT.with(Cell::get);
            ASKED.with(|a| {
                let mut asked = a.get();
                asked[n.min(7)] = layout.size();
                a.set(asked);
            });
            COUNT.with(|c| c.set(n + 1));
        }
        // SAFETY: the caller's promises about `layout` hold for `System`.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System.alloc` with this `layout`.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Recording = Recording;

/// The sizes of allocations made on this thread while `f` runs.
fn allocations(f: impl FnOnce()) -> Vec<usize> {
    COUNT.with(|c| c.set(0));
    RECORD.with(|r| r.set(true));
    f();
    RECORD.with(|r| r.set(false));
    let n = COUNT.with(Cell::get);
    ASKED.with(Cell::get)[..n.min(8)].to_vec()
}

/// glibc's chunk for a request of `n` bytes: the request and an 8-byte
/// size field, rounded up to 16, at least 32.
fn malloc_chunk(n: usize) -> usize {
    (n + 8).div_ceil(16).max(2) * 16
}

pub fn figures(root: &Path, figures: &mut Figures) {
    let mut put = |name: &str, n: usize| figures.insert(name.to_owned(), n as u64);
    put("size_of JoinHandle", size_of::<ioloop::JoinHandle<()>>());
    put("size_of Sleep", size_of::<ioloop::time::Sleep>());
    put("size_of TcpStream", size_of::<ioloop::net::TcpStream>());

    // A task of a future that holds nothing: one allocation once the
    // runtime's tables have room (a first round of tasks makes it).
    let task = ioloop::block_on(async {
        for _ in 0..64 {
            ioloop::spawn(async {}).await.unwrap();
        }
        let mut handle = None;
        let asked = allocations(|| handle = Some(ioloop::spawn(async {})));
        handle.unwrap().await.unwrap();
        asked
    });
    assert_eq!(
        task.len(),
        1,
        "spawning a warm runtime's task allocates once: {task:?}"
    );
    put("bytes a small task asks for", task[0]);
    put("malloc chunk of a small task", malloc_chunk(task[0]));

    for (name, n) in asserted(root) {
        put(&name, n);
    }
}

/// `size_of::<T>() in FILE` for each `assert_eq!(size_of::<T>(), N)` in the
/// library crates' sources.
fn asserted(root: &Path) -> Vec<(String, usize)> {
    let mut found = vec![];
    for dir in ["runtime/src", "net/src", "compat/src"] {
        for file in rust_files(&root.join(dir)) {
            let text = std::fs::read_to_string(&file).unwrap();
            let text: String = text.split_whitespace().collect();
            let rel = file
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            for piece in text.split("assert_eq!(").skip(1) {
                let piece = piece.strip_prefix("std::mem::").unwrap_or(piece);
                let Some(rest) = piece.strip_prefix("size_of::<") else {
                    continue;
                };
                let Some((ty, rest)) = rest.split_once(">(),") else {
                    continue;
                };
                let Some((n, _)) = rest.split_once(')') else {
                    continue;
                };
                if let Ok(n) = n.trim_end_matches(',').parse() {
                    found.push((format!("size_of::<{ty}>() in {rel}"), n));
                }
            }
        }
    }
    found
}

/// Every `.rs` file under `dir`.
fn rust_files(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut files = vec![];
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
    files.sort();
    files
}
