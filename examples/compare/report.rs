//! Turning samples into the table: medians, ranges, and ratios to tokio's
//! current_thread runtime.

use std::collections::BTreeMap;
use std::fmt::Write;

use crate::workloads::{Better, Sample};

/// The reference every ratio is taken against.
pub const BASELINE: &str = "tokio_ct";

/// One row of the table: a metric of a workload, per runtime.
pub struct Row {
    pub workload: String,
    pub metric: String,
    pub unit: String,
    pub better: Better,
    /// Runtime name → (median, min, max, runs).
    pub stats: BTreeMap<String, (f64, f64, f64, usize)>,
}

impl Row {
    /// `runtime`'s median over the baseline's.
    pub fn ratio(&self, runtime: &str) -> Option<f64> {
        let value = self.stats.get(runtime)?.0;
        let base = self.stats.get(BASELINE)?.0;
        (base > 0.0).then_some(value / base)
    }

    /// How much better than the baseline `runtime` is: above 1 is better,
    /// whichever direction the metric runs.
    pub fn advantage(&self, runtime: &str) -> Option<f64> {
        let r = self.ratio(runtime)?;
        match self.better {
            Better::Higher => Some(r),
            Better::Lower => (r > 0.0).then_some(1.0 / r),
        }
    }
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    let mid = values.len() / 2;
    if values.len() % 2 == 1 {
        values[mid]
    } else {
        (values[mid - 1] + values[mid]) / 2.0
    }
}

/// Groups samples into rows, in the order workloads first appeared.
pub fn rows(samples: &[Sample]) -> Vec<Row> {
    let mut order: Vec<(String, String)> = Vec::new();
    let mut groups: BTreeMap<(String, String), BTreeMap<String, Vec<f64>>> = BTreeMap::new();
    for s in samples {
        let key = (s.workload.clone(), s.metric.clone());
        if !order.contains(&key) {
            order.push(key.clone());
        }
        groups
            .entry(key)
            .or_default()
            .entry(s.runtime.clone())
            .or_default()
            .push(s.value);
    }
    order
        .into_iter()
        .map(|key| {
            let first = samples
                .iter()
                .find(|s| s.workload == key.0 && s.metric == key.1)
                .expect("grouped from samples");
            let stats = groups
                .remove(&key)
                .unwrap_or_default()
                .into_iter()
                .map(|(rt, mut v)| {
                    let (min, max) = v
                        .iter()
                        .fold((f64::MAX, f64::MIN), |(a, b), &x| (a.min(x), b.max(x)));
                    (rt, (median(&mut v), min, max, v.len()))
                })
                .collect();
            Row {
                workload: key.0,
                metric: key.1,
                unit: first.unit.clone(),
                better: first.better,
                stats,
            }
        })
        .collect()
}

fn fmt_value(v: f64) -> String {
    match v.abs() {
        a if a >= 100_000.0 => format!("{:.0}k", v / 1e3),
        a if a >= 1_000.0 => format!("{v:.0}"),
        a if a >= 10.0 => format!("{v:.1}"),
        _ => format!("{v:.3}"),
    }
}

/// The Markdown table: each figure as median (min–max) and the ratios.
pub fn markdown(rows: &[Row], runtimes: &[&str]) -> String {
    let mut out = String::new();
    let _ = write!(out, "| workload | metric |");
    for rt in runtimes {
        let _ = write!(out, " {rt} median (min–max) |");
    }
    for rt in runtimes.iter().filter(|rt| **rt != BASELINE) {
        let _ = write!(out, " {rt} / {BASELINE} |");
    }
    out.push('\n');
    let columns = 2 + runtimes.len() + runtimes.len() - 1;
    out.push_str(&"|---".repeat(columns));
    out.push_str("|\n");
    for row in rows {
        let arrow = if row.better == Better::Lower {
            "↓"
        } else {
            "↑"
        };
        let _ = write!(
            out,
            "| {} | {} ({}) {arrow} |",
            row.workload, row.metric, row.unit
        );
        for rt in runtimes {
            match row.stats.get(*rt) {
                Some((med, min, max, _)) => {
                    let _ = write!(
                        out,
                        " {} ({}–{}) |",
                        fmt_value(*med),
                        fmt_value(*min),
                        fmt_value(*max)
                    );
                }
                None => out.push_str(" – |"),
            }
        }
        for rt in runtimes.iter().filter(|rt| **rt != BASELINE) {
            match row.ratio(rt) {
                Some(r) => {
                    let _ = write!(out, " {r:.2} |");
                }
                None => out.push_str(" – |"),
            }
        }
        out.push('\n');
    }
    out
}
