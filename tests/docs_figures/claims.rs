//! Finding a claim in a doc and reading its figures.
//!
//! A claim is a phrase of a doc with `{figure}` where the doc gives a
//! number: "the core: {core code lines} code lines". Line breaks, the
//! indentation of a list and the `//!` or `///` of a doc comment count as
//! one space, so a phrase is found however the paragraph is wrapped. A
//! number may have thousands separators ("2,156"). Every place the phrase
//! occurs is checked; a phrase that occurs nowhere is an error too, so a
//! doc rewritten around a figure takes its claim along.

use std::collections::BTreeMap;
use std::path::Path;

/// The figures, by name.
pub type Figures = BTreeMap<String, u64>;

/// What is wrong with one claim, for the failure message.
pub fn check(root: &Path, doc: &str, phrase: &str, figures: &Figures) -> Vec<String> {
    let text = words(
        &std::fs::read_to_string(root.join(doc)).unwrap_or_else(|e| panic!("{doc}: {e}")),
        doc.ends_with(".rs"),
    );
    let (literals, names) = split(phrase);
    let mut wrong = vec![];
    let mut found = 0;
    // Where the claim may start: its first words, or, if it starts with a
    // figure, every number.
    let bytes = text.as_bytes();
    let starts: Vec<usize> = if literals[0].is_empty() {
        (0..bytes.len())
            .filter(|&i| {
                bytes[i].is_ascii_digit()
                    && (i == 0 || !(bytes[i - 1].is_ascii_digit() || bytes[i - 1] == b','))
            })
            .collect()
    } else {
        text.match_indices(literals[0].as_str())
            .map(|(i, _)| i)
            .collect()
    };
    for start in starts {
        let Some(values) = read(&text[start..], &literals) else {
            continue;
        };
        found += 1;
        for (name, value) in names.iter().zip(values) {
            let right = *figures.get(name).unwrap_or_else(|| {
                panic!("{doc}: the claim \"{phrase}\" names {name:?}, which no figure is")
            });
            if value != right {
                wrong.push(format!(
                    "{doc}: \"{}\" says {} for {name:?}; the code's figure is {}",
                    fill(phrase, figures),
                    thousands(value),
                    thousands(right)
                ));
            }
        }
    }
    if found == 0 {
        wrong.push(format!(
            "{doc}: the claim \"{phrase}\" is not there (with the code's figures: \"{}\"); rewrite it in the doc or in tests/docs_figures/main.rs's table",
            fill(phrase, figures)
        ));
    }
    wrong
}

/// A doc's text with each run of white space (and, in Rust, each line's
/// comment marker) as one space.
fn words(text: &str, rust: bool) -> String {
    let lines = text.lines().map(|line| {
        let line = line.trim_start();
        if rust {
            line.trim_start_matches("//!")
                .trim_start_matches("///")
                .trim_start_matches("//")
        } else {
            line
        }
    });
    lines
        .collect::<Vec<_>>()
        .join(" ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// The literal pieces of a phrase (one more than its figures) and the
/// names of its figures.
fn split(phrase: &str) -> (Vec<String>, Vec<String>) {
    let phrase = words(phrase, false);
    let (mut literals, mut names, mut rest) = (vec![], vec![], phrase.as_str());
    while let Some(open) = rest.find('{') {
        let close = rest[open..].find('}').expect("a `{` closed") + open;
        literals.push(rest[..open].to_owned());
        names.push(rest[open + 1..close].to_owned());
        rest = &rest[close + 1..];
    }
    literals.push(rest.to_owned());
    assert!(
        literals.iter().any(|l| !l.is_empty()),
        "a claim has words: {phrase:?}"
    );
    (literals, names)
}

/// The numbers between the literal pieces, if `text` starts with them.
fn read(text: &str, literals: &[String]) -> Option<Vec<u64>> {
    let mut rest = text.strip_prefix(literals[0].as_str())?;
    let mut values = vec![];
    for literal in &literals[1..] {
        let digits = rest
            .char_indices()
            .take_while(|&(i, c)| {
                c.is_ascii_digit()
                    || (c == ','
                        && i > 0
                        && rest[i + 1..].starts_with(|d: char| d.is_ascii_digit()))
            })
            .count();
        if digits == 0 {
            return None;
        }
        values.push(rest[..digits].replace(',', "").parse().ok()?);
        rest = rest[digits..].strip_prefix(literal.as_str())?;
    }
    Some(values)
}

/// The phrase with the code's figures in it.
pub fn fill(phrase: &str, figures: &Figures) -> String {
    let mut out = String::new();
    let mut rest = phrase;
    while let Some(open) = rest.find('{') {
        let close = rest[open..].find('}').unwrap() + open;
        out.push_str(&rest[..open]);
        let name = &rest[open + 1..close];
        out.push_str(
            &figures
                .get(name)
                .map_or_else(|| format!("{{{name}?}}"), |v| thousands(*v)),
        );
        rest = &rest[close + 1..];
    }
    out + rest
}

/// 2156 as the docs write it: 2,156.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, d) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(d);
    }
    out
}
