//! The SVG chart: for every row, how each runtime compares with tokio's
//! current_thread runtime, drawn so that longer bars are always better.

use plotters::prelude::*;

use crate::report::{BASELINE, Row};

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
    let height = 80 + 34 * rows.len() as u32;
    let root = SVGBackend::new(path, (1100, height)).into_drawing_area();
    root.fill(&WHITE)?;
    let max = rows
        .iter()
        .flat_map(|r| others.iter().filter_map(|rt| r.advantage(rt)))
        .fold(2.0f64, f64::max)
        .min(10.0);
    let n = rows.len() as f64;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(380)
        .build_cartesian_2d(0.0..max * 1.05, 0.0..n)?;
    let labels: Vec<String> = rows
        .iter()
        .map(|r| format!("{} · {}", r.workload, r.metric))
        .collect();
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(rows.len().max(1) * 2)
        .y_label_formatter(&|y| {
            let i = (n - *y - 0.5).round();
            if (y.fract() - 0.5).abs() < 0.01 && i >= 0.0 && (i as usize) < labels.len() {
                labels[i as usize].clone()
            } else {
                String::new()
            }
        })
        .x_desc(format!(
            "relative to {BASELINE} (1.0 = same; above 1 = better)"
        ))
        .draw()?;
    let colors = [
        RGBColor(31, 119, 180),
        RGBColor(255, 127, 14),
        RGBColor(44, 160, 44),
    ];
    let band = 0.8 / others.len().max(1) as f64;
    for (k, rt) in others.iter().enumerate() {
        let color = colors[k % colors.len()];
        let bars = rows.iter().enumerate().filter_map(|(i, row)| {
            let adv = row.advantage(rt)?.min(max);
            let top = n - i as f64 - 0.1 - band * k as f64;
            Some(Rectangle::new(
                [(0.0, top - band), (adv, top)],
                color.filled(),
            ))
        });
        chart
            .draw_series(bars)?
            .label(*rt)
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 14, y + 5)], color.filled()));
    }
    chart.draw_series(std::iter::once(PathElement::new(
        vec![(1.0, 0.0), (1.0, n)],
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
