//! The timeline as a compact terminal sketch (a `String`; no I/O).
//!
//! ```text
//! clock `host` (host@boot-…): 1 column = 1 ms, axis in ms after 8123.4 s
//! host timers   |s==wait-17==================================|
//!               |c==complete-17==============================|
//! host waits    |                                            *|
//! stream pool   | [==job-17=================================)|
//! covered       | ###########################################|
//!               +---------+---------+---------+---------+----
//!               0         10        20        30        40
//! ```
//!
//! Bars: phases `[==)`, submission timers `s`, completion timers `c`, other timers `-`;
//! `v` above the lanes marks where a submission returned (when a panel has few of them);
//! ticks: events `^`, wait returns `*`, waits with no return time at the next host reading
//! (`o`: returned by then), marks `|`; covered lane: `#` depth 1, `2`–`9` depth,
//! `.` a gap. A bar shorter than one column is one character. Each clock gets its own axis.

use std::fmt::Write as _;

use super::axis::Axis;
use super::model::{BarKind, TickKind, Timeline};

/// Sketch options.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TextOptions {
    /// Total width in columns (at least 40).
    pub width: usize,
}

impl Default for TextOptions {
    fn default() -> Self {
        TextOptions { width: 100 }
    }
}

const LABEL_W: usize = 14;

fn col(t: i64, view: (i64, i64), cols: usize) -> usize {
    let span = (i128::from(view.1) - i128::from(view.0)).max(1);
    let c = (i128::from(t) - i128::from(view.0)) * i128::try_from(cols).unwrap_or(1) / span;
    usize::try_from(c.clamp(0, i128::try_from(cols).unwrap_or(1) - 1)).unwrap_or(0)
}

fn lane_label(title: &str) -> String {
    let mut s: String = title.chars().take(LABEL_W - 1).collect();
    while s.chars().count() < LABEL_W {
        s.push(' ');
    }
    s
}

/// Draws `timeline` as a terminal sketch.
pub fn render(timeline: &Timeline, options: &TextOptions) -> String {
    let cols = options.width.max(40) - LABEL_W - 2;
    let mut out = String::new();
    let _ = writeln!(out, "timeline: {}", timeline.title);
    if let Some(focus) = &timeline.focus {
        let _ = writeln!(out, "zoomed to `{focus}` on its clock");
    }
    if timeline.panels.len() > 1 {
        let _ = writeln!(
            out,
            "{} clocks, each with its own axis: columns of different clocks are not comparable",
            timeline.panels.len()
        );
    }
    for panel in &timeline.panels {
        let view = panel.view;
        let axis = Axis::new(view, (cols / 12).max(2));
        let per_col = view.1.saturating_sub(view.0).max(1) / i64::try_from(cols).unwrap_or(1);
        let _ = writeln!(
            out,
            "\nclock `{}` ({}): 1 column ≈ {}, axis in {}",
            panel.clock_id,
            panel.clock,
            crate::units::Nanos::new(per_col.max(1)),
            axis.unit_caption()
        );
        if !panel.markers.is_empty() {
            // `v` above the column where a submission returned, with its label.
            let mut line = vec![' '; cols + 24];
            let mut free_from = 0usize;
            for m in &panel.markers {
                let c = col(m.at, view, cols);
                let label: Vec<char> = format!("v {}", m.label).chars().collect();
                if c >= free_from && c + label.len() <= line.len() {
                    line[c..c + label.len()].copy_from_slice(&label);
                    free_from = c + label.len() + 1;
                } else {
                    line[c] = 'v';
                }
            }
            let _ = writeln!(
                out,
                "{} {}",
                " ".repeat(LABEL_W),
                line.iter().collect::<String>().trim_end()
            );
        }
        for lane in &panel.lanes {
            let mut lines: Vec<Vec<char>> = Vec::new();
            for row in &lane.rows {
                let mut line = vec![' '; cols];
                // A bar never hides the one before it: one that would start in the previous
                // bar's last column starts a column later (a sketch is one column coarse).
                let mut next_free = 0usize;
                for bar in row {
                    let (a, b) = (col(bar.start, view, cols), col(bar.end, view, cols));
                    let a = a.max(next_free).min(cols - 1);
                    let b = b.max(a);
                    next_free = b + 1;
                    let fill = match bar.kind {
                        BarKind::Phase => '=',
                        BarKind::SubmissionTimer => 's',
                        BarKind::CompletionTimer => 'c',
                        BarKind::Timer => '-',
                    };
                    for cell in line.iter_mut().take(b + 1).skip(a) {
                        *cell = fill;
                    }
                    if bar.kind == BarKind::Phase && b > a {
                        line[a] = '[';
                        line[b] = ')';
                    }
                    // The label inside the bar when it fits, after one fill character.
                    let label: Vec<char> = bar.label.chars().collect();
                    if b > a + label.len() + 3 {
                        line[a + 1] = ' ';
                        for (k, ch) in label.iter().enumerate() {
                            line[a + 2 + k] = *ch;
                        }
                        line[a + 2 + label.len()] = ' ';
                    }
                }
                lines.push(line);
            }
            if let Some(cov) = &lane.coverage {
                let mut line = vec![' '; cols];
                for &(a, b) in &cov.union {
                    for cell in line
                        .iter_mut()
                        .take(col(b, view, cols) + 1)
                        .skip(col(a, view, cols))
                    {
                        *cell = '#';
                    }
                }
                for &(a, b) in &cov.gaps {
                    let (ca, cb) = (col(a, view, cols), col(b, view, cols));
                    // Keep the boundary columns of the covered stretches.
                    for cell in line.iter_mut().take(cb).skip(ca + 1) {
                        *cell = '.';
                    }
                }
                for &(a, b, depth) in &cov.overlaps {
                    let ch = char::from_digit(depth.min(9), 10).unwrap_or('9');
                    for cell in line
                        .iter_mut()
                        .take(col(b, view, cols) + 1)
                        .skip(col(a, view, cols))
                    {
                        *cell = ch;
                    }
                }
                lines.push(line);
            }
            if !lane.ticks.is_empty() {
                if lines.is_empty() {
                    lines.push(vec![' '; cols]);
                }
                for tick in &lane.ticks {
                    let ch = match tick.kind {
                        TickKind::Event => '^',
                        TickKind::Wait => '*',
                        TickKind::WaitBound => 'o',
                        TickKind::Mark => '|',
                    };
                    lines[0][col(tick.at, view, cols)] = ch;
                }
            }
            for (k, line) in lines.iter().enumerate() {
                let label = if k == 0 {
                    lane_label(&lane.title)
                } else {
                    " ".repeat(LABEL_W)
                };
                let text: String = line.iter().collect();
                let _ = writeln!(out, "{label}|{text}|");
            }
            if let Some(cov) = &lane.coverage {
                let _ = writeln!(out, "{}  {}", " ".repeat(LABEL_W), cov.summary);
            }
        }
        // Axis.
        let mut rule = vec!['-'; cols];
        let mut labels = vec![' '; cols + 12];
        let mut free_from = 0usize;
        for &t in &axis.ticks {
            let c = col(t, view, cols);
            rule[c] = '+';
            let label: Vec<char> = axis.label(t).chars().collect();
            if c >= free_from && c + label.len() <= labels.len() {
                for (k, ch) in label.iter().enumerate() {
                    labels[c + k] = *ch;
                }
                free_from = c + label.len() + 1;
            }
        }
        let _ = writeln!(
            out,
            "{}+{}+",
            " ".repeat(LABEL_W),
            rule.iter().collect::<String>()
        );
        let _ = writeln!(
            out,
            "{} {}",
            lane_label(axis.unit.symbol()),
            labels.iter().collect::<String>().trim_end()
        );
    }
    let _ = writeln!(
        out,
        "\nkey: [==) phase  s submission timer  c completion timer  - other timer  v submission returned\n     ^ event  * wait returned  o wait returned by  | mark  covered: # depth 1, 2-9 overlap depth, . gap"
    );
    for note in &timeline.notes {
        let _ = writeln!(out, "note: {note}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::model::{layout, LayoutOptions};

    #[test]
    fn three_boundaries_sketch_snapshot() {
        let case = crate::case::load_case_file(std::path::Path::new(
            "fixtures/cases/three-boundaries.json",
        ))
        .unwrap();
        let t = layout(&case, &LayoutOptions::default()).unwrap();
        insta::assert_snapshot!(render(&t, &TextOptions::default()));
    }

    #[test]
    fn phases_with_gap_sketch_shows_the_gap() {
        let case = crate::case::load_case_file(std::path::Path::new(
            "fixtures/cases/phases-with-gap.json",
        ))
        .unwrap();
        let t = layout(&case, &LayoutOptions::default()).unwrap();
        let text = render(&t, &TextOptions::default());
        let covered = text.lines().find(|l| l.starts_with("covered")).unwrap();
        assert!(covered.contains("#.") && covered.contains(".#"), "{text}");
    }
}
