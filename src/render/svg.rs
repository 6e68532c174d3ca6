//! The timeline as an SVG picture (a `String`; no I/O).
//!
//! One panel per clock, each with its own time axis and units; lanes for host timers, host
//! wait returns, each stream, loose phases and marks; a "covered" lane with the union, the
//! gaps (hatched) and the overlap regions (orange, with their depth); arrows from each wait
//! to the work it covers. Labels are drawn only where they fit without overlapping anything;
//! every element carries a `<title>` tooltip with its exact values.

use std::fmt::Write as _;

use super::axis::Axis;
use super::model::{Anchor, Bar, BarKind, Lane, LaneKind, TickKind, Timeline};

/// Picture options.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SvgOptions {
    /// Width in pixels (at least 600).
    pub width: u32,
}

impl Default for SvgOptions {
    fn default() -> Self {
        SvgOptions { width: 1200 }
    }
}

const LEFT: f64 = 190.0;
const RIGHT: f64 = 44.0;
const ROW_H: f64 = 24.0;
const BAR_H: f64 = 16.0;
const TICK_LANE_H: f64 = 34.0;
const FONT: &str = "DejaVu Sans, Verdana, Arial, sans-serif";

const C_PHASE: &str = "#4e79a7";
const C_SUBMIT: &str = "#e15759";
const C_COMPLETE: &str = "#59a14f";
const C_TIMER: &str = "#9c9c9c";
const C_EVENT: &str = "#222222";
const C_WAIT: &str = "#b07aa1";
const C_MARK: &str = "#9c755f";
const C_UNION: &str = "#76b7b2";
const C_OVERLAP: &str = "#f28e2b";
const C_ARROW: &str = "#6b4c9a";

/// Escapes text for XML content and attribute values.
pub fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for ch in text.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c if (c as u32) < 0x20 && c != '\n' && c != '\t' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// Estimated width in pixels of `text` at `size` px (DejaVu Sans averages about 0.6 em).
fn text_w(text: &str, size: f64) -> f64 {
    text.chars().count() as f64 * size * 0.62
}

fn wrap(text: &str, max_chars: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > max_chars {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

fn bar_colour(kind: BarKind) -> (&'static str, &'static str) {
    match kind {
        BarKind::Phase => (C_PHASE, "#ffffff"),
        BarKind::SubmissionTimer => (C_SUBMIT, "#ffffff"),
        BarKind::CompletionTimer => (C_COMPLETE, "#ffffff"),
        BarKind::Timer => (C_TIMER, "#ffffff"),
    }
}

/// Horizontal scale of one panel.
struct Scale {
    a: i64,
    b: i64,
    plot_w: f64,
}

impl Scale {
    fn x(&self, t: i64) -> f64 {
        // In f64: the difference of two extreme i64 values does not fit in i64.
        let span = (self.b as f64 - self.a as f64).max(1.0);
        LEFT + (t as f64 - self.a as f64) / span * self.plot_w
    }
}

/// Occupied horizontal ranges of one text line, to keep labels from overlapping.
#[derive(Default)]
struct Occupied(Vec<(f64, f64)>);

impl Occupied {
    fn free(&self, x0: f64, x1: f64) -> bool {
        self.0.iter().all(|&(a, b)| x1 + 3.0 <= a || x0 >= b + 3.0)
    }
    fn take(&mut self, x0: f64, x1: f64) {
        self.0.push((x0, x1));
    }
}

fn lane_height(lane: &Lane) -> f64 {
    match lane.kind {
        LaneKind::Waits | LaneKind::Marks => TICK_LANE_H,
        LaneKind::Covered => ROW_H + 16.0,
        LaneKind::Stream if !lane.ticks.is_empty() => lane.height_rows() as f64 * ROW_H + 14.0,
        _ => lane.height_rows() as f64 * ROW_H + 4.0,
    }
}

/// Short form of a label: without a parenthesized remark, the part after the last `-` or
/// space (`job-17` → `17`, `run 3 (FAILED: wrong-digest)` → `3`).
fn short(label: &str) -> Option<&str> {
    let head = label.split('(').next().unwrap_or(label).trim_end();
    head.rfind(['-', ' '])
        .map(|i| &head[i + 1..])
        .filter(|s| !s.is_empty())
}

fn draw_bar(out: &mut String, bar: &Bar, next_start: Option<f64>, s: &Scale, y: f64) {
    let x0 = s.x(bar.start);
    let x1 = s.x(bar.end).max(x0 + 1.5);
    let (fill, ink) = bar_colour(bar.kind);
    let _ = write!(
        out,
        r#"<g><title>{}</title><rect x="{x0:.2}" y="{y:.2}" width="{:.2}" height="{BAR_H}" rx="2" fill="{fill}""#,
        esc(&bar.tooltip),
        x1 - x0
    );
    out.push_str("/>");
    // A clipped end is shown as a ragged edge.
    for (clipped, x) in [(bar.clipped.0, x0), (bar.clipped.1, x1)] {
        if clipped {
            let _ = write!(
                out,
                r##"<path d="M{x:.2},{y:.2} l-3,4 l3,4 l-3,4 l3,4" fill="none" stroke="#ffffff" stroke-width="1.5"/>"##
            );
        }
    }
    let w = x1 - x0;
    let size = 11.0;
    let ty = y + BAR_H - 4.0;
    let inside = [Some(bar.label.as_str()), short(&bar.label)]
        .into_iter()
        .flatten()
        .find(|l| text_w(l, size) + 8.0 <= w);
    if let Some(label) = inside {
        let _ = write!(
            out,
            r#"<text x="{:.2}" y="{ty:.2}" font-size="{size}" fill="{ink}" text-anchor="middle">{}</text>"#,
            x0 + w / 2.0,
            esc(label)
        );
    } else {
        // Beside the bar, if the row is free up to the next bar (or the plot's end).
        let limit = next_start.unwrap_or(f64::MAX).min(s.x(s.b) + RIGHT - 4.0);
        let beside = [Some(bar.label.as_str()), short(&bar.label)]
            .into_iter()
            .flatten()
            .find(|l| x1 + 4.0 + text_w(l, size) + 4.0 <= limit);
        if let Some(label) = beside {
            let _ = write!(
                out,
                r##"<text x="{:.2}" y="{ty:.2}" font-size="{size}" fill="#333333">{}</text>"##,
                x1 + 4.0,
                esc(label)
            );
        }
    }
    out.push_str("</g>\n");
}

/// Which legend entries the picture uses, in legend order.
fn used_entries(t: &Timeline) -> [bool; 13] {
    let bars = || {
        t.panels
            .iter()
            .flat_map(|p| &p.lanes)
            .flat_map(|l| &l.rows)
            .flatten()
    };
    let ticks = || {
        t.panels
            .iter()
            .flat_map(|p| &p.lanes)
            .flat_map(|l| &l.ticks)
    };
    let covs = || {
        t.panels
            .iter()
            .flat_map(|p| &p.lanes)
            .filter_map(|l| l.coverage.as_ref())
    };
    let bar = |k: BarKind| bars().any(|b| b.kind == k);
    let tick = |k: TickKind| ticks().any(|x| x.kind == k);
    [
        bar(BarKind::Phase),
        bar(BarKind::SubmissionTimer),
        t.panels.iter().any(|p| !p.markers.is_empty()),
        bar(BarKind::CompletionTimer),
        bar(BarKind::Timer),
        tick(TickKind::Event),
        tick(TickKind::Mark),
        tick(TickKind::Wait),
        tick(TickKind::WaitBound),
        !t.arrows.is_empty(),
        covs().next().is_some(),
        covs().any(|c| !c.overlaps.is_empty()),
        covs().any(|c| !c.gaps.is_empty()),
    ]
}

fn legend(out: &mut String, timeline: &Timeline, width: f64, y: &mut f64) {
    let items: [(&str, &str, &str); 13] = [
        ("rect", C_PHASE, "phase (work)"),
        ("rect", C_SUBMIT, "submission timer"),
        ("dash", C_SUBMIT, "submission returned"),
        ("rect", C_COMPLETE, "completion timer"),
        ("rect", C_TIMER, "other timer"),
        ("tick", C_EVENT, "event"),
        ("tick", C_MARK, "mark"),
        ("diamond", C_WAIT, "host wait returned"),
        ("hollow", C_WAIT, "wait returned by (no time)"),
        ("arrow", C_ARROW, "wait → work it covers"),
        ("rect", C_UNION, "covered (union)"),
        ("rect", C_OVERLAP, "overlap (depth ≥ 2)"),
        ("hatch", "", "gap (idle)"),
    ];
    let used = used_entries(timeline);
    let mut x = 20.0;
    for (_, (shape, colour, label)) in items.into_iter().enumerate().filter(|(i, _)| used[*i]) {
        let w = 18.0 + 6.0 + text_w(label, 11.0) + 18.0;
        if x + w > width - 10.0 {
            x = 20.0;
            *y += 18.0;
        }
        let cy = *y - 4.0;
        let _ = match shape {
            "rect" => write!(
                out,
                r#"<rect x="{x:.1}" y="{:.1}" width="18" height="10" rx="2" fill="{colour}"/>"#,
                cy - 5.0
            ),
            "hatch" => write!(
                out,
                r##"<rect x="{x:.1}" y="{:.1}" width="18" height="10" fill="url(#gap)" stroke="#aaaaaa" stroke-width="0.5"/>"##,
                cy - 5.0
            ),
            "tick" => write!(
                out,
                r#"<line x1="{:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="{colour}" stroke-width="2"/>"#,
                x + 9.0,
                cy - 7.0,
                x + 9.0,
                cy + 7.0
            ),
            "diamond" => write!(
                out,
                r#"<path d="M{:.1},{:.1} l6,6 l-6,6 l-6,-6 z" fill="{colour}"/>"#,
                x + 9.0,
                cy - 6.0
            ),
            "dash" => write!(
                out,
                r#"<line x1="{:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="{colour}" stroke-width="1.2" stroke-dasharray="4,3"/>"#,
                x + 9.0,
                cy - 7.0,
                x + 9.0,
                cy + 7.0
            ),
            "hollow" => write!(
                out,
                r##"<path d="M{:.1},{:.1} l6,6 l-6,6 l-6,-6 z" fill="#ffffff" stroke="{colour}" stroke-width="1.5"/>"##,
                x + 9.0,
                cy - 6.0
            ),
            _ => write!(
                out,
                r#"<line x1="{x:.1}" y1="{cy:.1}" x2="{:.1}" y2="{cy:.1}" stroke="{colour}" stroke-width="1.5" marker-end="url(#arrow)"/>"#,
                x + 16.0
            ),
        };
        let _ = write!(
            out,
            r##"<text x="{:.1}" y="{:.1}" font-size="11" fill="#333333">{}</text>"##,
            x + 24.0,
            *y,
            esc(label)
        );
        x += w;
    }
    *y += 10.0;
}

/// Draws `timeline` as a complete SVG document.
pub fn render(timeline: &Timeline, options: &SvgOptions) -> String {
    let width = f64::from(options.width.max(600));
    let plot_w = width - LEFT - RIGHT;
    let max_ticks = (plot_w / 90.0).floor().max(2.0) as usize;
    let mut body = String::new();
    let mut y = 28.0;
    let _ = writeln!(
        body,
        r##"<text x="20" y="{y}" font-size="18" font-weight="bold" fill="#111111">{}</text>"##,
        esc(&format!("timeline: {}", timeline.title))
    );
    y += 8.0;
    if let Some(focus) = &timeline.focus {
        y += 16.0;
        let _ = writeln!(
            body,
            r##"<text x="20" y="{y}" font-size="12" fill="#444444">{}</text>"##,
            esc(&format!(
                "zoomed to `{focus}` on its clock (other clocks are shown whole)"
            ))
        );
    }
    if let Some(d) = &timeline.description {
        let max_chars = ((width - 40.0) / (12.0 * 0.6)) as usize;
        for line in wrap(d, max_chars).iter().take(6) {
            y += 16.0;
            let _ = writeln!(
                body,
                r##"<text x="20" y="{y}" font-size="12" fill="#444444">{}</text>"##,
                esc(line)
            );
        }
    }
    y += 24.0;
    legend(&mut body, timeline, width, &mut y);
    if timeline.panels.len() > 1 {
        y += 16.0;
        let _ = writeln!(
            body,
            r##"<text x="20" y="{y}" font-size="12" font-style="italic" fill="#7a3b00">{}</text>"##,
            esc(&format!(
                "{} clocks: each panel has its own time axis. Positions in different panels are not comparable; an arrow between panels shows what a wait covers, not when.",
                timeline.panels.len()
            ))
        );
    }
    y += 14.0;

    // Row centres, for the arrows: (panel, lane, row) → y.
    let mut row_y: std::collections::HashMap<(usize, usize, usize), f64> =
        std::collections::HashMap::new();
    let mut scales: Vec<Scale> = Vec::new();
    for (pi, panel) in timeline.panels.iter().enumerate() {
        let scale = Scale {
            a: panel.view.0,
            b: panel.view.1,
            plot_w,
        };
        let axis = Axis::new(panel.view, max_ticks);
        y += 22.0;
        let _ = writeln!(
            body,
            r##"<text x="12" y="{y}" font-size="14" font-weight="bold" fill="#111111">{}</text>"##,
            esc(&format!(
                "clock `{}` — domain {}, instance {}",
                panel.clock_id, panel.clock.domain, panel.clock.instance
            ))
        );
        y += 8.0;
        if !panel.markers.is_empty() {
            // A strip for the submission-return labels, above the lanes.
            let mut taken = Occupied::default();
            for m in &panel.markers {
                let x = scale.x(m.at);
                let w = text_w(&m.label, 10.0);
                let (x0, x1, anchor, tx) = if x + 3.0 + w <= width - 2.0 {
                    (x + 3.0, x + 3.0 + w, "start", x + 3.0)
                } else {
                    (x - 3.0 - w, x - 3.0, "end", x - 3.0)
                };
                if taken.free(x0, x1) {
                    taken.take(x0, x1);
                    let _ = writeln!(
                        body,
                        r#"<text x="{tx:.2}" y="{:.1}" font-size="10" fill="{C_SUBMIT}" text-anchor="{anchor}">{}</text>"#,
                        y + 10.0,
                        esc(&m.label)
                    );
                }
            }
            y += 14.0;
        }
        let top = y;
        let lanes_h: f64 = panel.lanes.iter().map(lane_height).sum();
        let _ = writeln!(
            body,
            r##"<rect x="{LEFT}" y="{top:.1}" width="{plot_w:.1}" height="{lanes_h:.1}" fill="#fbfbfb" stroke="#d0d0d0"/>"##
        );
        // Grid lines at the axis ticks.
        for &t in &axis.ticks {
            let x = scale.x(t);
            let _ = write!(
                body,
                r##"<line x1="{x:.2}" y1="{top:.1}" x2="{x:.2}" y2="{:.1}" stroke="#e6e6e6"/>"##,
                top + lanes_h
            );
        }
        body.push('\n');
        for (li, lane) in panel.lanes.iter().enumerate() {
            let h = lane_height(lane);
            if li % 2 == 1 {
                let _ = writeln!(
                    body,
                    r##"<rect x="0" y="{y:.1}" width="{LEFT}" height="{h:.1}" fill="#f3f3f3"/>"##
                );
            }
            let _ = writeln!(
                body,
                r##"<line x1="0" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#dddddd"/>"##,
                width
            );
            let _ = writeln!(
                body,
                r##"<text x="12" y="{:.1}" font-size="12" font-weight="bold" fill="#222222">{}</text><text x="12" y="{:.1}" font-size="10" fill="#666666">{}</text>"##,
                y + 14.0,
                esc(&lane.title),
                y + 26.0,
                esc(&lane.subtitle)
            );
            let tick_label_y = y + 11.0;
            let rows_top = if lane.kind == LaneKind::Stream && !lane.ticks.is_empty() {
                y + 14.0
            } else {
                y + 2.0
            };
            for (ri, row) in lane.rows.iter().enumerate() {
                let ry = rows_top + ri as f64 * ROW_H + (ROW_H - BAR_H) / 2.0;
                row_y.insert((pi, li, ri), ry + BAR_H / 2.0);
                for (bi, bar) in row.iter().enumerate() {
                    let next = row.get(bi + 1).map(|n| scale.x(n.start));
                    draw_bar(&mut body, bar, next, &scale, ry);
                }
            }
            let mut labels = Occupied::default();
            for tick in &lane.ticks {
                let x = scale.x(tick.at);
                let _ = write!(body, "<g><title>{}</title>", esc(&tick.tooltip));
                match tick.kind {
                    TickKind::Wait | TickKind::WaitBound => {
                        let cy = y + h / 2.0 + 4.0;
                        row_y.insert((pi, li, 0), cy);
                        let fill = if tick.kind == TickKind::Wait {
                            format!(r#"fill="{C_WAIT}""#)
                        } else {
                            format!(r##"fill="#ffffff" stroke="{C_WAIT}" stroke-width="1.5""##)
                        };
                        let _ = write!(
                            body,
                            r#"<path d="M{x:.2},{:.2} l6,6 l-6,6 l-6,-6 z" {fill}/>"#,
                            cy - 6.0
                        );
                    }
                    TickKind::Event | TickKind::Mark => {
                        let colour = if tick.kind == TickKind::Event {
                            C_EVENT
                        } else {
                            C_MARK
                        };
                        let _ = write!(
                            body,
                            r#"<line x1="{x:.2}" y1="{:.2}" x2="{x:.2}" y2="{:.2}" stroke="{colour}" stroke-width="2"/><path d="M{:.2},{:.2} l8,0 l-4,5 z" fill="{colour}"/>"#,
                            y + 13.0,
                            y + h - 2.0,
                            x - 4.0,
                            y + 13.0
                        );
                    }
                }
                // The label goes right of the tick (arrows arrive from the left), else left
                // of it, else centred above; never over another label.
                let w = text_w(&tick.id, 10.0);
                let spots = [
                    (x + 3.0, x + 3.0 + w, "start"),
                    (x - 3.0 - w, x - 3.0, "end"),
                    (x - w / 2.0, x + w / 2.0, "middle"),
                ];
                let anchor_x = |anchor: &str| match anchor {
                    "start" => x + 3.0,
                    "end" => x - 3.0,
                    _ => x,
                };
                if let Some(&(x0, x1, anchor)) = spots.iter().find(|(x0, x1, _)| {
                    labels.free(*x0, *x1) && *x0 >= LEFT - 4.0 && *x1 <= width - 2.0
                }) {
                    labels.take(x0, x1);
                    let _ = write!(
                        body,
                        r##"<text x="{:.2}" y="{tick_label_y:.2}" font-size="10" fill="#333333" text-anchor="{anchor}">{}</text>"##,
                        anchor_x(anchor),
                        esc(&tick.id)
                    );
                }
                body.push_str("</g>\n");
            }
            if let Some(cov) = &lane.coverage {
                let by = y + 6.0;
                for &(a, b) in &cov.union {
                    let (x0, x1) = (scale.x(a), scale.x(b));
                    let _ = write!(
                        body,
                        r#"<rect x="{x0:.2}" y="{by:.2}" width="{:.2}" height="12" fill="{C_UNION}"><title>covered {} … {}</title></rect>"#,
                        (x1 - x0).max(1.0),
                        crate::units::Nanos::new(a),
                        crate::units::Nanos::new(b)
                    );
                }
                for &(a, b) in &cov.gaps {
                    let (x0, x1) = (scale.x(a), scale.x(b));
                    let _ = write!(
                        body,
                        r##"<rect x="{x0:.2}" y="{by:.2}" width="{:.2}" height="12" fill="url(#gap)" stroke="#aaaaaa" stroke-width="0.5"><title>gap (idle) {} … {} ({})</title></rect>"##,
                        (x1 - x0).max(1.0),
                        crate::units::Nanos::new(a),
                        crate::units::Nanos::new(b),
                        crate::units::Nanos::new(b.saturating_sub(a))
                    );
                }
                for &(a, b, depth) in &cov.overlaps {
                    let (x0, x1) = (scale.x(a), scale.x(b));
                    let _ = write!(
                        body,
                        r#"<rect x="{x0:.2}" y="{by:.2}" width="{:.2}" height="12" fill="{C_OVERLAP}"><title>overlap {} … {}, depth {depth}</title></rect>"#,
                        (x1 - x0).max(1.0),
                        crate::units::Nanos::new(a),
                        crate::units::Nanos::new(b)
                    );
                    let label = format!("×{depth}");
                    if text_w(&label, 10.0) + 4.0 <= x1 - x0 {
                        let _ = write!(
                            body,
                            r##"<text x="{:.2}" y="{:.2}" font-size="10" fill="#ffffff" text-anchor="middle">{label}</text>"##,
                            (x0 + x1) / 2.0,
                            by + 10.0
                        );
                    }
                }
                let _ = writeln!(
                    body,
                    r##"<text x="{:.1}" y="{:.1}" font-size="10" fill="#555555">{}</text>"##,
                    LEFT + 4.0,
                    by + 26.0,
                    esc(&cov.summary)
                );
            }
            y += h;
        }
        // Submission returns: dashed lines across every lane of the panel.
        for m in &panel.markers {
            let x = scale.x(m.at);
            let _ = writeln!(
                body,
                r#"<line x1="{x:.2}" y1="{:.1}" x2="{x:.2}" y2="{y:.1}" stroke="{C_SUBMIT}" stroke-width="1.2" stroke-dasharray="4,3"><title>{}</title></line>"#,
                top - 14.0,
                esc(&m.tooltip)
            );
        }
        // The axis, with its unit.
        let _ = write!(
            body,
            r##"<line x1="{LEFT}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#333333"/>"##,
            LEFT + plot_w
        );
        let mut taken = Occupied::default();
        for &t in &axis.ticks {
            let x = scale.x(t);
            let label = axis.label(t);
            let w = text_w(&label, 11.0);
            let _ = write!(
                body,
                r##"<line x1="{x:.2}" y1="{y:.1}" x2="{x:.2}" y2="{:.1}" stroke="#333333"/>"##,
                y + 5.0
            );
            if taken.free(x - w / 2.0, x + w / 2.0) {
                taken.take(x - w / 2.0, x + w / 2.0);
                let _ = write!(
                    body,
                    r##"<text x="{x:.2}" y="{:.1}" font-size="11" fill="#333333" text-anchor="middle">{}</text>"##,
                    y + 17.0,
                    esc(&label)
                );
            }
        }
        let _ = writeln!(
            body,
            r##"<text x="{:.1}" y="{:.1}" font-size="11" font-style="italic" fill="#333333" text-anchor="middle">{}</text>"##,
            LEFT + plot_w / 2.0,
            y + 32.0,
            esc(&format!(
                "time on clock `{}` ({}), {}",
                panel.clock_id,
                panel.clock,
                axis.unit_caption()
            ))
        );
        y += 40.0;
        scales.push(scale);
    }

    // Arrows last, above everything else.
    let point = |a: &Anchor| -> Option<(f64, f64)> {
        let x = scales.get(a.panel)?.x(a.at);
        let y = *row_y.get(&(a.panel, a.lane, a.row))?;
        Some((x, y))
    };
    for arrow in &timeline.arrows {
        let (Some((x0, y0)), Some((x1, y1))) = (point(&arrow.from), point(&arrow.to)) else {
            continue;
        };
        // Aim a little inside the bar's end, clear of an event tick drawn at the same time.
        let x1 = x1 - 5.0;
        let dash = if arrow.cross_clock {
            r#" stroke-dasharray="5,3""#
        } else {
            ""
        };
        let (y0, y1) = if y1 > y0 {
            (y0 + 6.0, y1 - BAR_H / 2.0 - 1.0)
        } else {
            (y0 - 6.0, y1 + BAR_H / 2.0 + 1.0)
        };
        let mid = (y0 + y1) / 2.0;
        let _ = writeln!(
            body,
            r#"<path d="M{x0:.2},{y0:.2} C{x0:.2},{mid:.2} {x1:.2},{mid:.2} {x1:.2},{y1:.2}" fill="none" stroke="{C_ARROW}" stroke-width="1.3" stroke-opacity="0.8"{dash} marker-end="url(#arrow)"><title>{}</title></path>"#,
            esc(&arrow.tooltip)
        );
    }

    for note in &timeline.notes {
        y += 14.0;
        let _ = writeln!(
            body,
            r##"<text x="20" y="{y:.1}" font-size="11" fill="#666666">{}</text>"##,
            esc(&format!("note: {note}"))
        );
    }
    y += 20.0;
    let height = y.ceil();
    let mut svg = String::new();
    let _ = writeln!(
        svg,
        r##"<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{height}" viewBox="0 0 {w} {height}" font-family="{FONT}">
<defs>
<pattern id="gap" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="6" height="6" fill="#ffffff"/><line x1="0" y1="0" x2="0" y2="6" stroke="#b0b0b0" stroke-width="2"/></pattern>
<marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="{C_ARROW}"/></marker>
</defs>
<rect width="100%" height="100%" fill="#ffffff"/>"##,
        w = width
    );
    svg.push_str(&body);
    svg.push_str("</svg>\n");
    svg
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::model::{layout, LayoutOptions};

    fn svg_of(path: &str, focus: Option<&str>) -> String {
        let case = crate::case::load_case_file(std::path::Path::new(path)).unwrap();
        let t = layout(
            &case,
            &LayoutOptions {
                focus: focus.map(str::to_owned),
            },
        )
        .unwrap();
        render(&t, &SvgOptions::default())
    }

    #[test]
    fn escaping_covers_markup() {
        assert_eq!(
            esc(r#"a<b & "c">'d'"#),
            "a&lt;b &amp; &quot;c&quot;&gt;&apos;d&apos;"
        );
    }

    #[test]
    fn every_fixture_renders_to_well_formed_svg() {
        for dir in ["fixtures/cases", "fixtures/edge-controls"] {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                let Ok(case) = crate::case::load_case_file(&path) else {
                    continue; // the malformed-on-purpose controls
                };
                let t = layout(&case, &LayoutOptions::default()).unwrap();
                let svg = render(&t, &SvgOptions::default());
                let doc = roxmltree::Document::parse(&svg)
                    .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                assert_eq!(doc.root_element().tag_name().name(), "svg");
            }
        }
    }

    #[test]
    fn extreme_timestamps_draw_without_overflow() {
        // Phases at both ends of the i64 range, a zero-length phase and a mark.
        let text = r#"{"format": "worksheet-case", "version": 1,
          "clocks": [{"id": "c", "domain": "host", "instance": "x"}],
          "phases": [
            {"id": "low", "clock": "c", "start": "-9223372036854775808 ns", "end": "-9223372036854775000 ns"},
            {"id": "high", "clock": "c", "start": "9223372036854775000 ns", "end": "9223372036854775807 ns"},
            {"id": "zero", "clock": "c", "start": "0 ns", "end": "0 ns"}
          ],
          "marks": [{"id": "m", "clock": "c", "at": "0 ns"}]}"#;
        let case = crate::case::load_case_str(text, "extreme.json").unwrap();
        for focus in [None, Some("zero".to_owned()), Some("high".to_owned())] {
            let t = layout(&case, &LayoutOptions { focus }).unwrap();
            let svg = render(&t, &SvgOptions::default());
            roxmltree::Document::parse(&svg).unwrap();
            let sketch = crate::render::text::render(&t, &Default::default());
            assert!(sketch.contains("clock `c`"));
        }
    }

    #[test]
    fn the_lab_case_zoomed_to_one_run_svg_snapshot() {
        let lab = crate::lab::export::tests::fake_lab();
        let text = crate::lab::export::case_file(&lab, "executor-fake", "fake").to_json_pretty();
        let case = crate::case::load_case_str(&text, "executor-fake.json").unwrap();
        let t = layout(
            &case,
            &LayoutOptions {
                focus: Some("complete-1".into()),
            },
        )
        .unwrap();
        // The submission return is drawn as a marker across the panel.
        assert_eq!(t.panels[0].markers.len(), 1);
        let svg = render(&t, &SvgOptions::default());
        roxmltree::Document::parse(&svg).unwrap();
        insta::assert_snapshot!(svg);
    }

    #[test]
    fn three_boundaries_svg_snapshot() {
        insta::assert_snapshot!(svg_of("fixtures/cases/three-boundaries.json", None));
    }

    #[test]
    fn overlapping_phases_svg_snapshot() {
        insta::assert_snapshot!(svg_of("fixtures/cases/overlapping-phases.json", None));
    }
}
