//! The latest full benchmark run, told the same way everywhere: the table
//! under BENCHMARKS.md's "Results", the chart and samples beside it in
//! `docs/bench/`, and README's "How fast" all name one run.
//!
//! The harness writes the run's first line ("Run 2026-12-03 18:36 UTC,
//! full, ...") into its table, its chart and its samples; BENCHMARKS.md
//! names the commit measured ("The code measured is commit b8f7b58").

use std::path::Path;

/// What is wrong, for the failure message.
pub fn check(root: &Path) -> Vec<String> {
    let read = |f: &str| std::fs::read_to_string(root.join(f)).unwrap_or_default();
    let benchmarks = read("BENCHMARKS.md");
    let Some(results) = benchmarks.split("\n## Results\n").nth(1) else {
        return vec!["BENCHMARKS.md: no \"## Results\" section".into()];
    };
    let Some(run) = results.lines().find(|l| l.starts_with("Run ")) else {
        return vec![
            "BENCHMARKS.md: \"## Results\" names no run (\"Run <date> <time> UTC, ...\")".into(),
        ];
    };
    // The chart's title is the line up to its first `;`.
    let run = run.split(';').next().unwrap_or(run);
    let mut wrong = vec![];
    let svg = read("docs/bench/ratios.svg");
    if !svg.contains(run) {
        wrong.push(format!(
            "docs/bench/ratios.svg is not the chart of BENCHMARKS.md's run \"{run}\""
        ));
    }
    let samples = read("docs/bench/samples.json");
    if !samples.is_empty() && !samples.contains(&format!("\"header\": \"{run}")) {
        wrong.push(format!(
            "docs/bench/samples.json holds the samples of another run than BENCHMARKS.md's \"{run}\""
        ));
    }
    // README: "(2026-12-03, 18:36 UTC, at b8f7b58;"
    let mut words = run.split_whitespace().skip(1);
    let (date, time) = (words.next().unwrap_or(""), words.next().unwrap_or(""));
    let commit = results
        .split("The code measured is commit ")
        .nth(1)
        .and_then(|r| r.split(|c: char| !c.is_ascii_hexdigit()).next())
        .unwrap_or("");
    let told = format!("({date}, {time} UTC, at {commit};");
    let readme = read("README.md")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    if commit.is_empty() || !readme.contains(&told) {
        wrong.push(format!(
            "README.md: \"How fast\" does not name BENCHMARKS.md's run as \"{told}\""
        ));
    }
    wrong
}
