//! The files on an echoed line's path, as `.ci/echo_path.sh` found them.
//!
//! That script runs `line_echo` under callgrind, echoes one line on a warm
//! connection, and lists the repository's files whose functions ran on
//! the loop thread for it (ARCHITECTURE.md's rule). It needs valgrind and a
//! build, so it runs in `.ci/docs_figures.sh`, which hands its list to this
//! binary as `IOLOOP_ECHO_PATH` (a file, a path per line). Without it the
//! claims about the path are not checked, and the test says so.

use std::collections::BTreeSet;
use std::path::Path;

use crate::claims::Figures;

/// The files `.ci/echo_path.sh` listed, if it ran.
pub fn files() -> Option<BTreeSet<String>> {
    let list = std::env::var_os("IOLOOP_ECHO_PATH")?;
    let text =
        std::fs::read_to_string(&list).unwrap_or_else(|e| panic!("IOLOOP_ECHO_PATH={list:?}: {e}"));
    let files: BTreeSet<String> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_owned)
        .collect();
    assert!(!files.is_empty(), "IOLOOP_ECHO_PATH={list:?} lists no file");
    Some(files)
}

pub fn figures(files: &BTreeSet<String>, figures: &mut Figures) {
    let count = |prefix: &str| files.iter().filter(|f| f.starts_with(prefix)).count() as u64;
    let library = count("runtime/src/") + count("net/src/") + count("compat/src/");
    figures.insert("files on the echo path".into(), files.len() as u64);
    figures.insert("library files on the echo path".into(), library);
    figures.insert(
        "runtime files on the echo path".into(),
        count("runtime/src/"),
    );
    figures.insert(
        "event_loop files on the echo path".into(),
        count("runtime/src/event_loop/"),
    );
    figures.insert("net files on the echo path".into(), count("net/src/"));
    figures.insert("example files on the echo path".into(), count("examples/"));
}

/// ARCHITECTURE.md's table of the files on the path (after "| files | on
/// the path |"): each row a folder and the files under it, in backticks.
pub fn check_table(root: &Path, files: &BTreeSet<String>) -> Vec<String> {
    let doc = std::fs::read_to_string(root.join("ARCHITECTURE.md")).unwrap();
    let Some(start) = doc.find("| files | on the path |") else {
        return vec!["ARCHITECTURE.md: the table \"| files | on the path |\" is not there".into()];
    };
    let mut listed = BTreeSet::new();
    let mut wrong = vec![];
    for row in doc[start..]
        .lines()
        .skip(2)
        .take_while(|l| l.starts_with('|'))
    {
        let cells: Vec<&str> = row.split('|').collect();
        let folder = cells[1].split('`').nth(1).unwrap_or_default();
        let names: Vec<&str> = cells[2].split('`').skip(1).step_by(2).collect();
        let said = cells[1]
            .split(['(', ')'])
            .nth(1)
            .and_then(|n| n.parse::<usize>().ok());
        if said != Some(names.len()) {
            wrong.push(format!(
                "ARCHITECTURE.md: the echo path's row for {folder} says ({}) and lists {}",
                said.map_or("no count".into(), |n| n.to_string()),
                names.len()
            ));
        }
        for name in names {
            listed.insert(format!("{folder}{name}"));
        }
    }
    for f in files.difference(&listed) {
        wrong.push(format!(
            "ARCHITECTURE.md: the table of the echo path leaves out {f}, which runs for the line"
        ));
    }
    for f in listed.difference(files) {
        wrong.push(format!(
            "ARCHITECTURE.md: the table of the echo path lists {f}, which does not run for the line"
        ));
    }
    wrong
}
