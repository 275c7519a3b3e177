//! The import layers of runtime, net, callbacks, sim, signal, compat and
//! macros (issue 29): no two files import each other around a circle, and
//! no file imports from a layer above its own, so ARCHITECTURE.md's map
//! cannot drift; and between the crates, each library crate depends on the
//! workspace crates its place allows and no others (the layers built over
//! runtime and net, each in a crate of its own, above them). And issue
//! 41's line budgets: the core, runtime and net together, and the
//! simulation, each within its budget, counted as tests/docs_figures counts
//! code lines (its counter, shared); and no library crate below the
//! simulation has a feature that could hold test-only code.
//!
//! It reads the sources, not the compiler. Comments and literals are skipped,
//! and so are items under a `cfg` that needs `test` or `loom`; the files are
//! those `lib.rs` reaches through `mod` lines (loom models and the loom
//! harness are left out). An import is a path in a `use`, or a path in code
//! that starts at `crate`, `super`, `self`, a child module or a name a `use`
//! bound. It lands in the file of its longest module prefix, followed through
//! `pub use` re-exports; the `pub use` lines of `lib.rs` and `mod.rs` files
//! are the module tree's table of contents, not imports.

use std::collections::{BTreeMap, BTreeSet, HashMap};

/// tests/docs_figures' counter of code lines, shared.
#[path = "docs_figures/source.rs"]
mod source;

/// What `source.rs` fills: the figures, by name.
mod claims {
    pub type Figures = std::collections::BTreeMap<String, u64>;
}

/// The workspace root: this binary belongs to the testkit package.
const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
const CRATES: &[&str] = &[
    "runtime/src",
    "net/src",
    "callbacks/src",
    "sim/src",
    "signal/src",
    "process/src",
    "compat/src",
    "macros/src",
];

/// Each file's layer, by path prefix (the longest that matches wins). A file
/// may import from its own layer or a lower one.
const LAYERS: &str = "
    runtime/src/sync/                          0  the shim: std or loom
    runtime/src/base.rs                        1  what the loop writes and the layers above read
    runtime/src/clock.rs                       1  the clock the core and the time layer read
    runtime/src/rare.rs                        1  the rare-path hook a simulation answers
    runtime/src/joiners.rs                     1  the wakers of waiting join handles, by task
    runtime/src/event_loop/timers.rs           2  the core, bottom up: the clock and the timer
    runtime/src/event_loop/reactor.rs          2  heap, the reactor, the task cell; then the
    runtime/src/event_loop/cell.rs             2  tick, and the half other threads reach
    runtime/src/event_loop/                    3
    runtime/src/                               7  above the core: handles, tasks, I/O, time
    runtime/src/seed.rs                        7  what a seeded runtime answers (its `Pick` is
                                                  the simulation's): above the core
    runtime/src/runtime.rs                     8  the runtime that owns a loop
    runtime/src/lib.rs                         9
    net/src/syscall.rs                         0  net's four floors: system calls,
    net/src/options.rs                         0  options, addresses
    net/src/addr.rs                            0
    net/src/unix/sys.rs                        0
    net/src/unix/addr.rs                       0
    net/src/unix/ucred.rs                      0
    net/src/seam.rs                            0  where a simulated socket's calls go
    net/src/sys.rs                             0  an OS socket or a simulated one
    net/src/impls.rs                           1  sockets and their halves, and the
    net/src/halves.rs                          1  methods they share (macros),
    net/src/outbox.rs                          1  and the outbox of stream sockets
    net/src/tcp/                               1
    net/src/udp.rs                             1
    net/src/unix/                              1
    net/src/io/                                2  asyncio's streams
    net/src/lib.rs                             3
    callbacks/src/connection.rs                0  the lesson's callback layer: a
    callbacks/src/handler.rs                   1  connection's buffers, the handler
    callbacks/src/server.rs                    2  it is given, and the driver
    callbacks/src/lib.rs                       3
    sim/src/errno.rs                           0  the simulation: the kernel's errors,
    sim/src/rng.rs                             0  its chance,
    sim/src/rare.rs                            0  the rare paths,
    sim/src/seeded.rs                          1  the seeded scheduler,
    sim/src/network.rs                         1  the simulated network,
    sim/src/unix.rs                            2  the Unix sockets' names,
    sim/src/world.rs                           2  the world that fills the seams,
    sim/src/harness.rs                         3  the harness that runs it,
    sim/src/seeds.rs                           4  and seeds, replayed and checked
    sim/src/lib.rs                             5
    signal/src/kind.rs                         0  signals: which,
    signal/src/listener.rs                     1  a listener on the runtime's I/O,
    signal/src/lib.rs                          2  and ctrl_c
    process/src/fd.rs                          0  processes: any descriptor on the reactor,
    process/src/pipe.rs                        1  a child's pipes over it,
    process/src/stdio.rs                       2  the standard streams,
    process/src/child.rs                       2  the child and its exit,
    process/src/lib.rs                         3  and the crate's face
    compat/src/socket.rs                       0  the sockets read into uninitialized memory,
    compat/src/hyper/                          1  the adapters over them,
    compat/src/hyper/serve.rs                  2  hyper's server on them
    compat/src/tokio.rs                        1
    compat/src/lib.rs                          3
    macros/src/args.rs                         0
    macros/src/lib.rs                          1
";

/// Today's violations, `(from_file, to_file)`, left out of both checks. A
/// ratchet: the test fails when an entry no longer occurs or no longer breaks
/// a rule, so the list can only shrink. Don't add to it: move the code.
const ALLOWED: &[(&str, &str)] = &[];

type Tok = (String, usize);
type ModPath = Vec<String>;

/// Identifiers, `::` and single punctuation, with their lines; comments,
/// string and char literals dropped.
fn lex(src: &str) -> Vec<Tok> {
    let c = src.as_bytes();
    let at = |i: usize, s: &str| c.get(i..).is_some_and(|r| r.starts_with(s.as_bytes()));
    let word = |i: usize| {
        c.get(i)
            .is_some_and(|&b| b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80)
    };
    let (mut toks, mut line, mut i) = (vec![], 1, 0);
    while i < c.len() {
        let start = i;
        let hashes = c[i + 1..].iter().take_while(|&&b| b == b'#').count();
        if at(i, "//") {
            i += c[i..].iter().take_while(|&&b| b != b'\n').count();
        } else if at(i, "/*") {
            let mut depth = 0;
            while depth > 0 || i == start {
                depth += at(i, "/*") as i32 - at(i, "*/") as i32;
                i += if at(i, "/*") || at(i, "*/") { 2 } else { 1 };
            }
        } else if c[i] == b'r' && !word(i.wrapping_sub(1)) && at(i + 1 + hashes, "\"") {
            let end = format!("\"{}", "#".repeat(hashes));
            i += 2 + hashes;
            while !at(i, &end) {
                i += 1;
            }
            i += end.len();
        } else if c[i] == b'"' || (c[i] == b'\'' && (at(i + 1, "\\") || at(i + 2, "'"))) {
            i += 1;
            while c[i] != c[start] {
                i += if c[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
        } else if word(i) {
            while word(i) {
                i += 1;
            }
            toks.push((String::from_utf8_lossy(&c[start..i]).into_owned(), line));
        } else {
            i += if at(i, "::") { 2 } else { 1 };
            if !c[start].is_ascii_whitespace() {
                toks.push((String::from_utf8_lossy(&c[start..i]).into_owned(), line));
            }
        }
        line += c[start..i].iter().filter(|&&b| b == b'\n').count();
    }
    drop_tests(toks)
}

/// The tokens without each `#[cfg(…)]` that needs `test` or `loom`, and its item.
fn drop_tests(toks: Vec<Tok>) -> Vec<Tok> {
    let (mut kept, mut i) = (vec![], 0);
    let is = |j: usize, s: &str| toks.get(j).is_some_and(|t| t.0 == s);
    while i < toks.len() {
        if is(i, "#") && is(i + 2, "cfg") {
            let end = close(&toks, i + 1);
            let needs = (i..end)
                .any(|k| (is(k, "test") || is(k, "loom")) && !(is(k - 2, "not") && is(k - 1, "(")));
            if needs {
                // The item ends at a `;` or `,` (a field), or with its block.
                let mut j = end;
                while ![";", ",", "{", "}"].contains(&toks[j].0.as_str()) {
                    j = if is(j, "(") || is(j, "[") {
                        close(&toks, j)
                    } else {
                        j + 1
                    };
                }
                i = if is(j, "{") {
                    close(&toks, j)
                } else {
                    j + !is(j, "}") as usize
                };
                continue;
            }
        }
        kept.push(toks[i].clone());
        i += 1;
    }
    kept
}

/// The token at `j`, or nothing.
fn text(toks: &[Tok], j: usize) -> &str {
    toks.get(j).map_or("", |t| t.0.as_str())
}

/// The index just past the bracket that closes the one at `open`.
fn close(toks: &[Tok], open: usize) -> usize {
    let mut depth = 0;
    for (j, (t, _)) in toks.iter().enumerate().skip(open) {
        depth += ["(", "[", "{"].contains(&t.as_str()) as i32;
        depth -= [")", "]", "}"].contains(&t.as_str()) as i32;
        if depth == 0 {
            return j + 1;
        }
    }
    toks.len()
}

/// The paths of the use tree at `toks[*i]`, each with the name it binds.
fn use_tree(toks: &[Tok], i: &mut usize, mut path: ModPath, out: &mut Vec<(ModPath, String)>) {
    loop {
        let t = toks[*i].0.clone();
        *i += 1;
        if t == "{" {
            while toks[*i].0 != "}" {
                use_tree(toks, i, path.clone(), out);
                *i += (toks[*i].0 == ",") as usize;
            }
            return *i += 1;
        }
        if t != "self" || path.is_empty() {
            path.push(t);
        }
        if toks[*i].0 != "::" {
            let alias = (toks[*i].0 == "as").then(|| toks[*i + 1].0.clone());
            *i += 2 * alias.is_some() as usize;
            return out.push((
                path.clone(),
                alias.unwrap_or_else(|| path.last().unwrap().clone()),
            ));
        }
        *i += 1;
    }
}

/// One crate: its modules, its re-exports, and the paths its files name.
#[derive(Default)]
struct Tree {
    /// Module path to the file that defines it (inline modules included).
    modules: HashMap<ModPath, String>,
    /// `(module, name)` to the path a `pub use` gives it; `*` for a glob.
    reexports: HashMap<(ModPath, String), ModPath>,
    /// `(file, module, line, path)` of each import.
    imports: Vec<(String, ModPath, usize, ModPath)>,
}

impl Tree {
    /// Reads the module `m` of the crate at `root`, and each it declares.
    fn read(&mut self, root: &str, m: ModPath) {
        let file = match format!("{root}/{}", m.join("/")) {
            _ if m.is_empty() => format!("{root}/lib.rs"),
            f if std::path::Path::new(&format!("{ROOT}/{f}.rs")).exists() => format!("{f}.rs"),
            f => format!("{f}/mod.rs"),
        };
        let toks = lex(&std::fs::read_to_string(format!("{ROOT}/{file}")).expect(&file));
        let facade = file.ends_with("/lib.rs") || file.ends_with("/mod.rs");
        self.modules.insert(m.clone(), file.clone());
        let (mut scope, mut inline, mut depth, mut i) = (m, vec![], 0, 0);
        let mut bound: HashMap<String, ModPath> = HashMap::new();
        while i < toks.len() {
            let (t, line) = (toks[i].0.as_str(), toks[i].1);
            let child = [&scope[..], &[text(&toks, i + 1).to_string()]].concat();
            match t {
                "{" => depth += 1,
                "}" => {
                    if inline.last() == Some(&depth) {
                        inline.pop();
                        scope.pop();
                    }
                    depth -= 1;
                }
                "mod" if text(&toks, i + 2) == ";" => self.read(root, child),
                "mod" if text(&toks, i + 2) == "{" => {
                    (scope, depth, i) = (child, depth + 1, i + 3);
                    self.modules.insert(scope.clone(), file.clone());
                    inline.push(depth);
                    continue;
                }
                "use" => {
                    let public = i > 0 && ["pub", ")"].contains(&toks[i - 1].0.as_str());
                    let (mut paths, start) = (vec![], i);
                    i += 1;
                    use_tree(&toks, &mut i, vec![], &mut paths);
                    for (path, name) in paths {
                        let Some(abs) = self.absolute(&scope, &path) else {
                            continue;
                        };
                        if public {
                            // A glob is named `*` and the module it takes from.
                            let (key, target) = match abs.split_last() {
                                Some((star, glob)) if star == "*" => (format!("*{glob:?}"), glob),
                                _ => (name.clone(), &abs[..]),
                            };
                            self.reexports.insert((scope.clone(), key), target.to_vec());
                        }
                        if !(public && facade) {
                            self.imports
                                .push((file.clone(), scope.clone(), toks[start].1, path));
                        }
                        bound.insert(name, abs);
                    }
                    continue;
                }
                _ if text(&toks, i + 1) == "::" && text(&toks, i.wrapping_sub(1)) != "::" => {
                    let mut path = vec![t.to_string()];
                    while text(&toks, i + 1) == "::"
                        && text(&toks, i + 2).starts_with(char::is_alphanumeric)
                    {
                        path.push(text(&toks, i + 2).to_string());
                        i += 2;
                    }
                    if let Some(abs) = bound.get(t) {
                        path = [&["crate".to_string()], &abs[..], &path[1..]].concat();
                    }
                    self.imports.push((file.clone(), scope.clone(), line, path));
                }
                _ => {}
            }
            i += 1;
        }
    }

    /// `path`, as written in module `m`, from the crate root; `None` outside it.
    fn absolute(&self, m: &[String], path: &[String]) -> Option<ModPath> {
        let (mut base, mut rest) = (m.to_vec(), path);
        match rest[0].as_str() {
            "crate" => (base, rest) = (vec![], &rest[1..]),
            "self" => rest = &rest[1..],
            "super" => {
                while rest.first().is_some_and(|s| s == "super") {
                    (_, rest) = (base.pop(), &rest[1..]);
                }
            }
            first
                if self
                    .modules
                    .contains_key(&[m, &[first.to_string()]].concat()) => {}
            _ => return None,
        }
        Some([&base[..], rest].concat())
    }

    /// The file that defines what an absolute path names.
    fn file_of(&self, path: &[String], hops: u32) -> String {
        let path = path.strip_suffix(&["*".to_string()]).unwrap_or(path);
        let k = (0..=path.len())
            .rev()
            .find(|&k| self.modules.contains_key(&path[..k]));
        let (module, rest) = path.split_at(k.unwrap());
        if let Some(name) = rest.first().filter(|_| hops < 8) {
            // A name re-exported here: the file it comes from.
            if let Some(target) = self.reexports.get(&(module.to_vec(), name.clone())) {
                return self.file_of(&[&target[..], &rest[1..]].concat(), hops + 1);
            }
            // A glob re-export that has the name.
            let globs = self
                .reexports
                .iter()
                .filter(|((m, n), _)| m == module && n.starts_with('*'));
            for (_, glob) in globs {
                let found = self.file_of(&[&glob[..], rest].concat(), hops + 1);
                if found != self.modules[glob] {
                    return found;
                }
            }
        }
        self.modules[module].clone()
    }
}

/// A file's layer: that of the longest prefix in `LAYERS` it starts with.
fn layer(file: &str) -> Option<u32> {
    let rows = LAYERS.lines().filter_map(|row| {
        let mut cols = row.split_whitespace();
        Some((cols.next()?, cols.next()?.parse::<u32>().ok()?))
    });
    rows.filter(|(p, _)| file.starts_with(p))
        .max_by_key(|(p, _)| p.len())
        .map(|(_, l)| l)
}

/// The files `from` reaches in `graph`, by one import or more.
fn reach<'a>(graph: &BTreeMap<&'a str, BTreeSet<&'a str>>, from: &'a str) -> BTreeSet<&'a str> {
    let (mut seen, mut todo) = (BTreeSet::new(), vec![from]);
    while let Some(v) = todo.pop() {
        todo.extend(
            graph
                .get(v)
                .into_iter()
                .flatten()
                .filter(|&&w| seen.insert(w)),
        );
    }
    seen
}

#[test]
fn no_import_cycle_and_no_import_running_back_up() {
    // Every import of one file by another, with its first line and path.
    let (mut edges, mut files) = (BTreeMap::<(String, String), (usize, String)>::new(), vec![]);
    for krate in CRATES {
        let mut tree = Tree::default();
        tree.read(krate, vec![]);
        for (file, module, line, path) in &tree.imports {
            let Some(abs) = tree.absolute(module, path) else {
                continue;
            };
            let to = tree.file_of(&abs, 0);
            if &to != file {
                let at = (*line, path.join("::"));
                edges.entry((file.clone(), to)).or_insert(at);
            }
        }
        files.extend(tree.modules.into_values());
    }
    // What each file reaches, allowed imports left out.
    let mut graph: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for (a, b) in edges.keys().filter(|&(a, b)| !ALLOWED.contains(&(a, b))) {
        graph.entry(a).or_default().insert(b);
    }
    let reach = |from| reach(&graph, from);
    let reached: BTreeMap<&str, BTreeSet<&str>> = graph.keys().map(|&v| (v, reach(v))).collect();
    let mut failures: BTreeSet<String> = BTreeSet::new();
    for file in files.iter().filter(|f| layer(f).is_none()) {
        failures.insert(format!("{file} has no layer: add it to LAYERS"));
    }
    // The ratchet: each allowed import still occurs, and still breaks a rule.
    for &(a, b) in ALLOWED {
        let needed = layer(a) < layer(b) || reach(b).contains(a);
        if !edges.contains_key(&(a.to_string(), b.to_string())) || !needed {
            failures.insert(format!(
                "ALLOWED ({a}, {b}) no longer occurs or breaks no rule: take it off"
            ));
        }
    }
    // Cycles: files that reach each other (a strongly connected component).
    for (v, seen) in &reached {
        let back = |w: &&&str| reached.get(*w).is_some_and(|r| r.contains(v));
        let cycle: Vec<&str> = seen.iter().filter(back).copied().collect();
        if cycle.len() > 1 {
            failures.insert(format!("import cycle: {}", cycle.join(", ")));
        }
    }
    for ((a, b), (line, path)) in &edges {
        let (from, to) = (layer(a).unwrap_or(0), layer(b).unwrap_or(0));
        if from < to && !ALLOWED.contains(&(a, b)) {
            failures.insert(format!(
                "{a}:{line}: `{path}` imports {b} (layer {to}) into layer {from}"
            ));
        }
    }
    let failures: Vec<String> = failures.into_iter().collect();
    assert!(failures.is_empty(), "\n{}\n", failures.join("\n"));
}

/// Each library crate, by folder, with the workspace crates its
/// `[dependencies]` name: runtime and net hold the loop, the sockets and
/// their streams; each layer over them (the callback layer, the hyper
/// adapters, the simulation) is a crate of its own that depends on them
/// and on nothing beside it, so none of them can reach into another.
const CRATE_DEPS: &[(&str, &[&str])] = &[
    ("runtime", &[]),
    ("net", &["ioloop-runtime"]),
    ("callbacks", &["ioloop-net", "ioloop-runtime"]),
    ("compat", &["ioloop-net", "ioloop-runtime"]),
    ("sim", &["ioloop-net", "ioloop-runtime"]),
    ("signal", &["ioloop-runtime"]),
    // SIGCHLD, where the kernel has no pidfd: the signal crate's listener.
    ("process", &["ioloop-runtime", "ioloop-signal"]),
    ("macros", &[]),
];

#[test]
fn each_library_crate_depends_only_on_the_crates_below_it() {
    let mut wrong = vec![];
    for &(dir, allowed) in CRATE_DEPS {
        let manifest = format!("{dir}/Cargo.toml");
        let text = std::fs::read_to_string(format!("{ROOT}/{manifest}")).expect(&manifest);
        // The names in `[dependencies]` (not dev-dependencies: a doc
        // example may use the facade), up to the next section.
        let mut in_deps = false;
        let mut found = BTreeSet::new();
        for line in text.lines().map(str::trim) {
            if line.starts_with('[') {
                in_deps = line == "[dependencies]";
            } else if in_deps && line.starts_with("ioloop") {
                let name = line.split(['=', '.', ' ']).next().unwrap_or(line);
                found.insert(name.to_string());
            }
        }
        let allowed: BTreeSet<String> = allowed.iter().map(|s| s.to_string()).collect();
        if found != allowed {
            wrong.push(format!(
                "{manifest}: depends on {found:?}, its place allows {allowed:?}"
            ));
        }
    }
    assert!(wrong.is_empty(), "\n{}\n", wrong.join("\n"));
}

/// Code lines at most, by the figures `source.rs` computes: the targets
/// issue 41 set, each reached.
const BUDGETS: &[(&str, &[&str], u64, u64)] = &[
    // (what, its figures, summed; the bound checked; issue 41's target)
    (
        "the core (runtime/src/event_loop/)",
        &["core code lines"],
        2_000,
        2_000,
    ),
    (
        "ioloop-runtime and ioloop-net",
        &["code lines of ioloop-runtime", "code lines of ioloop-net"],
        8_000,
        8_000,
    ),
    (
        "the simulation (ioloop-sim)",
        &["code lines of ioloop-sim"],
        2_500,
        2_500,
    ),
];

#[test]
fn the_core_runtime_and_net_and_the_simulation_keep_to_their_line_budgets() {
    let mut figures = claims::Figures::new();
    source::figures(std::path::Path::new(ROOT), &mut figures);
    let mut over = vec![];
    for &(what, names, bound, target) in BUDGETS {
        let lines: u64 = names.iter().map(|name| figures[*name]).sum();
        println!("{what}: {lines} code lines (bound {bound}, issue 41's target {target})");
        if lines > bound {
            over.push(format!(
                "{what}: {lines} code lines, over its budget of {bound}"
            ));
        }
    }
    assert!(over.is_empty(), "\n{}\n", over.join("\n"));
}

#[test]
fn no_library_crate_below_the_simulation_has_a_feature() {
    // A feature of runtime, net or the callback layer (simulated too, by
    // tests/sim/callbacks.rs) could compile test-only code (planted bugs,
    // issue 41 retired them) into the library: bugs are planted in copies
    // outside the repo, and the simulation lives in its own crate.
    for manifest in [
        "runtime/Cargo.toml",
        "net/Cargo.toml",
        "callbacks/Cargo.toml",
    ] {
        let text = std::fs::read_to_string(format!("{ROOT}/{manifest}")).expect(manifest);
        assert!(
            !text.lines().any(|line| line.trim() == "[features]"),
            "{manifest} has features"
        );
    }
}
