//! The timeline as a compact terminal sketch (a `String`; no I/O). No line is longer than
//! the width asked for.
//!
//! ```text
//! clock `host` (host@boot-…): 1 column ≈ 1 ms, axis in ms after 8123.4 s
//! answers       |<complete-17: 41.2 ms--------------------------->|
//! host timers   |s==wait-17==================================|
//!               |c==complete-17==============================|
//! host waits    |                                            *|
//! stream pool   | [==job-17=================================)|
//! covered: all  | ###########################################|
//!                 all: union 41 ms, sum 41 ms, span 41 ms, …
//!               +---------+---------+---------+---------+----
//!               0         10        20        30        40
//! ```
//!
//! Answers: a known one `<id: value--->`, an unknown one `?id: unknown (reason)???`.
//! Bars: phases `[==)`, submission timers `s`, completion timers `c`, other timers `-`,
//! ranges that are not work `{--}`; `v` above the lanes marks where a submission returned;
//! ticks: events `^`, wait returns `*`, waits with no return time at the next host reading
//! (`o`), marks `|`. A lane with more bars than columns is drawn as exact density per
//! column: `=` busy all the column, `-` at least half, `.` less than half, `2`–`9` the
//! deepest overlap. Covered lanes (the engine's `intervals` answers): `#` fully covered,
//! `:` partly, `.` a gap, `2`–`9` overlap depth. Each clock gets its own axis.

use std::fmt::Write as _;

use super::axis::Axis;
use super::density;
use super::font::{fit_middle_chars, short_name};
use super::model::{Bar, BarKind, Lane, LaneKind, Panel, TickKind, Timeline};

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

fn pad(label: &str, w: usize) -> String {
    let mut s = label.to_owned();
    while s.chars().count() < w {
        s.push(' ');
    }
    s
}

/// A covered lane is named by its question; other lanes by their title.
fn title_of(lane: &Lane) -> &str {
    match (lane.kind, lane.coverage.first()) {
        (LaneKind::Covered, Some(cov)) => &cov.question,
        _ => &lane.title,
    }
}

/// Lane labels of one panel, each at most `LABEL_W − 1` columns, cut in the middle, and
/// distinct: labels that still collide are numbered.
fn lane_labels(lanes: &[Lane]) -> Vec<String> {
    let mut labels: Vec<String> = lanes
        .iter()
        .map(|l| fit_middle_chars(title_of(l), LABEL_W - 1))
        .collect();
    for k in 0..labels.len() {
        let same: Vec<usize> = (0..labels.len())
            .filter(|&j| labels[j] == labels[k])
            .collect();
        if same.len() > 1 {
            for (n, &j) in same.iter().enumerate() {
                let tag = format!("{}:", n + 1);
                let rest = fit_middle_chars(title_of(&lanes[j]), LABEL_W - 1 - tag.chars().count());
                labels[j] = format!("{tag}{rest}");
            }
        }
    }
    labels
}

/// Words wrapped to `width` columns (a word longer than that is cut in the middle).
fn wrap(text: &str, width: usize, indent: usize) -> Vec<String> {
    let room = width.saturating_sub(indent).max(8);
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        let word = fit_middle_chars(word, room);
        let len = line.chars().count();
        if len > 0 && len + 1 + word.chars().count() > room {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(&word);
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
        .into_iter()
        .map(|l| format!("{}{l}", " ".repeat(indent)))
        .collect()
}

fn bar_cells(line: &mut [char], bar: &Bar, a: usize, b: usize) {
    let cols = line.len();
    let fill = match bar.kind {
        BarKind::Phase => '=',
        BarKind::SubmissionTimer => 's',
        BarKind::CompletionTimer => 'c',
        BarKind::Timer | BarKind::Range | BarKind::Known => '-',
        BarKind::Unknown => '?',
    };
    for cell in line.iter_mut().take(b + 1).skip(a) {
        *cell = fill;
    }
    let ends = match bar.kind {
        BarKind::Phase => Some(('[', ')')),
        BarKind::Range => Some(('{', '}')),
        BarKind::Known => Some(('<', '>')),
        _ => None,
    };
    if let (Some((l, r)), true) = (ends, b > a) {
        line[a] = l;
        line[b] = r;
    }
    // The label inside the bar when it fits (whole, short, or cut in the middle).
    let room = b.saturating_sub(a + 3);
    let answer = matches!(bar.kind, BarKind::Known | BarKind::Unknown);
    let label = if bar.label.chars().count() <= room {
        bar.label.clone()
    } else if let (true, Some((_, value))) = (answer, bar.label.split_once(": ")) {
        // An answer keeps its value whole, or shows no label.
        if value.chars().count() <= room {
            value.to_owned()
        } else {
            String::new()
        }
    } else {
        let short = short_name(&bar.label).unwrap_or_else(|| bar.label.clone());
        fit_middle_chars(&short, room)
    };
    let label: Vec<char> = label.chars().collect();
    if label.len() >= 3.min(bar.label.chars().count())
        && !label.is_empty()
        && a + 2 + label.len() < cols
    {
        line[a + 1] = if bar.kind == BarKind::Unknown {
            '?'
        } else {
            ' '
        };
        for (k, ch) in label.iter().enumerate() {
            line[a + 2 + k] = *ch;
        }
        if a + 2 + label.len() < b {
            line[a + 2 + label.len()] = ' ';
        }
    }
}

fn lane_lines(lane: &Lane, view: (i64, i64), cols: usize) -> Vec<Vec<char>> {
    let mut lines: Vec<Vec<char>> = Vec::new();
    if lane.kind == LaneKind::Covered {
        for cov in &lane.coverage {
            let columns = density::columns(&cov.intervals, view, cols);
            let first = cov.union.first().map(|u| col(u.0, view, cols));
            let last = cov
                .union
                .last()
                .map(|u| col(u.1.saturating_sub(1).max(u.0), view, cols));
            let line = columns
                .iter()
                .enumerate()
                .map(|(k, c)| {
                    let inside = first.is_some_and(|f| k >= f) && last.is_some_and(|l| k <= l);
                    if c.max_depth >= 2 {
                        char::from_digit(c.max_depth.min(9), 10).unwrap_or('9')
                    } else if c.busy_ns >= c.len() {
                        '#'
                    } else if c.busy_ns > 0 {
                        ':'
                    } else if inside {
                        '.'
                    } else {
                        ' '
                    }
                })
                .collect();
            lines.push(line);
        }
    } else if lane.bars().count() > cols {
        let intervals: Vec<(i64, i64)> = lane.bars().map(|b| (b.start, b.end)).collect();
        let line = density::columns(&intervals, view, cols)
            .iter()
            .map(|c| {
                if c.max_depth >= 2 {
                    char::from_digit(c.max_depth.min(9), 10).unwrap_or('9')
                } else if c.busy_ns >= c.len() {
                    '='
                } else if c.busy_ns * 2 >= c.len() {
                    '-'
                } else if c.busy_ns > 0 {
                    '.'
                } else {
                    ' '
                }
            })
            .collect();
        lines.push(line);
    } else {
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
                bar_cells(&mut line, bar, a, b);
            }
            lines.push(line);
        }
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
    lines
}

/// Writes `text` wrapped to `width` columns, continuation lines indented by `indent`.
fn say(out: &mut String, text: &str, width: usize, indent: usize) {
    for line in wrap(text, width, indent) {
        let _ = writeln!(out, "{line}");
    }
}

/// Draws `timeline` as a terminal sketch.
pub fn render(timeline: &Timeline, options: &TextOptions) -> String {
    let width = options.width.max(40);
    let mut out = String::new();
    say(&mut out, &format!("timeline: {}", timeline.title), width, 0);
    if let Some(focus) = &timeline.focus {
        say(
            &mut out,
            &format!("zoomed to `{focus}` on its clock"),
            width,
            0,
        );
    }
    let clocks: std::collections::BTreeSet<&str> = timeline
        .panels
        .iter()
        .map(|p| p.clock_id.as_str())
        .collect();
    if clocks.len() > 1 {
        say(
            &mut out,
            &format!(
                "{} clocks, each with its own axis: columns of different clocks are not comparable",
                clocks.len()
            ),
            width,
            0,
        );
    }
    for panel in &timeline.panels {
        panel_text(&mut out, timeline, panel, width);
    }
    out.push('\n');
    say(
        &mut out,
        "key: <id: value> known answer, ?id: unknown (reason)? unknown answer; [==) phase, {--} range (not work), s submission timer, c completion timer, - other timer, v submission returned; ^ event, * wait returned, o wait returned by, | mark; dense lanes: = busy, - half or more, . less than half, 2-9 overlap depth; covered: # covered, : partly, . gap, 2-9 overlap depth",
        width,
        0,
    );
    if !timeline.unplaced.is_empty() {
        say(
            &mut out,
            "answers with no place on one clock (from eval):",
            width,
            0,
        );
        for line in &timeline.unplaced {
            say(&mut out, line, width, 2);
        }
    }
    for note in &timeline.notes {
        say(&mut out, note, width, 0);
    }
    // Names and labels come from the case: no control character reaches the terminal.
    match crate::escape::printable(&out) {
        std::borrow::Cow::Borrowed(_) => out,
        std::borrow::Cow::Owned(safe) => safe,
    }
}

/// One clock's panel: its heading, the submission line, each lane's lines and coverage
/// summaries, and the axis.
fn panel_text(out: &mut String, timeline: &Timeline, panel: &Panel, width: usize) {
    let cols = width - LABEL_W - 2;
    let view = panel.view;
    let axis = Axis::with_origin(view, (cols / 12).max(2), panel.origin);
    let per_col = view.1.saturating_sub(view.0).max(1) / i64::try_from(cols).unwrap_or(1);
    out.push('\n');
    say(
        out,
        &format!(
            "clock `{}`{} ({}): 1 column ≈ {}, axis in {}",
            panel.clock_id,
            match panel.part {
                Some((k, n)) => format!(", part {k} of {n} (empty time between parts left out)"),
                None => String::new(),
            },
            panel.clock,
            crate::units::Nanos::new(per_col.max(1)),
            axis.unit_caption()
        ),
        width,
        0,
    );
    if !panel.markers.is_empty() {
        marker_line(out, panel, cols);
    }
    let labels = lane_labels(&panel.lanes);
    for (lane, label) in panel.lanes.iter().zip(&labels) {
        for (k, line) in lane_lines(lane, view, cols).iter().enumerate() {
            let label = if k == 0 {
                pad(label, LABEL_W)
            } else {
                " ".repeat(LABEL_W)
            };
            let text: String = line.iter().collect();
            let _ = writeln!(out, "{label}|{text}|");
        }
        for cov in &lane.coverage {
            let whole = if timeline.zoomed {
                " (whole question)"
            } else {
                ""
            };
            say(
                out,
                &format!("{}{whole}: {}", cov.question, cov.summary),
                width,
                LABEL_W + 2,
            );
        }
    }
    axis_lines(out, &axis, view, cols);
}

/// `v` above the column where a submission returned, with its label where it fits.
fn marker_line(out: &mut String, panel: &Panel, cols: usize) {
    let mut line = vec![' '; cols + 1];
    let mut free_from = 0usize;
    for m in &panel.markers {
        let c = col(m.at, panel.view, cols);
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

/// The axis: a rule with `+` at each tick, then the tick labels that fit without touching,
/// after the unit.
fn axis_lines(out: &mut String, axis: &Axis, view: (i64, i64), cols: usize) {
    let mut rule = vec!['-'; cols];
    let mut axis_labels = vec![' '; cols + 1];
    let mut free_from = 0usize;
    for &t in &axis.ticks {
        let c = col(t, view, cols);
        rule[c] = '+';
        let label: Vec<char> = axis.label(t).chars().collect();
        if c >= free_from && c + label.len() <= axis_labels.len() {
            axis_labels[c..c + label.len()].copy_from_slice(&label);
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
        pad(&fit_middle_chars(axis.unit.symbol(), LABEL_W), LABEL_W),
        axis_labels.iter().collect::<String>().trim_end()
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::layout::{layout, LayoutOptions};

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
        // The question's phases are exactly stream A's: the stream lane shows the gap and
        // carries the engine's summary.
        let lane = text.lines().find(|l| l.starts_with("stream A")).unwrap();
        assert!(lane.contains(")  ") && lane.contains("  ["), "{text}");
        assert!(
            text.contains("union 80 us, sum 80 us, span 100 us, overlap 0 ns, 1 gap(s)"),
            "{text}"
        );
    }

    #[test]
    fn no_line_is_longer_than_the_width_asked_for() {
        for path in [
            "fixtures/cases/three-boundaries.json",
            "fixtures/captures/h200-lab-streams.json",
        ] {
            let case = crate::case::load_case_file(std::path::Path::new(path)).unwrap();
            let t = layout(&case, &LayoutOptions::default()).unwrap();
            for width in [40, 60, 80, 100] {
                let text = render(&t, &TextOptions { width });
                for line in text.lines() {
                    assert!(line.chars().count() <= width, "{path} at {width}: {line}");
                }
            }
        }
    }

    #[test]
    fn lane_labels_stay_distinct() {
        let lanes: Vec<Lane> = [
            "stream gpu0-s20-long-name",
            "stream gpu0-s24-long-name",
            "stream x",
        ]
        .iter()
        .map(|t| Lane::new(LaneKind::Stream, *t, ""))
        .collect();
        let labels = lane_labels(&lanes);
        assert_eq!(labels.len(), 3);
        assert!(
            labels[0] != labels[1] && labels[1] != labels[2],
            "{labels:?}"
        );
        assert!(
            labels.iter().all(|l| l.chars().count() < LABEL_W),
            "{labels:?}"
        );
    }
}
