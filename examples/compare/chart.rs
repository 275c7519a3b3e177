//! The SVG chart: for every row, how each runtime compares with tokio's
//! current_thread runtime, as bars from 1.0 on a log scale: right of the
//! line is better, left is worse, whichever direction the metric runs.

use plotters::prelude::*;

use crate::report::{BASELINE, Row};

/// Ratios beyond this (either way) are drawn at the edge.
const LIMIT: f64 = 10.0;

/// Writes the chart of `rows` for `runtimes` (other than the baseline).
pub fn svg(
    path: &std::path::Path,
    rows: &[Row],
    runtimes: &[&str],
    title: &str,
) -> Result<(), Box<dyn std::error::Error>> {
    let others: Vec<&str> = runtimes
        .iter()
        .copied()
        .filter(|r| *r != BASELINE)
        .collect();
    let n = rows.len() as f64;
    let height = 90 + 30 * rows.len() as u32;
    let root = SVGBackend::new(path, (1200, height)).into_drawing_area();
    root.fill(&WHITE)?;
    let labels: Vec<String> = rows
        .iter()
        .map(|r| format!("{} · {}", r.workload, r.metric))
        .collect();
    // Row i is centred on y = n - 1 - i, an integer, so the axis can label
    // it: the first row at the top.
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(330)
        .build_cartesian_2d((1.0 / LIMIT..LIMIT).log_scale(), -0.5..n - 0.5)?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .x_labels(12)
        .y_labels(rows.len() + 1)
        .y_label_formatter(&|y| {
            let i = n - 1.0 - y.round();
            if (y - y.round()).abs() < 1e-6 && i >= 0.0 && (i as usize) < labels.len() {
                labels[i as usize].clone()
            } else {
                String::new()
            }
        })
        .x_desc(format!(
            "relative to {BASELINE}, log scale: 1 = same, right of 1 = better, left = worse"
        ))
        .draw()?;
    let colors = [
        RGBColor(31, 119, 180),
        RGBColor(255, 127, 14),
        RGBColor(44, 160, 44),
        RGBColor(148, 103, 189),
    ];
    let band = 0.8 / others.len().max(1) as f64;
    for (k, rt) in others.iter().enumerate() {
        let color = colors[k % colors.len()];
        let bars = rows.iter().enumerate().filter_map(|(i, row)| {
            let adv = row.advantage(rt)?.clamp(1.0 / LIMIT, LIMIT);
            let top = n - 1.0 - i as f64 + 0.4 - band * k as f64;
            Some(Rectangle::new(
                [(1.0, top - band), (adv, top)],
                color.filled(),
            ))
        });
        chart
            .draw_series(bars)?
            .label(*rt)
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 14, y + 5)], color.filled()));
    }
    chart.draw_series(std::iter::once(PathElement::new(
        vec![(1.0, -0.5), (1.0, n - 0.5)],
        BLACK.stroke_width(2),
    )))?;
    chart
        .configure_series_labels()
        .border_style(BLACK)
        .background_style(WHITE.mix(0.8))
        .position(SeriesLabelPosition::LowerRight)
        .draw()?;
    root.present()?;
    Ok(())
}
