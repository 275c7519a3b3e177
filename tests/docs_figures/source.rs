//! What the docs count in the sources: code lines, and `unsafe`.
//!
//! The rule, as README.md and ARCHITECTURE.md state it: a code line is a
//! line with a token on it; blank lines, comment lines (doc comments too)
//! and test code do not count. Test code is an item under a `cfg` that
//! needs `test` or `loom` (its attributes and its whole body), and the
//! files only such an item reaches (the loom models). A file counts when
//! its crate's `lib.rs` reaches it through `mod` lines, whatever features
//! it needs.

use std::collections::BTreeMap;
use std::path::Path;

use crate::claims::Figures;

/// The library crates, by source folder.
const CRATES: &[(&str, &str)] = &[
    ("ioloop-runtime", "runtime/src"),
    ("ioloop-net", "net/src"),
    ("ioloop-callbacks", "callbacks/src"),
    ("ioloop-sim", "sim/src"),
    ("ioloop-signal", "signal/src"),
    ("ioloop-compat", "compat/src"),
    ("ioloop-macros", "macros/src"),
    ("ioloop", "src"),
];

/// The code lines and `unsafe` of every crate and file, and of the core.
pub fn figures(root: &Path, figures: &mut Figures) {
    let mut unsafe_files = 0;
    for (name, src) in CRATES {
        let files = crate_files(root, src);
        let mut total = Counts::default();
        for (file, c) in &files {
            figures.insert(format!("code lines of {file}"), c.code_lines);
            for (what, n) in [
                ("blocks", c.unsafe_blocks),
                ("fn", c.unsafe_fns),
                ("impl", c.unsafe_impls),
            ] {
                if n > 0 {
                    figures.insert(format!("unsafe {what} in {file}"), n);
                }
            }
            unsafe_files += (c.unsafe_blocks + c.unsafe_fns + c.unsafe_impls > 0) as u64;
            total.code_lines += c.code_lines;
            total.unsafe_blocks += c.unsafe_blocks;
            total.unsafe_fns += c.unsafe_fns;
            total.unsafe_impls += c.unsafe_impls;
        }
        let with_unsafe = files
            .values()
            .filter(|c| c.unsafe_blocks + c.unsafe_fns + c.unsafe_impls > 0)
            .count();
        figures.insert(format!("files with unsafe in {name}"), with_unsafe as u64);
        figures.insert(format!("code lines of {name}"), total.code_lines);
        figures.insert(format!("unsafe blocks in {name}"), total.unsafe_blocks);
        figures.insert(format!("unsafe fn in {name}"), total.unsafe_fns);
        figures.insert(format!("unsafe impl in {name}"), total.unsafe_impls);
        if *src == "runtime/src" {
            let sum = |pick: &dyn Fn(&str) -> bool| {
                files
                    .iter()
                    .filter(|(f, _)| pick(f))
                    .map(|(_, c)| c.code_lines)
                    .sum::<u64>()
            };
            let core = sum(&|f| f.starts_with("runtime/src/event_loop/"));
            let below = sum(&|f| ["runtime/src/base.rs", "runtime/src/sync/mod.rs"].contains(&f));
            figures.insert("core code lines".into(), core);
            figures.insert(
                "core code lines with base.rs and sync/mod.rs".into(),
                core + below,
            );
            figures.insert(
                "core files".into(),
                files
                    .keys()
                    .filter(|f| f.starts_with("runtime/src/event_loop/"))
                    .count() as u64,
            );
        }
    }
    figures.insert("files with unsafe".into(), unsafe_files);
}

/// A token and the lines it spans (a string literal may span several).
struct Tok {
    text: String,
    first: usize,
    last: usize,
}

/// What a file holds, test code aside.
#[derive(Default, Clone, Copy)]
pub struct Counts {
    pub code_lines: u64,
    pub unsafe_blocks: u64,
    pub unsafe_fns: u64,
    pub unsafe_impls: u64,
}

/// Every file a crate's `lib.rs` reaches through `mod` lines outside test
/// code, by path from the workspace root, with its counts.
pub fn crate_files(root: &Path, src: &str) -> BTreeMap<String, Counts> {
    let mut files = BTreeMap::new();
    visit(root, &format!("{src}/lib.rs"), &mut files);
    files
}

fn visit(root: &Path, file: &str, files: &mut BTreeMap<String, Counts>) {
    let text = std::fs::read_to_string(root.join(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
    let toks = drop_tests(lex(&text));
    files.insert(file.to_owned(), count(&toks));
    // `mod name;` (not `mod name { .. }`), with an optional `#[path]`.
    let dir = match file.rsplit_once('/') {
        Some((dir, name)) if name == "lib.rs" || name == "mod.rs" => dir.to_owned(),
        _ => file.trim_end_matches(".rs").to_owned(),
    };
    for i in 0..toks.len() {
        if toks[i].text == "mod" && toks.get(i + 2).is_some_and(|t| t.text == ";") {
            let name = &toks[i + 1].text;
            let flat = format!("{dir}/{name}.rs");
            let child = if root.join(&flat).exists() {
                flat
            } else {
                format!("{dir}/{name}/mod.rs")
            };
            visit(root, &child, files);
        }
    }
}

/// Code lines and `unsafe` blocks, functions and impls of a file's tokens.
fn count(toks: &[Tok]) -> Counts {
    let mut lines = std::collections::BTreeSet::new();
    let mut counts = Counts::default();
    for (i, tok) in toks.iter().enumerate() {
        lines.extend(tok.first..=tok.last);
        if tok.text == "unsafe" {
            match toks.get(i + 1).map(|t| t.text.as_str()) {
                Some("{") => counts.unsafe_blocks += 1,
                Some("fn") => counts.unsafe_fns += 1,
                Some("impl") => counts.unsafe_impls += 1,
                other => panic!("`unsafe` followed by {other:?}: count it"),
            }
        }
    }
    counts.code_lines = lines.len() as u64;
    counts
}

/// Identifiers, literals and single punctuation, with their lines;
/// comments dropped.
fn lex(src: &str) -> Vec<Tok> {
    let c = src.as_bytes();
    let at = |i: usize, s: &str| c.get(i..).is_some_and(|r| r.starts_with(s.as_bytes()));
    let word = |i: usize| {
        c.get(i)
            .is_some_and(|&b| b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80)
    };
    // A char literal's one char may take several bytes ('│').
    let char_len = |i: usize| {
        src.get(i..)
            .and_then(|r| r.chars().next())
            .map_or(1, char::len_utf8)
    };
    let (mut toks, mut line, mut i) = (vec![], 1, 0);
    while i < c.len() {
        let start = i;
        let mut keep = true;
        if at(i, "//") {
            i += c[i..].iter().take_while(|&&b| b != b'\n').count();
            keep = false;
        } else if at(i, "/*") {
            let mut depth = 0;
            while depth > 0 || i == start {
                depth += at(i, "/*") as i32 - at(i, "*/") as i32;
                i += if at(i, "/*") || at(i, "*/") { 2 } else { 1 };
            }
            keep = false;
        } else if (c[i] == b'r' || at(i, "br")) && !word(i.wrapping_sub(1)) && {
            let r = i + (c[i] == b'b') as usize;
            let hashes = c[r + 1..].iter().take_while(|&&b| b == b'#').count();
            at(r + 1 + hashes, "\"")
        } {
            let r = i + (c[i] == b'b') as usize;
            let hashes = c[r + 1..].iter().take_while(|&&b| b == b'#').count();
            let end = format!("\"{}", "#".repeat(hashes));
            i = r + 2 + hashes;
            while !at(i, &end) {
                i += 1;
            }
            i += end.len();
        } else if c[i] == b'"'
            || (c[i] == b'\'' && (at(i + 1, "\\") || at(i + 1 + char_len(i + 1), "'")))
        {
            i += 1;
            while c[i] != c[start] {
                i += if c[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
        } else if word(i) {
            while word(i) {
                i += 1;
            }
        } else {
            i += 1;
            keep = !c[start].is_ascii_whitespace();
        }
        let newlines = c[start..i].iter().filter(|&&b| b == b'\n').count();
        if keep {
            let text = String::from_utf8_lossy(&c[start..i]).into_owned();
            toks.push(Tok {
                text,
                first: line,
                last: line + newlines,
            });
        }
        line += newlines;
    }
    toks
}

/// The tokens without each `#[cfg(…)]` that needs `test` or `loom`, and its
/// item (its other attributes, and its body or up to its `;` or `,`).
fn drop_tests(toks: Vec<Tok>) -> Vec<Tok> {
    let is = |j: usize, s: &str| toks.get(j).is_some_and(|t| t.text == s);
    let mut skip = vec![false; toks.len()];
    let mut i = 0;
    while i < toks.len() {
        if is(i, "#") && is(i + 1, "[") && is(i + 2, "cfg") {
            let end = close(&toks, i + 1);
            let needs = (i..end)
                .any(|k| (is(k, "test") || is(k, "loom")) && !(is(k - 2, "not") && is(k - 1, "(")));
            if needs {
                let mut j = end;
                while ![";", ",", "{", "}"].contains(&toks[j].text.as_str()) {
                    j = if is(j, "(") || is(j, "[") {
                        close(&toks, j)
                    } else {
                        j + 1
                    };
                }
                let stop = if is(j, "{") {
                    close(&toks, j)
                } else {
                    j + !is(j, "}") as usize
                };
                skip[i..stop].iter_mut().for_each(|s| *s = true);
                i = stop;
                continue;
            }
        }
        i += 1;
    }
    toks.into_iter()
        .zip(skip)
        .filter(|(_, s)| !s)
        .map(|(t, _)| t)
        .collect()
}

/// The index just past the bracket that closes the one at `open`.
fn close(toks: &[Tok], open: usize) -> usize {
    let mut depth = 0;
    for (j, t) in toks.iter().enumerate().skip(open) {
        depth += ["(", "[", "{"].contains(&t.text.as_str()) as i32;
        depth -= [")", "]", "}"].contains(&t.text.as_str()) as i32;
        if depth == 0 {
            return j + 1;
        }
    }
    toks.len()
}
